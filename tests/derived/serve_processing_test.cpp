// The processor inside `healthhook serve`: deliveries are applied as they arrive, between
// ingest commits, and a rebuild is refused while the server runs.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <thread>

#include "store/sqlite/database.h"
#include "store/sqlite/sqlite_inbox.h"
#include "tests/derived/corpus.h"
#include "tests/derived/store_dump.h"
#include "tests/support/http_client.h"
#include "tests/support/open_files.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(serve_processing_test)

using namespace hh;
using Strings = std::vector<std::string>;

namespace {

// Polls a read connection until processor_state.applied_seq reaches `seq`.
bool wait_applied(const std::string& database, int64_t seq) {
  for (int i = 0; i < 1500; ++i) {
    auto db = store::open_for_reading(database);
    if (db) {
      auto applied = db->query_int("SELECT applied_seq FROM processor_state");
      if (applied && applied->value_or(0) >= seq) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(serve_applies_deliveries_and_refuses_a_concurrent_rebuild) {
  test::TempDir dir;
  test::ServerProcess server(dir);
  test::HttpClient client(server.port());
  const auto sleep = test::sleep_delivery("msg_1", "sleep-1", 77);
  const auto heartrate = test::heartrate_delivery("msg_2", 1717200000000, 5, 61);
  BOOST_TEST(client.post_webhook(server.secret(), "msg_1", sleep.body).status / 100 == 2);
  BOOST_TEST(client.post_webhook(server.secret(), "msg_2", heartrate.body).status / 100 == 2);
  BOOST_REQUIRE(wait_applied(server.database(), 2));

  {
    auto db = store::open_for_reading(server.database()).value();
    BOOST_TEST(test::rows(db, "SELECT seq, status, family FROM deliveries ORDER BY seq") ==
                   (Strings{"1|'processed'|'summary'", "2|'processed'|'timeseries'"}),
               boost::test_tools::per_element());
    BOOST_TEST(test::value(db, "SELECT json_extract(data, '$.score') FROM summaries") == "77");
    BOOST_TEST(test::value(db, "SELECT count(*) || ' ' || min(value) FROM samples") == "'5 61'");
    BOOST_TEST(test::value(db, "SELECT group_concat(table_name || ':' || op, ',') FROM changes") ==
               "'users:insert,summaries:insert,samples:insert'");
  }

  auto refused = test::run_healthhook({"rebuild", "--database", server.database()});
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(refused.stderr_text.find("is being processed by another healthhook process") != std::string::npos,
             refused.stderr_text);

  BOOST_TEST(server.stop() == 0);
  auto rebuilt = test::run_healthhook({"rebuild", "--database", server.database()});
  BOOST_TEST(rebuilt.exit_code == 0, rebuilt.stderr_text);
  BOOST_TEST(rebuilt.stdout_text.starts_with("rebuild: 2 deliveries (2 processed, 0 invalid, 0 ignored, 0 unknown), "
                                             "5 samples, 6 rows, "),
             rebuilt.stdout_text);
}

namespace {

// Until the server has as many open files as `expected` (its connections close a moment
// after ours); the last count otherwise.
size_t open_files_settled(pid_t pid, size_t expected) {
  size_t n = test::open_files(pid);
  for (int i = 0; i < 250 && n != expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    n = test::open_files(pid);
  }
  return n;
}

}  // namespace

// Deliveries leave no file behind: idle, `serve` has the same open files before and after
// them (bench/soak checks the same over minutes of load). What it opens to parse ahead (a
// thread and a read connection, for a backlog nothing adds to: processor.h) it closes
// once caught up: a restart that finds a backlog settles at one more at most (below).
// The lock follows the database file, not its name: a hard link in another folder (its own
// "-wal" beside it: two writers there corrupt the file) reaches the same lock as the name
// the running server opened.
BOOST_AUTO_TEST_CASE(serve_refuses_a_second_serve_or_rebuild_through_a_hard_link) {
  test::TempDir dir;
  test::ServerProcess server(dir);
  std::filesystem::create_directory(dir.path() / "b");
  const std::string linked = dir.file("b/healthhook.db");
  std::filesystem::create_hard_link(server.database(), linked);
  const std::string other = dir.write("b.toml", "listen = \"127.0.0.1:0\"\ndatabase = \"" + linked +
                                                    "\"\nsigning_secret_files = [\"secret\"]\n");

  auto rebuild = test::run_healthhook({"rebuild", "--database", linked});
  BOOST_TEST(rebuild.exit_code == 1);
  BOOST_TEST(rebuild.stderr_text.find(linked + " is being processed by another healthhook process") !=
                 std::string::npos,
             rebuild.stderr_text);
  // Bounded: a second server that starts runs until this kills it (exit 137).
  auto second = test::run_healthhook({"serve", "--config", other}, "", {}, std::chrono::seconds(30));
  BOOST_TEST(second.exit_code != 0);
  BOOST_TEST(second.stderr_text.find("is being processed by another healthhook process") != std::string::npos,
             second.stderr_text);

  BOOST_TEST(server.stop() == 0);
  auto rebuilt = test::run_healthhook({"rebuild", "--database", linked});
  BOOST_TEST(rebuilt.exit_code == 0, rebuilt.stderr_text);
}

BOOST_AUTO_TEST_CASE(serve_has_the_same_open_files_idle_before_and_after_deliveries) {
  test::TempDir dir;
  test::ServerProcess server(dir);  // "listening": everything opened at start-up is open
  const size_t idle = test::open_files(server.pid());
  {
    test::HttpClient client(server.port());
    for (int i = 1; i <= 40; ++i) {
      const std::string id = "msg_" + std::to_string(i);
      const auto delivery = i % 2 == 0 ? test::heartrate_delivery(id, 1717200000000 + i * 600000, 5, 60 + i)
                                       : test::sleep_delivery(id, "sleep-" + std::to_string(i), i);
      BOOST_REQUIRE(client.post_webhook(server.secret(), id, delivery.body).status / 100 == 2);
    }
  }
  BOOST_REQUIRE(wait_applied(server.database(), 40));
  BOOST_TEST(open_files_settled(server.pid(), idle) == idle);
  BOOST_TEST(server.stop() == 0);

  {
    auto db = store::open_for_writing(server.database(), store::StoreOptions{});
    BOOST_REQUIRE_MESSAGE(db, db.error());
    auto inbox = store::SqliteInbox::create(*db);
    BOOST_REQUIRE_MESSAGE(inbox, inbox.error());
    std::vector<store::NewDelivery> backlog;
    for (int i = 41; i <= 340; ++i) {
      backlog.push_back(test::sleep_delivery("msg_" + std::to_string(i), "sleep-" + std::to_string(i), i));
    }
    std::vector<const store::NewDelivery*> batch;
    for (const auto& d : backlog) batch.push_back(&d);
    BOOST_REQUIRE(inbox->append(batch));
  }
  server.restart();
  BOOST_REQUIRE(wait_applied(server.database(), 340));
  // Its read connection is closed, but SQLite keeps that connection's descriptor of the
  // database file open while the process holds locks on the file (POSIX locks belong to
  // the process, and closing any descriptor would drop the writer's), and gives it to the
  // next connection it opens to the file (processor_test checks that it does not grow).
  // Left open, the connection would hold two more: the file and its WAL.
  BOOST_TEST(open_files_settled(server.pid(), idle + 1) <= idle + 1);
  // Checked after the files: /metrics opens a read connection of its own.
  const auto metrics = test::HttpClient(server.port()).get("/metrics").body;
  BOOST_TEST(metrics.find("healthhook_processor_parse_ahead_total 1\n") != std::string::npos, metrics);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // serve_processing_test
