// `healthhook purge-user` (spec §11, store/erasure.h): two users' deliveries of every event
// family (the service's documented payloads, schemas/examples/), applied by the processor;
// purging user A removes exactly A's rows from every table and none of B's, records the
// erasure, and a dry run prints the same counts and changes nothing. A's deliveries stored
// afterwards are kept. The last test fails when a table with a user column is added to the
// schema without being covered by the erasure.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "events/envelope_peek.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_body_retention.h"
#include "store/sqlite/sqlite_erasure.h"
#include "store/sqlite/sqlite_inbox.h"
#include "tests/derived/sqlite_processor.h"
#include "tests/derived/store_dump.h"
#include "tests/derived/two_users.h"
#include "tests/support/examples.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(purge_user_test)

using namespace hh;
using hh::test::TempDir;

namespace {

using PurgeRows = std::vector<std::string>;
using PurgeCounts = std::vector<std::pair<std::string, int64_t>>;
using test::kUserFetchedExamples;
using test::kUserWebhookExamples;
constexpr int64_t kPurgeBaseMs = test::kTwoUsersBaseMs;
// Deliveries of one user in the corpus (tests/derived/two_users.h).
constexpr size_t kPurgePerUser =
    std::size(kUserWebhookExamples) + std::size(kUserFetchedExamples) + test::kTwoUsersAlmostJson;

// A store with users A ("user-a", other ids "ida-…") and B ("user-b", "idb-…"), their
// deliveries interleaved, plus deliveries that name nobody (tests/derived/two_users.h), all
// applied.
void purge_build_store(const std::string& path) {
  auto db = test::open_store(path);
  int64_t clock = kPurgeBaseMs;
  const auto all = test::two_users_corpus(clock);
  test::append_deliveries(db, all);
  test::apply_inbox(db);
  // Forwards not sent yet, of both modes, as `serve` with [[forward]] blocks writes them.
  const std::vector<store::ForwardRule> rules = {
      {.destination = "backend", .mode = store::ForwardMode::changes, .events = {}},
      {.destination = "raw", .mode = store::ForwardMode::deliveries, .events = {}}};
  for (const store::ForwardRule& rule : rules) test::make_outbox_entries(db, rule, 1, INT64_MAX);
}

std::vector<std::string> purge_schema_tables(sqlite::Connection& db) {
  std::vector<std::string> tables;
  for (const auto& row : test::rows(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' "
                                           "ORDER BY name")) {
    tables.push_back(row.substr(1, row.size() - 2));
  }
  return tables;
}

// The rows of `table` as text, with what names their user joined in where the table itself
// does not (samples: the series; outcomes: the inbox row), bodies as text.
PurgeRows purge_table_rows(sqlite::Connection& db, const std::string& table) {
  if (table == "samples") {
    return test::rows(db, "SELECT s.user_id, p.* FROM samples p LEFT JOIN series s USING (series_id) "
                          "ORDER BY p.series_id, p.t_ms");
  }
  if (table == "delivery_outcomes") {
    return test::rows(db, "SELECT o.*, i.message_id, i.headers, CAST(i.body AS TEXT) FROM delivery_outcomes o "
                          "LEFT JOIN inbox i USING (seq) ORDER BY o.seq");
  }
  if (table == "outbox") {
    return test::rows(db, "SELECT o.*, i.message_id, CAST(i.body AS TEXT) FROM outbox o LEFT JOIN inbox i USING (seq) "
                          "ORDER BY o.outbox_id");
  }
  if (table == "inbox") {
    return test::rows(db, "SELECT seq, message_id, origin, received_at, event_type, headers, CAST(body AS TEXT) "
                          "FROM inbox ORDER BY seq");
  }
  return test::dump_table(db, table);
}

bool purge_names_a(const std::string& row) { return test::two_users_names_a(row); }
bool purge_names_b(const std::string& row) { return test::two_users_names_b(row); }

std::map<std::string, PurgeRows> purge_state(sqlite::Connection& db) {
  std::map<std::string, PurgeRows> state;
  for (const auto& table : purge_schema_tables(db)) {
    if (table != "erasures") state[table] = purge_table_rows(db, table);
  }
  return state;
}

// The seq a row of `table` (as purge_table_rows renders it) belongs to: the delivery it is
// about, for the tables keyed by delivery; nullopt for the others.
std::optional<int64_t> purge_row_seq(const std::string& table, const std::string& row) {
  size_t field = 0;
  if (table == "outbox") {
    field = 3;  // outbox_id, destination, kind, seq
  } else if (table != "inbox" && table != "delivery_outcomes" && table != "removed_bodies") {
    return std::nullopt;
  }
  size_t start = 0;
  for (size_t i = 0; i < field; ++i) start = row.find('|', start) + 1;
  return std::stoll(row.substr(start, row.find('|', start) - start));
}

// Removes the bodies of every applied delivery, as `[retention] body_days` does once they
// are old enough, in the same batches.
void purge_remove_every_body(sqlite::Connection& db) {
  auto retention = store::open_sqlite_body_retention(db);
  BOOST_REQUIRE_MESSAGE(retention, retention.error());
  for (int round = 0; round < 1000; ++round) {
    auto removed = (*retention)->remove_bodies(INT64_MAX, 256, kPurgeBaseMs + 90 * 86'400'000LL);
    BOOST_REQUIRE_MESSAGE(removed, removed.error());
    if (!removed->more) break;
  }
  BOOST_REQUIRE_EQUAL(test::count(db, "inbox WHERE length(body) > 0"), 0);
}

// The "  <table> <rows>" lines of purge-user's output, in order.
PurgeCounts purge_printed_counts(const std::string& output) {
  PurgeCounts counts;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("  ")) continue;
    std::istringstream fields(line);
    std::string table;
    int64_t rows = -1;
    fields >> table >> rows;
    counts.emplace_back(table, rows);
  }
  return counts;
}

