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
#include <sstream>

#include "events/envelope_peek.h"
#include "store/sqlite/sqlite_erasure.h"
#include "store/sqlite/outbox/outbox_writer.h"
#include "store/sqlite/sqlite_inbox.h"
#include "tests/derived/sqlite_processor.h"
#include "tests/derived/store_dump.h"
#include "tests/support/examples.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(purge_user_test)

using namespace hh;
using hh::test::TempDir;

namespace {

using PurgeRows = std::vector<std::string>;
using PurgeCounts = std::vector<std::pair<std::string, int64_t>>;

// The users of the examples (each file names one of them).
const std::string kExampleUsers[] = {"4a29dbc7-6db3-4c83-bfac-70a20a4be1b2", "1449752e-4b3c-4e2b-9f0e-5a7c6d8e9f10",
                                     "e9e072e8-0b39-4e5a-a3b2-9a1c0f6b2d44", "bf6222fb-5a3c-4d1e-9f2b-7c8d9e0f1a2b"};

// Webhook examples that name a user (every family: summaries, timeseries, streams,
// backfills, connections, devices, lab events, hypnogram, unknown events).
const char* const kUserWebhookExamples[] = {
    "connection-created-old-source.json", "connection-created.json",   "connection-error.json",
    "continuous-query.json",              "device.json",               "historical-backfill-without-is-final.json",
    "historical-backfill.json",           "hypnogram.json",            "lab-order.json",
    "lab-appointment.json",               "lab-parsing-job-completed.json", "lab-result-critical.json",
    "new-resource-unknown-shape.json",    "summary-activity-old-source.json", "summary-activity.json",
    "summary-body.json",                  "summary-electrocardiogram.json", "summary-meal.json",
    "summary-menstrual-cycle.json",       "summary-profile.json",      "summary-sleep-cycle.json",
    "summary-sleep.json",                 "summary-workouts.json",     "timeseries-blood-pressure.json",
    "timeseries-cholesterol.json",        "timeseries-extra-fields.json", "timeseries-glucose.json",
    "timeseries-heartrate.json",          "timeseries-steps-old-envelope.json", "timeseries-steps-old-source.json",
    "timeseries-steps.json",              "workout-stream.json"};

// Fetched examples (body + context) and the event type the fetcher stores them with.
const std::pair<const char*, const char*> kUserFetchedExamples[] = {
    {"fetched-stream", "fetch.workout_stream"},
    {"fetched-summaries-page", "fetch.summaries.sleep"},
    {"fetched-meals-page", "fetch.summaries.meal"},
    {"fetched-profile", "fetch.summary.profile"},
    {"fetched-timeseries-page", "fetch.timeseries.heartrate"},
    {"fetched-workouts-page", "fetch.workouts_for_streams"}};

constexpr int64_t kPurgeBaseMs = 1717236000000;

// The example as user `user`'s: every user id of the examples becomes `user`, every other
// UUID (summary, device, order, workout ids…) gets the prefix `id_prefix`, so the two
// users' rows have different keys.
std::string purge_personalise(const std::string& text, const std::string& user, const std::string& id_prefix) {
  static const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), uuid), end; it != end; ++it) {
    out.append(last, text.cbegin() + it->position());
    const std::string found = it->str();
    const bool is_user = std::find(std::begin(kExampleUsers), std::end(kExampleUsers), found) != std::end(kExampleUsers);
    out += is_user ? user : id_prefix + found;
    last = text.cbegin() + it->position() + it->length();
  }
  out.append(last, text.cend());
  return out;
}

store::NewDelivery purge_webhook(const std::string& message_id, const std::string& body, int64_t received_at) {
  store::NewDelivery d;
  d.message_id = message_id;
  d.received_at_ms = received_at;
  d.webhook_timestamp = received_at / 1000;
  d.event_type = events::peek_event_type(body);
  d.headers_json = R"({"svix-id":")" + message_id + R"(","svix-signature":"v1,test"})";
  d.body = body;
  return d;
}

store::NewDelivery purge_fetched(const std::string& message_id, const std::string& event_type,
                                 const std::string& context, const std::string& body, int64_t received_at) {
  store::NewDelivery d;
  d.message_id = message_id;
  d.origin = store::Origin::fetch;
  d.received_at_ms = received_at;
  d.event_type = event_type;
  d.headers_json = context;
  d.body = body;
  return d;
}

