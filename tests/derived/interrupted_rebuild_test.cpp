// A rebuild killed midway (kill -9 at a point the test chooses: `rebuild --pause-after-steps
// N` says when it got there and waits) leaves the derived tables empty or partly filled
// while every delivery still reads 'processed'. The store records that, in the reset's
// transaction, until the step that applies the inbox's last row again: meanwhile `query`
// refuses, `serve` is not ready and its read API answers 503 with the reason, and the
// tables `serve` (or the next rebuild) derives are those of before. Real processes, a real
// SQLite file; waits are bounded, no timing is asserted.
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <thread>

#include "store/sqlite/connection.h"
#include "store/sqlite/database.h"
#include "store/sqlite/sqlite_processing_store.h"
#include "store/unfinished_rebuild.h"
#include "tests/derived/corpus.h"
#include "tests/derived/store_dump.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(interrupted_rebuild_test)

using namespace hh;
using namespace std::chrono_literals;
using State = std::map<std::string, std::vector<std::string>>;

namespace {

const std::string kToken = "rebuild-read-token";

// Enough rows that a rebuild takes two steps (kCatchUpSteps ends one after 100,000 rows):
// 25 deliveries of 5,000 heart-rate samples each, at times of their own, and a summary.
constexpr int kHeavyDeliveries = 25;
constexpr int kSamplesEach = 5000;
constexpr int64_t kSamples = int64_t{kHeavyDeliveries} * kSamplesEach;
constexpr int64_t kDeliveries = kHeavyDeliveries + 1;

std::vector<store::NewDelivery> heavy_inbox() {
  std::vector<store::NewDelivery> deliveries;
  for (int i = 0; i < kHeavyDeliveries; ++i) {
    deliveries.push_back(test::heartrate_delivery("hr-" + std::to_string(i),
                                                  1717200000000 + int64_t{i} * kSamplesEach * 1000, kSamplesEach,
                                                  60 + i));
  }
  deliveries.push_back(test::sleep_delivery("sleep-1", "sleep-summary-1", 81));
  return deliveries;
}

// A store holding heavy_inbox(), applied as `serve` applies it; returns its derived state.
State applied_store(const std::string& path) {
  auto db = test::open_store(path);
  test::append_deliveries(db, heavy_inbox());
  test::apply_inbox(db);
  BOOST_REQUIRE_EQUAL(test::count(db, "samples"), kSamples);
  BOOST_REQUIRE_EQUAL(test::value(db, "SELECT rebuild_through FROM processor_state"), "NULL");
  return test::dump_derived_state(db);
}

// Runs `rebuild` until it pauses after `steps` steps, then kills it with SIGKILL.
void rebuild_killed_after(const std::string& path, int steps) {
  test::RunningCommand rebuild({"rebuild", "--database", path, "--pause-after-steps", std::to_string(steps)});
  BOOST_REQUIRE_MESSAGE(rebuild.wait_for_line("paused after " + std::to_string(steps) + " steps", 120s),
                        rebuild.stderr_text());
  BOOST_REQUIRE_EQUAL(rebuild.kill_hard(), 128 + SIGKILL);
}

void check_equal(const State& actual, const State& expected) {
  BOOST_TEST(actual.size() == expected.size());
  for (const auto& [table, rows] : expected) {
    BOOST_TEST_CONTEXT("table " << table) {
      BOOST_TEST(actual.at(table).size() == rows.size());
      BOOST_TEST(actual.at(table) == rows, boost::test_tools::per_element());
    }
  }
}

// The value of an unlabelled sample on /metrics ("" when absent).
std::string metric(test::HttpClient& client, const std::string& name) {
  const std::string text = client.get("/metrics").body;
  const size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return "";
  const size_t from = at + name.size() + 2;
  return text.substr(from, text.find('\n', from) - from);
}

// Polls /readyz until it answers 200; false after `timeout`.
bool wait_ready(test::HttpClient& client, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (client.get("/readyz").status == 200) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_rebuild_killed_after_a_step_says_so_until_serve_has_applied_the_inbox_again) {
  test::TempDir dir;
  dir.write("read-token", kToken + "\n");
  const std::string path = dir.file("healthhook.db");  // the database ServerProcess configures
  const State whole = applied_store(path);

  rebuild_killed_after(path, 1);
  {
    auto db = store::open_for_reading(path).value();
    // What the finding saw: partly filled tables, every delivery still 'processed'.
    const int64_t samples = test::count(db, "samples");
    BOOST_TEST(samples > 0);
    BOOST_TEST(samples < kSamples);
    BOOST_TEST(test::count(db, "deliveries WHERE status = 'processed'") == kDeliveries);
    // ... and now the mark that says the tables are incomplete.
    BOOST_TEST(test::value(db, "SELECT rebuild_through FROM processor_state") == std::to_string(kDeliveries));
  }

  // The command line refuses to pass them off as whole, whatever the table.
  for (const char* table : {"samples", "summaries", "deliveries", "users"}) {
    auto query = test::run_healthhook({"query", table, "--database", path});
    BOOST_TEST(query.exit_code == 1, table);
    BOOST_TEST(query.stderr_text == "healthhook query: " + std::string(store::kRebuildUnfinishedOffline) + "\n");
    BOOST_TEST(query.stdout_text.empty());
  }

  // A `serve` that cannot finish: VACUUM leaves the file without a free page and
  // max_database_mib below its size keeps it from growing, so every step of the
  // re-derivation fails (database full) and is retried. What it says meanwhile is what it
  // says while it re-derives.
  {
    auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_write).value();
    BOOST_REQUIRE(db.exec("VACUUM"));
  }
  const test::Headers auth{{"authorization", "Bearer " + kToken}};
  const std::string reason(store::kRebuildUnfinishedServing);
  {
    test::ServerProcess server(dir, "max_database_mib = 1\n[read_api]\ntoken_file = \"read-token\"");
    BOOST_TEST(server.wait_for_log("\"event\":\"rebuild_unfinished\"", 10s));
    BOOST_REQUIRE(server.wait_for_log("\"event\":\"processor_step_failed\"", 60s));
    test::HttpClient client(server.port());
    auto readyz = client.get("/readyz");
    BOOST_TEST(readyz.status == 503);
    BOOST_TEST(readyz.body.find("\"reason\":\"" + reason + "\"") != std::string::npos, readyz.body);
    for (const char* target : {"/v1/users/u1/timeseries/heartrate", "/v1/users/u1/summaries/sleep", "/v1/changes",
                               "/v1/deliveries/hr-0", "/v1/deliveries", "/v1/users/u1"}) {
      auto refused = client.get(target, auth);
      BOOST_TEST(refused.status == 503, target);
      BOOST_TEST(refused.body == "{\"error\":\"" + reason + "\"}\n", target);
      BOOST_TEST(refused.header("retry-after") == "5", target);
    }
    // State a rebuild keeps answers on.
    BOOST_TEST(client.get("/v1/jobs", auth).status == 200);
    BOOST_TEST(client.get("/v1/forwarding", auth).status == 200);
    BOOST_TEST(metric(client, "healthhook_rebuild_unfinished") == "1");
    BOOST_TEST(metric(client, "healthhook_ready") == "0");
    BOOST_TEST(server.stop() == 0);
  }
  {
    auto db = store::open_for_reading(path).value();
    BOOST_TEST(test::value(db, "SELECT rebuild_through FROM processor_state") == std::to_string(kDeliveries));
  }

