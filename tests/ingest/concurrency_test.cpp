// 32 concurrent clients × 200 signed deliveries with random duplicates: exactly one inbox
// row per message id, and every answer is a 2xx. Once with one io thread (sessions on the
// io_context's executor) and once with three (a strand per session: listener.h).
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "store/sqlite/database.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(concurrency_test)

using namespace hh::test;

BOOST_DATA_TEST_CASE(concurrent_clients_with_duplicates_store_each_id_once, boost::unit_test::data::make({1, 3}),
                     io_threads) {
  constexpr int kClients = 32;
  constexpr int kPerClient = 200;
  constexpr int kDistinctIds = 4000;  // 6,400 sends over 4,000 ids: many duplicates, across clients too
  TempDir dir;
  ServerProcess server(dir, "threads = " + std::to_string(io_threads));
  BOOST_TEST(server.wait_for_log("\"threads\":" + std::to_string(io_threads), std::chrono::seconds(5)));

  std::mutex mutex;
  std::map<int, int> statuses;
  std::set<std::string> sent_ids;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937 random(static_cast<unsigned>(c) * 7919u + 1u);
      std::uniform_int_distribution<int> pick(0, kDistinctIds - 1);
      HttpClient client(server.port());
      for (int i = 0; i < kPerClient; ++i) {
        const std::string id = "msg_" + std::to_string(pick(random));
        const std::string body = R"({"event_type":"daily.data.heartrate.created","data":{"n":)" +
                                 id.substr(4) + R"(},"user_id":"u"})";
        const auto response = client.post_webhook(server.secret(), id, body);
        std::lock_guard lock(mutex);
        ++statuses[response.status];
        sent_ids.insert(id);
      }
    });
  }
  for (auto& t : clients) t.join();

  BOOST_TEST(statuses.size() == 1u);
  BOOST_TEST(statuses[200] == kClients * kPerClient);
  auto db = hh::store::open_for_reading(server.database());
  BOOST_REQUIRE(db.ok());
  BOOST_TEST(db->query_int("SELECT count(*) FROM deliveries")->value() == static_cast<int64_t>(sent_ids.size()));
  BOOST_TEST(db->query_int("SELECT count(DISTINCT message_id) FROM deliveries")->value() ==
             static_cast<int64_t>(sent_ids.size()));
  // seq is dense and increasing: no gaps from rolled-back batches.
  BOOST_TEST(db->query_int("SELECT max(seq) FROM deliveries")->value() == static_cast<int64_t>(sent_ids.size()));
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // concurrency_test