std::vector<std::string> purge_count_lines(const PurgeCounts& counts) {
  std::vector<std::string> lines;
  for (const auto& [table, rows] : counts) lines.push_back(table + " " + std::to_string(rows));
  return lines;
}

}  // namespace

BOOST_AUTO_TEST_CASE(purge_user_removes_exactly_that_users_rows_everywhere_and_records_it) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  purge_build_store(path);

  std::map<std::string, PurgeRows> before;
  {
    auto db = test::open_store(path);
    before = purge_state(db);
    // Invalid: only the deliveries of each user that are not quite JSON (two_users.h).
    BOOST_TEST(test::rows(db, "SELECT message_id FROM deliveries WHERE status = 'invalid' ORDER BY message_id") ==
                   (std::vector<std::string>{"'msg-A-array'", "'msg-A-cut-short'", "'msg-A-not-utf8'",
                                             "'msg-A-trailing'", "'msg-B-array'", "'msg-B-cut-short'",
                                             "'msg-B-not-utf8'", "'msg-B-trailing'"}),
               boost::test_tools::per_element());
  }
  // Both users reach every table the erasure covers (but removed_bodies: no retention here;
  // the next test has it).
  for (std::string_view table : store::sqlite_erasure_tables()) {
    if (table == "removed_bodies") continue;
    const auto& rows = before.at(std::string(table));
    BOOST_TEST(std::count_if(rows.begin(), rows.end(), purge_names_a) > 0, "no row of A in " << table);
    BOOST_TEST(std::count_if(rows.begin(), rows.end(), purge_names_b) > 0, "no row of B in " << table);
  }

  // --dry-run: the counts of A's rows, nothing changed.
  auto dry = test::run_healthhook({"purge-user", "user-a", "--database", path, "--dry-run"});
  BOOST_TEST(dry.exit_code == 0, dry.stderr_text);
  BOOST_TEST(dry.stdout_text.starts_with("purge-user user-a: dry run, nothing changed"), dry.stdout_text);
  const PurgeCounts dry_counts = purge_printed_counts(dry.stdout_text);
  {
    auto db = test::open_store(path);
    const auto after_dry = purge_state(db);
    for (const auto& [table, rows] : before) {
      BOOST_TEST_CONTEXT("dry run, table " << table) {
        BOOST_TEST(after_dry.at(table) == rows, boost::test_tools::per_element());
      }
    }
    BOOST_TEST(test::count(db, "erasures") == 0);
  }

  const int64_t started_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto purged = test::run_healthhook({"purge-user", "user-a", "--database", path});
  BOOST_TEST(purged.exit_code == 0, purged.stderr_text);
  BOOST_TEST(purged.stdout_text.starts_with("purge-user user-a: removed"), purged.stdout_text);
  // The file is rewritten (decision 100): the space goes back, and it says so.
  BOOST_TEST(purged.stdout_text.find("space: file rewritten (VACUUM)") !=
                 std::string::npos,
             purged.stdout_text);
  const PurgeCounts counts = purge_printed_counts(purged.stdout_text);
  BOOST_REQUIRE(!counts.empty());
  BOOST_TEST(purge_count_lines(counts) == purge_count_lines(dry_counts), boost::test_tools::per_element());

  auto db = test::open_store(path);
  const auto after = purge_state(db);
  int64_t total = 0;
  for (const auto& [table, rows] : before) {
    BOOST_TEST_CONTEXT("table " << table) {
      // Exactly the rows that named A are gone; B's and nobody's are unchanged.
      PurgeRows expected;
      std::copy_if(rows.begin(), rows.end(), std::back_inserter(expected),
                   [](const std::string& row) { return !purge_names_a(row); });
      BOOST_TEST(after.at(table) == expected, boost::test_tools::per_element());
      const int64_t removed = static_cast<int64_t>(rows.size() - expected.size());
      total += removed;
      // (Named: clang 14 cannot capture a structured binding.)
      const std::string& table_name = table;
      const auto printed =
          std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == table_name; });
      if (removed > 0) BOOST_TEST((printed != counts.end()), "removed but not reported: " << table);
      if (printed != counts.end()) {
        BOOST_TEST(printed->second == removed);
        BOOST_TEST(test::value(db, "SELECT json_extract(row_counts, '$." + table + "') FROM erasures") ==
                   std::to_string(removed));
      }
    }
  }
  BOOST_TEST(counts.back().first == "total");
  BOOST_TEST(counts.back().second == total);
  BOOST_TEST(total > 100);

  // The record: who and when, counts, no health data.
  BOOST_TEST(test::rows(db, "SELECT user_id FROM erasures") == PurgeRows{"'user-a'"}, boost::test_tools::per_element());
  const int64_t erased_at = std::stoll(test::value(db, "SELECT erased_at_ms FROM erasures"));
  BOOST_TEST(erased_at >= started_ms);
  BOOST_TEST(test::value(db, "SELECT json_valid(row_counts) FROM erasures") == "1");

  // A delivery for A stored afterwards is stored and applied as usual.
  int64_t clock = kPurgeBaseMs + 10'000;
  test::append_deliveries(db, {test::two_users_webhook("msg-A-after", test::two_users_personalise(test::example_file("timeseries-steps.json"), "user-a",
                                                                     "ida-"),
                                  clock)});
  test::apply_inbox(db);
  BOOST_TEST(test::count(db, "inbox WHERE message_id = 'msg-A-after'") == 1);
  BOOST_TEST(test::value(db, "SELECT status FROM deliveries WHERE message_id = 'msg-A-after'") == "'processed'");
  BOOST_TEST(test::count(db, "samples_named WHERE user_id = 'user-a'") > 0);
  BOOST_TEST(test::count(db, "users WHERE user_id = 'user-a'") == 1);
  BOOST_TEST(test::count(db, "erasures") == 1);
}

