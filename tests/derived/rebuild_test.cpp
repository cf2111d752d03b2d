// Rebuild equals live processing: a shuffled corpus of every family, ingested through the
// InboxWriter with the processor as its background work (steps interleaved with ingest
// commits), against reset_derived + run_until_caught_up, and against `healthhook rebuild`
// run as a process. Table by table, every column; jobs excluded (operational state).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "processor/processor.h"
#include "store/sqlite/database.h"
#include "store/sqlite/derived/derived_tables.h"
#include "store/sqlite/sqlite_processing_store.h"
#include "store/sqlite/migrations.h"
#include "store/inbox_writer.h"
#include "store/sqlite/sqlite_inbox.h"
#include "tests/derived/corpus.h"
#include "tests/derived/sqlite_processor.h"
#include "tests/derived/store_dump.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(rebuild_test)

using namespace hh;
using hh::test::TempDir;
using State = std::map<std::string, std::vector<std::string>>;

namespace {

constexpr size_t kCorpusSize = 5000;

void check_equal(const State& actual, const State& expected) {
  BOOST_TEST(actual.size() == expected.size());
  for (const auto& [table, rows] : expected) {
    BOOST_TEST_CONTEXT("table " << table) {
      BOOST_TEST(actual.at(table).size() == rows.size());
      BOOST_TEST(actual.at(table) == rows, boost::test_tools::per_element());
    }
  }
}

// Submits `corpus` in chunks of random size, each waited for, while the processor runs
// between the writer's commits; returns when everything is applied.
void ingest_live(const std::string& path, const std::vector<store::NewDelivery>& corpus, std::mt19937& rng) {
  auto db = test::open_store(path);
  auto inbox = store::SqliteInbox::create(db).value();
  auto processor = test::sqlite_processor(db, {.max_rows_per_step = 400, .max_deliveries_per_step = 25}).value();
  store::InboxWriter writer(inbox, {});
  writer.add_background(processor.get());
  writer.start();

  std::mutex mutex;
  std::condition_variable cv;
  size_t completed = 0, stored = 0;
  size_t next = 0;
  while (next < corpus.size()) {
    const size_t chunk = std::min(corpus.size() - next, size_t{1} + rng() % 120);
    for (size_t i = 0; i < chunk; ++i, ++next) {
      auto admitted = writer.submit(corpus[next], [&](const store::AppendOutcome& outcome) {
        std::lock_guard lock(mutex);
        ++completed;
        if (outcome.kind == store::AppendOutcome::Kind::stored) ++stored;
        cv.notify_all();
      });
      BOOST_REQUIRE(admitted == store::InboxWriter::Admission::queued);
    }
    std::unique_lock lock(mutex);
    BOOST_REQUIRE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return completed == next; }));
  }
  BOOST_REQUIRE(stored == corpus.size());
  // Everything is stored; the processor catches up between (idle) wake-ups.
  for (int i = 0; i < 6000 && processor->applied_seq() < static_cast<int64_t>(corpus.size()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  writer.stop();
  BOOST_REQUIRE_EQUAL(processor->applied_seq(), static_cast<int64_t>(corpus.size()));
  BOOST_TEST(processor->stats().steps > 20u);  // really interleaved, not one catch-up at the end
}

}  // namespace

BOOST_AUTO_TEST_CASE(rebuild_of_a_live_processed_inbox_gives_identical_tables) {
  test::CorpusCounts counts;
  auto corpus = test::make_corpus(kCorpusSize, 2024, &counts);
  std::mt19937 rng(99);
  std::shuffle(corpus.begin(), corpus.end(), rng);

  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  ingest_live(path, corpus, rng);

  State live;
  {
    auto db = test::open_store(path);
    live = test::dump_derived_state(db);
    // The corpus reaches every table and every status.
    for (std::string_view table : store::schema::derived_tables()) {
      BOOST_TEST(!live.at(std::string(table)).empty(), "empty: " << table);
    }
    BOOST_TEST(test::count(db, "deliveries WHERE status = 'invalid'") == static_cast<int64_t>(counts.invalid));
    BOOST_TEST(test::count(db, "deliveries WHERE status = 'ignored'") == static_cast<int64_t>(counts.ignored));
    BOOST_TEST(test::count(db, "deliveries WHERE status = 'unknown'") == static_cast<int64_t>(counts.unknown));
    BOOST_TEST(test::count(db, "deliveries WHERE status = 'pending'") == 0);
    BOOST_TEST(test::count(db, "jobs WHERE kind = 'workout_stream'") > 0);
    BOOST_TEST(test::count(db, "jobs WHERE kind = 'backfill'") > 0);
    BOOST_TEST(test::count(db, "changes WHERE op = 'update'") > 0);

    // In process: reset, then catch up from the inbox.
    const auto jobs = test::dump_table(db, "jobs");
    auto p = test::sqlite_processor(db).value();
    BOOST_REQUIRE(store::reset_derived(db, {}));
    int64_t last_progress = -1;
    auto done = p->run_until_caught_up([&](int64_t applied, int64_t last) {
      BOOST_TEST(last == static_cast<int64_t>(kCorpusSize));
      BOOST_TEST(applied >= last_progress);
      last_progress = applied;
    });
    BOOST_REQUIRE_MESSAGE(done, done.error());
    BOOST_TEST(last_progress == static_cast<int64_t>(kCorpusSize));
    check_equal(test::dump_derived_state(db), live);
    BOOST_TEST(test::dump_table(db, "jobs") == jobs, boost::test_tools::per_element());
  }

  // As a process, the way an operator runs it.
  auto result = test::run_healthhook({"rebuild", "--database", path});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text.starts_with("rebuild: 5000 deliveries ("), result.stdout_text);
  auto db = test::open_store(path);
  check_equal(test::dump_derived_state(db), live);
}