  // Room to grow: it applies the rest of the inbox, and says so.
  test::ServerProcess server(dir, "[read_api]\ntoken_file = \"read-token\"");
  test::HttpClient client(server.port());
  BOOST_REQUIRE_MESSAGE(wait_ready(client, 120s), client.get("/readyz").body);
  BOOST_TEST(server.wait_for_log("\"event\":\"rebuild_finished\"", 10s));
  BOOST_TEST(client.get("/v1/users/u1/timeseries/heartrate", auth).status == 200);
  BOOST_TEST(client.get("/v1/deliveries/hr-0", auth).status == 200);
  BOOST_TEST(metric(client, "healthhook_rebuild_unfinished") == "0");
  BOOST_TEST(metric(client, "healthhook_ready") == "1");
  BOOST_TEST(server.stop() == 0);

  auto db = test::open_store(path);
  check_equal(test::dump_derived_state(db), whole);  // processor_state too: the mark is gone
  auto query = test::run_healthhook({"query", "summaries", "--database", path});
  BOOST_TEST(query.exit_code == 0, query.stderr_text);
}

BOOST_AUTO_TEST_CASE(a_rebuild_killed_after_emptying_the_tables_is_finished_by_the_next_rebuild) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const State whole = applied_store(path);

  rebuild_killed_after(path, 0);
  {
    auto db = store::open_for_reading(path).value();
    BOOST_TEST(test::count(db, "samples") == 0);
    BOOST_TEST(test::count(db, "summaries") == 0);
    BOOST_TEST(test::value(db, "SELECT rebuild_through FROM processor_state") == std::to_string(kDeliveries));
  }

  auto again = test::run_healthhook({"rebuild", "--database", path});
  BOOST_TEST(again.exit_code == 0, again.stderr_text);
  BOOST_TEST(again.stderr_text ==
             "rebuild: note: the last rebuild did not finish (its tables are incomplete); starting over\n");
  BOOST_TEST(again.stdout_text.starts_with("rebuild: " + std::to_string(kDeliveries) + " deliveries ("),
             again.stdout_text);
  auto db = test::open_store(path);
  check_equal(test::dump_derived_state(db), whole);

  // A rebuild that finishes leaves no mark, and says nothing of one.
  auto plain = test::run_healthhook({"rebuild", "--database", path});
  BOOST_TEST(plain.exit_code == 0, plain.stderr_text);
  BOOST_TEST(plain.stderr_text.empty());
  BOOST_TEST(test::value(db, "SELECT rebuild_through FROM processor_state") == "NULL");
}