// What the processor frees (an older version of a summary, replaced) is overwritten as it
// is freed: serve's FAST left freed overflow pages as they were, later rows reused them
// and kept their old bytes past their own ends, where the erasure cannot reach: an erased
// user's health data stayed readable in the file (black-box pass, stop 82, `grep -a`).
BOOST_AUTO_TEST_CASE(purge_user_leaves_no_byte_of_that_users_older_versions_in_the_file) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const std::string marker = "erased-user-older-version-marker";
  const auto sleep_with_note = [](const std::string& user, const std::string& summary_id, const std::string& note) {
    std::string body = test::example_file("summary-sleep.json");
    body = std::regex_replace(body, std::regex("4a29dbc7-6db3-4c83-bfac-70a20a4be1b2"), user);
    body = std::regex_replace(body, std::regex("5b1c8d0a-6f1e-4a43-9d3c-2f6c2b9e7a11"), summary_id);
    return std::regex_replace(body, std::regex("\"state\": \"confirmed\""), "\"state\": \"" + note + "\"");
  };
  {
    auto db = test::open_store(path);
    int64_t clock = kPurgeBaseMs;
    std::string older;
    for (int i = 0; i < 400; ++i) older += marker + " ";
    test::append_deliveries(db, {test::two_users_webhook("a-v1", sleep_with_note("user-a", "sleep-a", older), ++clock)});
    test::apply_inbox(db);
    BOOST_REQUIRE(test::count(db, "summaries WHERE data LIKE '%" + marker + "%'") == 1);
    test::append_deliveries(db, {test::two_users_webhook("a-v2", sleep_with_note("user-a", "sleep-a", "v2"), ++clock)});
    test::apply_inbox(db);
    BOOST_REQUIRE(test::count(db, "summaries WHERE data LIKE '%" + marker + "%'") == 0);
    // Another user's rows, of every length, take the freed pages.
    std::vector<store::NewDelivery> others;
    for (int i = 0; i < 40; ++i) {
      others.push_back(test::two_users_webhook("b-" + std::to_string(i),
                                               sleep_with_note("user-b", "sleep-b-" + std::to_string(i),
                                                               std::string(1000 + 317 * i, 'b')),
                                               ++clock));
    }
    test::append_deliveries(db, others);
    test::apply_inbox(db);
  }
  auto purged = test::run_healthhook({"purge-user", "user-a", "--database", path});
  BOOST_REQUIRE_MESSAGE(purged.exit_code == 0, purged.stderr_text);
  for (const std::string& file : std::vector<std::string>{path, path + "-wal"}) {
    if (!std::filesystem::exists(file)) continue;
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    BOOST_TEST(bytes.find(marker) == std::string::npos, file << " still holds the erased user's older summary");
  }
}