BOOST_AUTO_TEST_CASE(rebuild_refuses_while_another_process_processes_the_database) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto db = test::open_store(path);
  auto serving = test::sqlite_processor(db).value();
  auto result = test::run_healthhook({"rebuild", "--database", path});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text == "healthhook rebuild: " + path +
                                       " is being processed by another healthhook process (a running `serve`, "
                                       "`rebuild`, `replay` or `purge-user`); stop it or let it finish first\n");
}

BOOST_AUTO_TEST_CASE(rebuild_of_a_missing_database_is_a_usage_error) {
  TempDir dir;
  auto result = test::run_healthhook({"rebuild", "--database", dir.file("nothing.db")});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text == "healthhook rebuild: database: " + dir.file("nothing.db") + " does not exist\n");
}

BOOST_AUTO_TEST_CASE(rebuild_gives_up_on_a_database_another_writer_keeps_locked) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto db = test::open_store(path);
  BOOST_REQUIRE(db.exec("BEGIN IMMEDIATE"));  // a writer that is not a healthhook processor
  auto result = test::run_healthhook({"rebuild", "--database", path, "--set", "commit_deadline_ms=200"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text == "healthhook rebuild: " + path +
                                       " is busy: another process held its write lock for 200 ms; nothing was "
                                       "changed\n");
  BOOST_REQUIRE(db.exec("ROLLBACK"));
}

// 005-identity on a database written before it: users, providers and series.source_id
// appear empty, nothing else changes, and `healthhook rebuild` fills them from the inbox.
BOOST_AUTO_TEST_CASE(migration_005_adds_identity_and_rebuild_fills_it_from_the_inbox) {
  TempDir dir;
  const std::string path = dir.file("old.db");
  const std::string steps = R"({"event_type":"daily.data.steps.created","data":{"data":[{"timestamp":)"
                            R"("2024-06-01T10:00:00+00:00","unit":"count","value":5}],"source_id":16,)"
                            R"("source":{"provider":"oura","type":"ring"},"user_id":"u1"},"user_id":"u1",)"
                            R"("client_user_id":"member-1","team_id":"t-1"})";
  {
    auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_write_create);
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(db->exec("PRAGMA journal_mode = WAL").ok());
    for (size_t i = 0; i < 4; ++i) BOOST_REQUIRE(db->exec(store::migrations()[i].sql).ok());
    BOOST_REQUIRE(db->exec("PRAGMA user_version = 4").ok());
    // As an earlier healthhook applied it: the inbox row, its outcome and its rows.
    BOOST_REQUIRE(db->exec("INSERT INTO inbox (seq, message_id, received_at, headers, body) VALUES "
                           "(1, 'm1', 1717236000000, '{}', CAST('" + steps + "' AS BLOB));"
                           "INSERT INTO delivery_outcomes VALUES (1, 'processed', 'timeseries', NULL);"
                           "INSERT INTO series VALUES (1, 'u1', 'steps', 'oura', 'ring');"
                           "INSERT INTO samples (series_id, t_ms, value, unit, seq) VALUES (1, 1717236000000, 5, 'count', 1);"
                           "UPDATE processor_state SET applied_seq = 1;")
                      .ok());
  }
  {
    auto db = store::open_for_writing(path, {});
    BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
    BOOST_TEST(db->query_int("PRAGMA user_version")->value() == store::schema_version());
    BOOST_TEST(test::count(*db, "users") == 0);
    BOOST_TEST(test::count(*db, "providers") == 0);
    BOOST_TEST(test::rows(*db, "SELECT user_id, value, source_id FROM samples_named") ==
                   std::vector<std::string>{"'u1'|5|NULL"},
               boost::test_tools::per_element());
  }
  auto result = test::run_healthhook({"rebuild", "--database", path});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  auto db = test::open_store(path);
  BOOST_TEST(test::rows(db, "SELECT user_id, client_user_id, team_id, first_seen_ms FROM users") ==
                 std::vector<std::string>{"'u1'|'member-1'|'t-1'|1717236000000"},
             boost::test_tools::per_element());
  BOOST_TEST(test::rows(db, "SELECT user_id, value, source_id FROM samples_named") ==
                 std::vector<std::string>{"'u1'|5|16"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()  // rebuild_test
