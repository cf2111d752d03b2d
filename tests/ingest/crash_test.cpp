// kill -9 while clients send: after a restart, every delivery that got a 2xx is in the
// inbox (the 2xx was sent after the commit), and the server accepts again.
#include <boost/test/unit_test.hpp>
#include <atomic>
#include <mutex>
#include <thread>

#include "store/sqlite/database.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(crash_test)

using namespace hh::test;

namespace {

// Sends until the server disappears; returns the ids that were acknowledged.
std::vector<std::string> send_until_gone(unsigned short port, const std::string& secret, const std::string& prefix,
                                         std::atomic<int>& acked) {
  std::vector<std::string> ids;
  HttpClient client(port, std::chrono::seconds(10));
  for (int i = 0; i < 1000000; ++i) {
    const std::string id = prefix + std::to_string(i);
    const auto response = client.post_webhook(
        secret, id, R"({"event_type":"daily.data.steps.created","data":{"i":)" + std::to_string(i) + "}}");
    if (response.status == 0) break;  // killed
    if (response.status == 200) {
      ids.push_back(id);
      ++acked;
    }
  }
  return ids;
}

}  // namespace

BOOST_AUTO_TEST_CASE(acknowledged_deliveries_survive_kill_9) {
  TempDir dir;
  ServerProcess server(dir);
  constexpr int kRounds = 3;
  std::vector<std::string> all_acked;
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<int> acked{0};
    std::mutex mutex;
    std::vector<std::thread> clients;
    for (int c = 0; c < 8; ++c) {
      clients.emplace_back([&, c] {
        auto ids = send_until_gone(server.port(), server.secret(),
                                   "r" + std::to_string(round) + "c" + std::to_string(c) + "_", acked);
        std::lock_guard lock(mutex);
        all_acked.insert(all_acked.end(), ids.begin(), ids.end());
      });
    }
    // Kill at a different load point each round, while requests are in flight.
    while (acked < 300 * (round + 1)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    server.kill_hard();
    for (auto& t : clients) t.join();
    server.restart();
  }

  auto db = hh::store::open_for_reading(server.database());
  BOOST_REQUIRE(db.ok());
  auto find = db->prepare("SELECT count(*) FROM deliveries WHERE message_id = ?1");
  size_t missing = 0;
  for (const auto& id : all_acked) {
    find->bind(1, std::string_view(id));
    BOOST_REQUIRE(find->step().value());
    if (find->column_int(0) != 1) ++missing;
    find->reset();
  }
  BOOST_TEST_MESSAGE("acknowledged " << all_acked.size() << " deliveries over " << kRounds << " kills");
  BOOST_TEST(all_acked.size() >= 900u);
  BOOST_TEST(missing == 0u);
  // Still serving after the last restart.
  HttpClient client(server.port());
  BOOST_TEST(client.post_webhook(server.secret(), "after_crash", R"({"event_type":"ping"})").status == 200);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // crash_test