// An invalid body that is no JSON object may name several users: an array of two users'
// deliveries, an envelope cut short after its data's user_id (another user than its own).
// Its outcome names one of them; erasing either user removes it.
BOOST_AUTO_TEST_CASE(purge_user_removes_an_invalid_body_that_names_them_beside_another_user) {
  for (const std::string erased : {"user-x", "user-y"}) {
    BOOST_TEST_CONTEXT("erasing " << erased) {
      TempDir dir;
      const std::string path = dir.file("healthhook.db");
      {
        auto db = test::open_store(path);
        int64_t clock = kPurgeBaseMs;
        const std::string x = test::two_users_personalise(test::example_file("summary-sleep.json"), "user-x", "idx-");
        const std::string y = test::two_users_personalise(test::example_file("summary-sleep.json"), "user-y", "idy-");
        test::append_deliveries(
            db, {test::two_users_webhook("msg-array", "[" + x + "," + y + "]", ++clock),
                 test::two_users_webhook("msg-cut", R"({"event_type":"daily.data.sleep.created","data":{"user_id":"user-y"},"user_id":"user-x","data2":{)",
                                         ++clock)});
        test::apply_inbox(db);
        BOOST_REQUIRE(test::count(db, "deliveries WHERE status = 'invalid'") == 2);
      }
      auto purged = test::run_healthhook({"purge-user", erased, "--database", path});
      BOOST_REQUIRE_MESSAGE(purged.exit_code == 0, purged.stderr_text);
      auto db = test::open_store(path);
      BOOST_TEST(test::count(db, "inbox WHERE message_id IN ('msg-array', 'msg-cut')") == 0);
      BOOST_TEST(test::count(db, "inbox WHERE instr(CAST(body AS TEXT), '" + erased + "') > 0") == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(purge_user_refuses_bad_input_a_missing_database_and_a_locked_one) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  {
    auto db = test::open_store(path);
    int64_t clock = kPurgeBaseMs;
    test::append_deliveries(db, test::two_users_deliveries("user-a", "ida-", "A", clock));
    // A delivery may name any string: one with a blank in it is stored like any other.
    test::append_deliveries(db, test::two_users_deliveries("user b", "idb-", "B", clock));
    // And one with an escape sequence (JSON's \u001b), which purge-user shows without it.
    test::append_deliveries(db, test::two_users_deliveries("esc\\u001b[2Jx", "idc-", "C", clock));
    test::apply_inbox(db);
  }
  const int64_t inbox_rows = [&] {
    auto db = test::open_store(path);
    return test::count(db, "inbox");
  }();

  auto empty = test::run_healthhook({"purge-user", "", "--database", path});
  BOOST_TEST(empty.exit_code == 2);
  BOOST_TEST(empty.stderr_text == "healthhook purge-user: USER_ID is empty\n");
  auto spaced = test::run_healthhook({"purge-user", "user-a ", "--database", path});
  BOOST_TEST(spaced.exit_code == 2);
  BOOST_TEST(spaced.stderr_text ==
             "healthhook purge-user: USER_ID contains whitespace or a control character, and no row names it\n");
  auto too_long = test::run_healthhook({"purge-user", std::string(257, 'u'), "--database", path});
  BOOST_TEST(too_long.exit_code == 2);
  BOOST_TEST(too_long.stderr_text == "healthhook purge-user: USER_ID is longer than 256 bytes, and no row names it\n");
  // Stored under that very id, it is erased (attack, stop 76: such a user could not be).
  auto stored_spaced = test::run_healthhook({"purge-user", "user b", "--database", path, "--dry-run"});
  BOOST_TEST(stored_spaced.exit_code == 0, stored_spaced.stderr_text);
  BOOST_TEST(stored_spaced.stdout_text.find("note: no row names") == std::string::npos, stored_spaced.stdout_text);
  auto escaped = test::run_healthhook({"purge-user", "esc\x1b[2Jx", "--database", path, "--dry-run"});
  BOOST_TEST(escaped.exit_code == 0, escaped.stderr_text);
  BOOST_TEST(escaped.stdout_text.find("purge-user esc [2Jx: dry run") == 0u, escaped.stdout_text);
  BOOST_TEST(escaped.stdout_text.find('\x1b') == std::string::npos);
  // A dry run that finds nothing says so, as the real run does.
  auto nobody = test::run_healthhook({"purge-user", "USER-A", "--database", path, "--dry-run"});
  BOOST_TEST(nobody.exit_code == 0, nobody.stderr_text);
  BOOST_TEST(nobody.stdout_text.find("note: no row names USER-A (ids are matched exactly, letter case included)") !=
                 std::string::npos,
             nobody.stdout_text);
  // The real run says it removed nothing (it said "removed"), and records the request.
  auto none = test::run_healthhook({"purge-user", "USER-A", "--database", path});
  BOOST_TEST(none.exit_code == 0, none.stderr_text);
  BOOST_TEST(none.stdout_text.find("purge-user USER-A: nothing to remove, recorded in the erasures table") == 0u,
             none.stdout_text);
  BOOST_TEST(none.stdout_text.find("note: no row names USER-A") != std::string::npos, none.stdout_text);
  auto missing = test::run_healthhook({"purge-user", "user-a", "--database", dir.file("nothing.db")});
  BOOST_TEST(missing.exit_code == 2);
  BOOST_TEST(missing.stderr_text == "healthhook purge-user: database: " + dir.file("nothing.db") + " does not exist\n");
  BOOST_TEST(!std::filesystem::exists(dir.file("nothing.db")));

  {
    // A running server's processor holds the processing lock.
    auto db = test::open_store(path);
    auto serving = test::sqlite_processor(db).value();
    auto result = test::run_healthhook({"purge-user", "user-a", "--database", path});
    BOOST_TEST(result.exit_code == 1);
    BOOST_TEST(result.stderr_text == "healthhook purge-user: " + path +
                                         " is being processed by another healthhook process (a running `serve`, "
                                         "`rebuild`, `replay` or `purge-user`); stop it or let it finish first\n");
  }
  {
    // Another writer keeps the write lock past commit_deadline_ms.
    auto db = test::open_store(path);
    BOOST_REQUIRE(db.exec("BEGIN IMMEDIATE"));
    auto result = test::run_healthhook({"purge-user", "user-a", "--database", path, "--set", "commit_deadline_ms=200"});
    BOOST_TEST(result.exit_code == 1);
    BOOST_TEST(result.stderr_text == "healthhook purge-user: " + path +
                                         " is busy: another process held its write lock for 200 ms (nothing was "
                                         "removed; run purge-user again)\n");
    BOOST_REQUIRE(db.exec("ROLLBACK"));
  }
  {
    // A failure half-way (here the inbox's delete, the last) has removed nothing: an
    // erasure interrupted by kill -9 or a power loss leaves the user whole, and no record.
    auto db = test::open_store(path);
    BOOST_REQUIRE(db.exec("CREATE TRIGGER inbox_kept BEFORE DELETE ON inbox BEGIN SELECT RAISE(ABORT, 'kept'); END"));
    const int64_t samples = test::count(db, "samples");
    BOOST_REQUIRE(samples > 0);
    auto result = test::run_healthhook({"purge-user", "user-a", "--database", path});
    BOOST_TEST(result.exit_code == 1, result.stderr_text);
    BOOST_TEST(test::count(db, "samples") == samples);
    BOOST_REQUIRE(db.exec("DROP TRIGGER inbox_kept"));
  }
  auto db = test::open_store(path);
  BOOST_TEST(test::count(db, "inbox") == inbox_rows);
  BOOST_TEST(test::count(db, "erasures WHERE user_id = 'user-a'") == 0);  // (USER-A's found nothing, recorded)
  auto erased_spaced = test::run_healthhook({"purge-user", "user b", "--database", path});
  BOOST_TEST(erased_spaced.exit_code == 0, erased_spaced.stderr_text);
  BOOST_TEST(test::count(db, "users WHERE user_id = 'user b'") == 0);
  BOOST_TEST(test::count(db, "users WHERE user_id = 'user-a'") == 1);
}

// purge-user --no-vacuum (no VACUUM, decision 100): a database created before auto_vacuum =
// INCREMENTAL was set for new files keeps the freed pages for reuse, and says so; converted
// as the README says (VACUUM), it gives them back.
BOOST_AUTO_TEST_CASE(purge_user_on_an_older_database_keeps_the_space_until_it_is_converted) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const auto fill = [&](const std::string& user, const std::string& ids) {
    auto db = test::open_store(path);
    int64_t clock = kPurgeBaseMs;
    test::append_deliveries(db, test::two_users_deliveries(user, ids, "A", clock));
    test::apply_inbox(db);
  };
  {
    auto db = test::open_store(path);
    BOOST_REQUIRE(test::value(db, "PRAGMA auto_vacuum") == "2");  // new files vacuum incrementally
    BOOST_REQUIRE(db.exec("PRAGMA auto_vacuum = NONE"));
    BOOST_REQUIRE(db.exec("VACUUM"));  // now like a database of an earlier version
    BOOST_REQUIRE(test::value(db, "PRAGMA auto_vacuum") == "0");
  }
  fill("user-a", "ida-");
  auto kept = test::run_healthhook({"purge-user", "user-a", "--database", path, "--no-vacuum"});
  BOOST_TEST(kept.exit_code == 0, kept.stderr_text);
  BOOST_TEST(kept.stdout_text.find("space: freed pages kept in the file for reuse") != std::string::npos,
             kept.stdout_text);
  {
    auto db = test::open_store(path);
    BOOST_TEST(test::value(db, "PRAGMA freelist_count") != "0");
    // A's deliveries were the newest: a placeholder without id, headers, body or user keeps
    // the newest seq taken, so the next delivery cannot get a seq already applied.
    // Nor the time A's last delivery came (attack, stop 76): none is left before it, 0.
    BOOST_TEST(test::rows(db, "SELECT message_id, headers, length(body), received_at FROM inbox") ==
               PurgeRows{"' erased:" + std::to_string(kPurgePerUser) + "'|'{}'|0|0"}, boost::test_tools::per_element());
    // The README's conversion, with the server stopped.
    BOOST_REQUIRE(db.exec("PRAGMA auto_vacuum = INCREMENTAL"));
    BOOST_REQUIRE(db.exec("VACUUM"));
    BOOST_REQUIRE(test::value(db, "PRAGMA auto_vacuum") == "2");
  }
  fill("user-b", "idb-");
  {
    auto db = test::open_store(path);
    // B's deliveries came after it, and were all applied.
    BOOST_TEST(test::count(db, "deliveries WHERE seq > " + std::to_string(kPurgePerUser)) ==
               static_cast<int64_t>(kPurgePerUser));
    BOOST_TEST(test::count(db, "deliveries WHERE status = 'pending'") == 0);
  }
  auto given = test::run_healthhook({"purge-user", "user-b", "--database", path, "--no-vacuum"});
  BOOST_TEST(given.exit_code == 0, given.stderr_text);
  BOOST_TEST(given.stdout_text.find("space: freed pages returned to the file system (incremental vacuum)") !=
                 std::string::npos,
             given.stdout_text);
  auto db = test::open_store(path);
  BOOST_TEST(test::count(db, "inbox WHERE message_id NOT LIKE ' erased:%' OR length(body) > 0") == 0);
  BOOST_TEST(test::value(db, "PRAGMA freelist_count") == "0");
}

// Spec §11: erasure never depends on a body that retention may already have removed.
// Every body is gone before the purge (lab parsing jobs, removed-body records and the
// inbox rows themselves could only be found through them before the user columns), and
// still every row of A goes, from every table, and every row of B stays as it was.
BOOST_AUTO_TEST_CASE(purge_user_after_retention_removed_every_body_leaves_no_row_of_that_user) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  purge_build_store(path);
  std::set<int64_t> seqs_of_a;
  std::map<std::string, PurgeRows> before;
  {
    auto db = test::open_store(path);
    // A's deliveries, by the message ids purge_user_deliveries gave them.
    for (const auto& seq :
         test::rows(db, "SELECT seq FROM inbox WHERE message_id LIKE 'msg-A-%' OR message_id LIKE 'fetch:A:%'")) {
      seqs_of_a.insert(std::stoll(seq));
    }
    BOOST_REQUIRE_EQUAL(seqs_of_a.size(), kPurgePerUser);
    purge_remove_every_body(db);
    before = purge_state(db);
  }
  const auto is_a = [&](const std::string& table, const std::string& row) {
    const auto seq = purge_row_seq(table, row);
    return purge_names_a(row) || (seq && seqs_of_a.count(*seq) > 0);
  };
  // A reaches every table the erasure covers, the records of the removed bodies included.
  for (std::string_view table : store::sqlite_erasure_tables()) {
    const std::string name(table);
    const auto& rows = before.at(name);
    BOOST_TEST(std::count_if(rows.begin(), rows.end(), [&](const std::string& row) { return is_a(name, row); }) > 0,
               "no row of A in " << table);
  }
  BOOST_TEST(std::count_if(before.at("lab_parsing_jobs").begin(), before.at("lab_parsing_jobs").end(), purge_names_a) ==
             1);

  auto purged = test::run_healthhook({"purge-user", "user-a", "--database", path});
  BOOST_TEST(purged.exit_code == 0, purged.stderr_text);
  BOOST_TEST(purged.stdout_text.find("note: rows that name no user") == std::string::npos, purged.stdout_text);

  auto db = test::open_store(path);
  const auto after = purge_state(db);
  for (const auto& [table, rows] : before) {
    BOOST_TEST_CONTEXT("table " << table) {
      const std::string& table_name = table;  // (clang 14 cannot capture a structured binding)
      PurgeRows expected;
      std::copy_if(rows.begin(), rows.end(), std::back_inserter(expected),
                   [&](const std::string& row) { return !is_a(table_name, row); });
      BOOST_TEST(after.at(table) == expected, boost::test_tools::per_element());
      for (const auto& row : after.at(table)) BOOST_TEST(!is_a(table_name, row), "left behind: " << row);
    }
  }
  BOOST_TEST(test::count(db, "removed_bodies") > 0);  // B's records stay
}

// Erasing the user of the newest delivery leaves a placeholder at its seq with a
// removed-body record (SQLite reuses max(seq) + 1 otherwise). Retention's walk starts after
// the last removed body: it must not start after the placeholder, or the other users'
// bodies below it would never be removed.
BOOST_AUTO_TEST_CASE(retention_goes_on_removing_bodies_after_the_newest_deliverys_user_was_erased) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  purge_build_store(path);
  {
    // A third user's deliveries are the newest.
    auto db = test::open_store(path);
    int64_t clock = kPurgeBaseMs + 86'400'000;
    test::append_deliveries(db, test::two_users_deliveries("user-c", "idc-", "C", clock));
    test::apply_inbox(db);
    BOOST_REQUIRE(test::count(db, "removed_bodies") == 0);
  }
  auto purged = test::run_healthhook({"purge-user", "user-c", "--database", path});
  BOOST_REQUIRE_MESSAGE(purged.exit_code == 0, purged.stderr_text);
  auto db = test::open_store(path);
  BOOST_REQUIRE(test::count(db, "inbox WHERE message_id LIKE ' erased:%'") == 1);
  BOOST_REQUIRE(test::count(db, "inbox WHERE length(body) > 0") > 0);
  purge_remove_every_body(db);  // fails while a body is left
  BOOST_TEST(test::count(db, "removed_bodies") == test::count(db, "inbox"));
}