// The mark in the store itself: none for an empty inbox (nothing to apply again), and
// gone with the step that applies its row, not with one before.
BOOST_AUTO_TEST_CASE(an_empty_inbox_leaves_no_mark_and_the_mark_goes_with_the_step_that_reaches_it) {
  test::TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  BOOST_REQUIRE(store::reset_derived(db, {}));
  BOOST_TEST(test::value(db, "SELECT rebuild_through FROM processor_state") == "NULL");

  test::append_deliveries(db, heavy_inbox());
  test::apply_inbox(db);
  BOOST_REQUIRE(store::reset_derived(db, {.keep_statuses = true}));
  BOOST_TEST(test::value(db, "SELECT rebuild_through FROM processor_state") == std::to_string(kDeliveries));
  // A delivery that arrives after the reset is no part of it: the mark stays where it was.
  test::append_deliveries(db, {test::sleep_delivery("sleep-2", "sleep-summary-2", 70)});
  BOOST_TEST(test::value(db, "SELECT rebuild_through FROM processor_state") == std::to_string(kDeliveries));
  test::apply_inbox(db);
  BOOST_TEST(test::value(db, "SELECT rebuild_through FROM processor_state") == "NULL");
  BOOST_TEST(test::count(db, "samples") == kSamples);
}

// An erasure after the interruption that takes every row left to apply leaves nothing to
// finish: the tables are whole again (for what the inbox still holds), not marked for ever.
BOOST_AUTO_TEST_CASE(an_erasure_of_the_rows_left_to_apply_leaves_nothing_unfinished) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  applied_store(path);
  rebuild_killed_after(path, 0);
  auto refused = test::run_healthhook({"query", "samples", "--database", path});
  BOOST_TEST(refused.exit_code == 1);

  auto purged = test::run_healthhook({"purge-user", "u1", "--database", path});
  BOOST_REQUIRE_MESSAGE(purged.exit_code == 0, purged.stderr_text);
  auto query = test::run_healthhook({"query", "samples", "--database", path});
  BOOST_TEST(query.exit_code == 0, query.stderr_text);
  BOOST_TEST(query.stdout_text.empty());
}

BOOST_AUTO_TEST_SUITE_END()  // interrupted_rebuild_test