// Every user example as `user`'s, message ids "msg-<tag>-…" (which name no user).
std::vector<store::NewDelivery> purge_user_deliveries(const std::string& user, const std::string& id_prefix,
                                                      const std::string& tag, int64_t& clock) {
  std::vector<store::NewDelivery> out;
  for (const char* name : kUserWebhookExamples) {
    out.push_back(purge_webhook("msg-" + tag + "-" + name,
                                purge_personalise(test::example_file(name), user, id_prefix), ++clock));
  }
  for (const auto& [name, event_type] : kUserFetchedExamples) {
    const std::string base(name);
    out.push_back(purge_fetched("fetch:" + tag + ":" + base, event_type,
                                purge_personalise(test::example_file(base + ".context.json"), user, id_prefix),
                                purge_personalise(test::example_file(base + ".body.json"), user, id_prefix),
                                ++clock));
  }
  return out;
}

// A store with users A ("user-a", other ids "ida-…") and B ("user-b", "idb-…"), their
// deliveries interleaved, plus deliveries that name nobody (ping, an unknown event without
// a user, the provider list), all applied.
void purge_build_store(const std::string& path) {
  auto db = test::open_store(path);
  int64_t clock = kPurgeBaseMs;
  auto a = purge_user_deliveries("user-a", "ida-", "A", clock);
  auto b = purge_user_deliveries("user-b", "idb-", "B", clock);
  std::vector<store::NewDelivery> all;
  for (size_t i = 0; i < a.size(); ++i) {
    all.push_back(a[i]);
    all.push_back(b[i]);
  }
  all.push_back(purge_webhook("msg-ping", test::example_file("ping.json"), ++clock));
  all.push_back(purge_webhook("msg-unknown", test::example_file("unknown-event.json"), ++clock));
  all.push_back(purge_fetched("fetch:providers:1", "fetch.providers", test::example_file("fetched-providers.context.json"),
                              test::example_file("fetched-providers.body.json"), ++clock));
  test::append_deliveries(db, all);
  test::apply_inbox(db);
  // Forwards not sent yet, of both modes, as `serve` with [[forward]] blocks writes them.
  const std::vector<store::ForwardRule> rules = {
      {.destination = "backend", .mode = store::ForwardMode::changes, .events = {}},
      {.destination = "raw", .mode = store::ForwardMode::deliveries, .events = {}}};
  auto changes = store::OutboxWriter::create(db, rules, store::ForwardMode::changes);
  auto deliveries = store::OutboxWriter::create(db, rules, store::ForwardMode::deliveries);
  BOOST_REQUIRE(changes && deliveries);
  BOOST_REQUIRE(changes->changes(0));
  BOOST_REQUIRE(deliveries->deliveries(0, std::stoll(test::value(db, "SELECT max(seq) FROM inbox"))));
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

bool purge_names_a(const std::string& row) {
  return row.find("user-a") != std::string::npos || row.find("ida-") != std::string::npos;
}
bool purge_names_b(const std::string& row) {
  return row.find("user-b") != std::string::npos || row.find("idb-") != std::string::npos;
}

std::map<std::string, PurgeRows> purge_state(sqlite::Connection& db) {
  std::map<std::string, PurgeRows> state;
  for (const auto& table : purge_schema_tables(db)) {
    if (table != "erasures") state[table] = purge_table_rows(db, table);
  }
  return state;
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
    BOOST_TEST(test::count(db, "deliveries WHERE status = 'invalid'") == 0,
               test::rows(db, "SELECT message_id, error FROM deliveries WHERE status = 'invalid'").size());
  }
  // Both users reach every table the erasure covers.
  for (std::string_view table : store::sqlite_erasure_tables()) {
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
  // A new database vacuums incrementally: the space goes back, and it says so.
  BOOST_TEST(purged.stdout_text.find("space: freed pages returned to the file system (incremental vacuum)") !=
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
  test::append_deliveries(db, {purge_webhook("msg-A-after", purge_personalise(test::example_file("timeseries-steps.json"), "user-a",
                                                                     "ida-"),
                                  clock)});
  test::apply_inbox(db);
  BOOST_TEST(test::count(db, "inbox WHERE message_id = 'msg-A-after'") == 1);
  BOOST_TEST(test::value(db, "SELECT status FROM deliveries WHERE message_id = 'msg-A-after'") == "'processed'");
  BOOST_TEST(test::count(db, "samples_named WHERE user_id = 'user-a'") > 0);
  BOOST_TEST(test::count(db, "users WHERE user_id = 'user-a'") == 1);
  BOOST_TEST(test::count(db, "erasures") == 1);
}

BOOST_AUTO_TEST_CASE(purge_user_refuses_bad_input_a_missing_database_and_a_locked_one) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  {
    auto db = test::open_store(path);
    int64_t clock = kPurgeBaseMs;
    test::append_deliveries(db, purge_user_deliveries("user-a", "ida-", "A", clock));
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
  BOOST_TEST(spaced.stderr_text == "healthhook purge-user: USER_ID contains whitespace or a control character\n");
  auto too_long = test::run_healthhook({"purge-user", std::string(257, 'u'), "--database", path});
  BOOST_TEST(too_long.exit_code == 2);
  BOOST_TEST(too_long.stderr_text == "healthhook purge-user: USER_ID is longer than 256 bytes\n");
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
                                         "`rebuild` or `replay`); stop it first\n");
  }
  {
    // Another writer keeps the write lock past commit_deadline_ms.
    auto db = test::open_store(path);
    BOOST_REQUIRE(db.exec("BEGIN IMMEDIATE"));
    auto result = test::run_healthhook({"purge-user", "user-a", "--database", path, "--set", "commit_deadline_ms=200"});
    BOOST_TEST(result.exit_code == 1);
    BOOST_TEST(result.stderr_text == "healthhook purge-user: " + path +
                                         " is busy: another process held its write lock for 200 ms (run purge-user "
                                         "again; what was already removed stays removed)\n");
    BOOST_REQUIRE(db.exec("ROLLBACK"));
  }
  auto db = test::open_store(path);
  BOOST_TEST(test::count(db, "inbox") == inbox_rows);
  BOOST_TEST(test::count(db, "erasures") == 0);
}