// Migration 009 on a populated store of version 8: every user column is filled from the
// bodies still there, and for deliveries whose body retention had removed, from the rows
// they wrote; what nothing names is counted, logged and printed by purge-user, which then
// erases all the rest of the user's rows.
BOOST_AUTO_TEST_CASE(migration_009_fills_the_user_columns_of_an_existing_store) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  purge_build_store(path);
  std::map<std::string, PurgeRows> truth;
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"delivery_outcomes", "SELECT seq, user_id FROM delivery_outcomes ORDER BY seq"},
      {"lab_parsing_jobs", "SELECT id, user_id FROM lab_parsing_jobs ORDER BY id"},
      {"changes", "SELECT change_id, user_id FROM changes ORDER BY change_id"},
      {"jobs", "SELECT job_id, user_id FROM jobs ORDER BY job_id"},
      {"workout_streams", "SELECT workout_id, user_id FROM workout_streams ORDER BY workout_id"},
      {"outbox", "SELECT outbox_id, user_id FROM outbox ORDER BY outbox_id"}};
  std::string parsing_job_seq;
  {
    auto db = test::open_store(path);
    // The first half of the deliveries had their bodies removed by retention; and of A's lab
    // parsing job nothing else is left that could name the user (no change-feed row).
    auto retention = store::open_sqlite_body_retention(db);
    BOOST_REQUIRE(retention);
    BOOST_REQUIRE((*retention)->remove_bodies(INT64_MAX, 39, kPurgeBaseMs + 1000));
    BOOST_REQUIRE_EQUAL(test::count(db, "removed_bodies"), 39);
    parsing_job_seq = test::value(db, "SELECT seq FROM lab_parsing_jobs WHERE id LIKE 'ida-%'");
    BOOST_REQUIRE(test::count(db, "removed_bodies WHERE seq = " + parsing_job_seq) == 1);
    BOOST_REQUIRE(db.exec("DELETE FROM changes WHERE seq = " + parsing_job_seq));
    for (const auto& [table, sql] : columns) truth[table] = test::rows(db, sql);
    // Today's processor names a user in every row that holds one's data.
    for (const char* table : {"lab_parsing_jobs", "jobs", "workout_streams"}) {
      for (const auto& row : truth.at(table)) BOOST_TEST(row.find("|NULL") == std::string::npos, table << ": " << row);
    }
    test::strip_user_columns(db);
  }

  // Any command that opens the store migrates it; a dry run of purge-user says what is left.
  auto dry = test::run_healthhook({"purge-user", "user-a", "--database", path, "--dry-run"});
  BOOST_TEST(dry.exit_code == 0, dry.stderr_text);
  BOOST_TEST(dry.stderr_text.find("\"rows_without_user\"") != std::string::npos, dry.stderr_text);
  BOOST_TEST(dry.stdout_text.find("note: rows that name no user") != std::string::npos, dry.stdout_text);

  auto db = test::open_store(path);
  BOOST_TEST(test::value(db, "PRAGMA user_version") == std::to_string(store::migrations().size()));
  const auto removed = test::rows(db, "SELECT seq FROM removed_bodies");
  for (const auto& [table, sql] : columns) {
    const auto filled = test::rows(db, sql);
    const auto& expected = truth.at(table);
    BOOST_REQUIRE_EQUAL(filled.size(), expected.size());
    for (size_t i = 0; i < filled.size(); ++i) {
      BOOST_TEST_CONTEXT(table << " " << expected[i]) {
        // A row is filled with its user, or left empty where nothing that is left names one.
        BOOST_TEST((filled[i] == expected[i] || filled[i].ends_with("|NULL")), filled[i]);
      }
    }
  }
  // Where the body was there, the delivery's user is read from it (but from the almost-JSON
  // ones, which SQL's JSON functions cannot read: purge-user reads their bodies itself).
  for (const auto& row : truth.at("delivery_outcomes")) {
    const std::string seq = row.substr(0, row.find('|'));
    if (std::find(removed.begin(), removed.end(), seq) != removed.end()) continue;
    const std::string message_id = test::value(db, "SELECT message_id FROM inbox WHERE seq = " + seq);
    if (message_id.ends_with("-not-utf8'") || message_id.ends_with("-trailing'") ||
        message_id.ends_with("-cut-short'") || message_id.ends_with("-array'")) {
      continue;
    }
    BOOST_TEST(test::value(db, "SELECT user_id FROM delivery_outcomes WHERE seq = " + seq) ==
               row.substr(row.find('|') + 1));
  }
  BOOST_TEST(test::value(db, "SELECT user_id FROM lab_parsing_jobs WHERE seq = " + parsing_job_seq) == "NULL");
  BOOST_TEST(test::value(db, "SELECT user_id FROM removed_bodies WHERE seq = " + parsing_job_seq) == "NULL");
  // The view counts exactly the rows left empty.
  const int64_t empty_jobs = test::count(db, "lab_parsing_jobs WHERE user_id IS NULL");
  BOOST_TEST(empty_jobs >= 1);  // A's at least (of B's too, nothing may be left that names B)
  BOOST_TEST(test::value(db, "SELECT unattributed FROM unattributed_rows WHERE table_name = 'lab_parsing_jobs'") ==
             std::to_string(empty_jobs));
  BOOST_TEST(test::value(db, "SELECT coalesce(sum(unattributed), 0) FROM unattributed_rows WHERE table_name = 'inbox'") ==
             std::to_string(test::count(db, "delivery_outcomes WHERE user_id IS NULL AND status = 'processed' "
                                            "AND family <> 'fetched_providers' AND seq IN (SELECT seq FROM removed_bodies)")));

  // purge-user now erases everything of A but the row nothing names, and says so.
  auto purged = test::run_healthhook({"purge-user", "user-a", "--database", path});
  BOOST_TEST(purged.exit_code == 0, purged.stderr_text);
  BOOST_TEST(purged.stdout_text.find("note: rows that name no user") != std::string::npos, purged.stdout_text);
  BOOST_TEST(test::count(db, "lab_parsing_jobs WHERE id LIKE 'ida-%'") == 1);
  for (const char* table : {"summaries", "series", "connections", "devices", "lab_orders", "lab_appointments",
                            "lab_results", "backfills", "users", "jobs", "changes", "outbox", "delivery_outcomes",
                            "removed_bodies"}) {
    BOOST_TEST(test::count(db, std::string(table) + " WHERE user_id = 'user-a'") == 0, table);
  }
  BOOST_TEST(test::count(db, "inbox WHERE (message_id LIKE 'msg-A-%' OR message_id LIKE 'fetch:A:%') "
                             "AND seq NOT IN (SELECT seq FROM removed_bodies)") == 0);
  BOOST_TEST(test::count(db, "summaries WHERE user_id = 'user-b'") > 0);
}

