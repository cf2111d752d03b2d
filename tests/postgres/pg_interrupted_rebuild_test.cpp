// A rebuild killed midway on PostgreSQL (tests/derived/interrupted_rebuild_test.cpp does the
// same on SQLite): `rebuild --pause-after-steps N` says when it got there, then SIGKILL.
// The store records the unfinished rebuild in the reset's transaction; `query` refuses,
// `serve` is not ready and its read API answers 503 until it has applied the inbox again,
// and then the tables equal what SQLite derives from the same deliveries. `migrate` refuses
// a SQLite source in that state. Real processes, a throw-away PostgreSQL server; waits are
// bounded, no timing is asserted.
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <thread>

#include "processor/processor.h"
#include "store/open_store.h"
#include "store/postgres/database.h"
#include "store/sqlite/database.h"
#include "store/unfinished_rebuild.h"
#include "tests/derived/corpus.h"
#include "tests/derived/store_dump.h"
#include "tests/postgres/derived_dump.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(pg_interrupted_rebuild_test)

using namespace hh;
using namespace std::chrono_literals;

namespace {

const std::string kToken = "pg-rebuild-read-token";

template <typename T>
T must(Result<T> result) {
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  return std::move(result.value());
}

// Two steps' worth of rows (kCatchUpSteps ends one after 100,000) and a few of every family.
constexpr int kHeavyDeliveries = 25;
constexpr int kSamplesEach = 5000;

std::vector<store::NewDelivery> deliveries() {
  std::vector<store::NewDelivery> out;
  for (int i = 0; i < kHeavyDeliveries; ++i) {
    out.push_back(test::heartrate_delivery("hr-" + std::to_string(i), 1717200000000 + int64_t{i} * kSamplesEach * 1000,
                                           kSamplesEach, 60 + i));
  }
  for (auto& d : test::make_corpus(200, 31)) out.push_back(std::move(d));
  return out;
}

// `deliveries` stored in the store `database` names and applied, as `rebuild` applies them.
void applied_store(const std::string& database, const std::vector<store::NewDelivery>& deliveries) {
  auto store = must(store::open_store(database, {}));
  auto inbox = must(store->open_inbox());
  for (size_t at = 0; at < deliveries.size(); at += 40) {
    std::vector<const store::NewDelivery*> batch;
    for (size_t i = at; i < std::min(at + 40, deliveries.size()); ++i) batch.push_back(&deliveries[i]);
    auto appended = inbox->append(batch);
    BOOST_REQUIRE_MESSAGE(appended, appended.error());
  }
  auto processor = must(processor::Processor::create(must(store->open_processing()), processor::kCatchUpSteps));
  auto done = processor->run_until_caught_up({});
  BOOST_REQUIRE_MESSAGE(done, done.error());
}

void rebuild_killed_after(const std::string& database, int steps) {
  test::RunningCommand rebuild({"rebuild", "--database", database, "--pause-after-steps", std::to_string(steps)});
  BOOST_REQUIRE_MESSAGE(rebuild.wait_for_line("paused after " + std::to_string(steps) + " steps", 120s),
                        rebuild.stderr_text());
  BOOST_REQUIRE_EQUAL(rebuild.kill_hard(), 128 + SIGKILL);
}

int64_t pg_int(const std::string& uri, const std::string& sql) {
  pg::Connection db = must(store::connect({uri, ""}));
  return must(db.query_int(sql)).value_or(-1);
}

bool wait_ready(test::HttpClient& client, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (client.get("/readyz").status == 200) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_rebuild_killed_after_a_step_on_postgresql_says_so_until_serve_has_applied_the_inbox_again) {
  const auto inbox = deliveries();
  test::TempDir dir;
  const std::string reference = dir.file("reference.db");
  applied_store(reference, inbox);
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  applied_store(uri, inbox);
  const int64_t newest = pg_int(uri, "SELECT max(seq) FROM inbox");
  const int64_t samples = pg_int(uri, "SELECT count(*) FROM samples");
  BOOST_REQUIRE_EQUAL(pg_int(uri, "SELECT count(*) FROM processor_state WHERE rebuild_through IS NULL"), 1);

  rebuild_killed_after(uri, 1);
  const int64_t left = pg_int(uri, "SELECT count(*) FROM samples");
  BOOST_TEST(left > 0);
  BOOST_TEST(left < samples);
  BOOST_TEST(pg_int(uri, "SELECT count(*) FROM deliveries WHERE status = 'pending'") == 0);
  BOOST_TEST(pg_int(uri, "SELECT rebuild_through FROM processor_state") == newest);

  auto query = test::run_healthhook({"query", "samples", "--database", uri});
  BOOST_TEST(query.exit_code == 1);
  BOOST_TEST(query.stderr_text == "healthhook query: " + std::string(store::kRebuildUnfinishedOffline) + "\n");

  // processor_state held by another session: every step of `serve` ends by moving the
  // position there, so none commits until it is let go.
  pg::Connection blocker = must(store::connect({uri, ""}));
  BOOST_REQUIRE(blocker.exec("BEGIN").ok());
  BOOST_REQUIRE(blocker.exec("SELECT * FROM processor_state FOR UPDATE").ok());
  dir.write("read-token", kToken + "\n");
  test::ServerProcess server(dir, "[read_api]\ntoken_file = \"read-token\"", 30s, {"HEALTHHOOK_DATABASE=" + uri});
  BOOST_TEST(server.wait_for_log("\"event\":\"rebuild_unfinished\"", 10s));
  test::HttpClient client(server.port());
  const test::Headers auth{{"authorization", "Bearer " + kToken}};
  const std::string reason(store::kRebuildUnfinishedServing);
  auto readyz = client.get("/readyz");
  BOOST_TEST(readyz.status == 503);
  BOOST_TEST(readyz.body.find("\"reason\":\"" + reason + "\"") != std::string::npos, readyz.body);
  auto refused = client.get("/v1/users/u1/timeseries/heartrate", auth);
  BOOST_TEST(refused.status == 503);
  BOOST_TEST(refused.body == "{\"error\":\"" + reason + "\"}\n");

  BOOST_REQUIRE(blocker.exec("COMMIT").ok());
  BOOST_REQUIRE_MESSAGE(wait_ready(client, 120s), client.get("/readyz").body);
  BOOST_TEST(server.wait_for_log("\"event\":\"rebuild_finished\"", 10s));
  BOOST_TEST(client.get("/v1/users/u1/timeseries/heartrate", auth).status == 200);
  BOOST_TEST(server.stop() == 0);

  BOOST_TEST(pg_int(uri, "SELECT count(*) FROM processor_state WHERE rebuild_through IS NULL") == 1);
  auto lite = must(store::open_for_writing(reference, {}));
  pg::Connection pg = must(store::connect({uri, ""}));
  BOOST_TEST(test::compare_derived_tables(lite, pg) > static_cast<size_t>(samples));
}

BOOST_AUTO_TEST_CASE(migrate_refuses_a_sqlite_store_whose_rebuild_did_not_finish) {
  test::TempDir dir;
  const std::string source = dir.file("source.db");
  applied_store(source, deliveries());
  rebuild_killed_after(source, 0);
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto migrate = test::run_healthhook({"migrate", "--from", source, "--to", uri});
  BOOST_TEST(migrate.exit_code == 1);
  BOOST_TEST(migrate.stderr_text.find("healthhook migrate: " + std::string(store::kRebuildUnfinished) + " in " +
                                      source + " (a rebuild was interrupted); run `healthhook rebuild` on it, then "
                                               "migrate\n") != std::string::npos,
             migrate.stderr_text);
  BOOST_TEST(pg_int(uri, "SELECT count(*) FROM inbox") == 0);

  // Finished where it is, it copies.
  auto rebuilt = test::run_healthhook({"rebuild", "--database", source});
  BOOST_REQUIRE_MESSAGE(rebuilt.exit_code == 0, rebuilt.stderr_text);
  auto copied = test::run_healthhook({"migrate", "--from", source, "--to", uri});
  BOOST_TEST(copied.exit_code == 0, copied.stderr_text);
}

BOOST_AUTO_TEST_SUITE_END()  // pg_interrupted_rebuild_test