// A database created before auto_vacuum = INCREMENTAL was set for new files keeps the freed
// pages for reuse, and says so; converted as the README says (VACUUM), it gives them back.
BOOST_AUTO_TEST_CASE(purge_user_on_an_older_database_keeps_the_space_until_it_is_converted) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const auto fill = [&](const std::string& user, const std::string& ids) {
    auto db = test::open_store(path);
    int64_t clock = kPurgeBaseMs;
    test::append_deliveries(db, purge_user_deliveries(user, ids, "A", clock));
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
  auto kept = test::run_healthhook({"purge-user", "user-a", "--database", path});
  BOOST_TEST(kept.exit_code == 0, kept.stderr_text);
  BOOST_TEST(kept.stdout_text.find("space: freed pages kept in the file for reuse") != std::string::npos,
             kept.stdout_text);
  {
    auto db = test::open_store(path);
    BOOST_TEST(test::value(db, "PRAGMA freelist_count") != "0");
    // The README's conversion, with the server stopped.
    BOOST_REQUIRE(db.exec("PRAGMA auto_vacuum = INCREMENTAL"));
    BOOST_REQUIRE(db.exec("VACUUM"));
    BOOST_REQUIRE(test::value(db, "PRAGMA auto_vacuum") == "2");
  }
  fill("user-b", "idb-");
  auto given = test::run_healthhook({"purge-user", "user-b", "--database", path});
  BOOST_TEST(given.exit_code == 0, given.stderr_text);
  BOOST_TEST(given.stdout_text.find("space: freed pages returned to the file system (incremental vacuum)") !=
                 std::string::npos,
             given.stdout_text);
  auto db = test::open_store(path);
  BOOST_TEST(test::count(db, "inbox") == 0);
  BOOST_TEST(test::value(db, "PRAGMA freelist_count") == "0");
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
      "removed_bodies",   // retention's record (seq, hash, size): the body that named a user is gone
      "outbox_dropped",   // forwarding's record of dropped entries: ranges of seq and counts
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