// A table added to the schema must be covered by the erasure (store/sqlite/sqlite_erasure.cpp)
// when it has a user column, or be listed here as naming nobody, saying why.
BOOST_AUTO_TEST_CASE(every_table_with_a_user_column_is_covered_by_the_erasure) {
  TempDir dir;
  auto db = test::open_store(dir.file("fresh.db"));
  const auto covered = store::sqlite_erasure_tables();
  const auto is_covered = [&](const std::string& table) {
    return std::find(covered.begin(), covered.end(), table) != covered.end();
  };
  // Tables that hold no row of any one user.
  const std::vector<std::string> names_nobody = {
      "processor_state",  // the processor's cursor
      "providers",        // the service's provider list
      "erasures",         // the record of erasures keeps the id by design (migration 006 says why)
      "outbox_dropped",   // forwarding's record of dropped entries: seq ranges and counts, no user (see below)
      "forward_pauses",   // which destinations an operator paused, and when
      "forward_positions",  // how far each destination's entries are made: a seq
      "retention_walk",     // where body retention's walk stands: a seq
  };
  const auto tables = purge_schema_tables(db);
  BOOST_TEST(tables.size() > 15u);
  for (const auto& table : tables) {
    BOOST_TEST_CONTEXT("table " << table) {
      bool has_user_column = false;
      for (const auto& column : test::rows(db, "SELECT name FROM pragma_table_info('" + table + "')")) {
        if (column.find("user_id") != std::string::npos) has_user_column = true;
      }
      const bool exempt = std::find(names_nobody.begin(), names_nobody.end(), table) != names_nobody.end();
      if (has_user_column && table != "erasures") BOOST_TEST(is_covered(table), "not erased: " << table);
      BOOST_TEST((is_covered(table) || exempt), "neither erased nor listed as naming nobody: " << table);
    }
  }
  for (std::string_view table : covered) {
    BOOST_TEST((std::find(tables.begin(), tables.end(), std::string(table)) != tables.end()),
               "erasure names a table the schema does not have: " << table);
  }
}

BOOST_AUTO_TEST_SUITE_END()  // purge_user_test
