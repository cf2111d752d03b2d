// Uploads with headers that pass the early checks (spec §2), against the real `serve` over
// 127.0.0.1: their bodies are read only as fast as the in-flight body budget allows. A
// module of its own beside hostile_clients_test: the longest case of the listener's, it
// runs alongside the others instead of after them.
#include <boost/test/unit_test.hpp>
#include <atomic>
#include <thread>

#include "tests/ingest/hostile_requests.h"
#include "tests/support/http_client.h"
#include "tests/support/raw_connection.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(hostile_uploads_test)

using namespace hh::test;
using namespace std::chrono_literals;
namespace hostile = hh::test::hostile;

// 40 uploads of 4 MiB with forged but well-formed signature headers: their bodies are read,
// but only as much of them at once as the in-flight budget allows.
BOOST_AUTO_TEST_CASE(signed_looking_uploads_stay_inside_the_body_budget) {
  TempDir dir;
  ServerProcess server(dir, "max_inflight_body_mib = 16\nmax_body_bytes = 8388608");
  HttpClient warm(server.port());
  BOOST_TEST(warm.post_webhook(server.secret(), "msg_warm", hostile::kBody).status == 200);
  const uint64_t baseline = peak_rss_kib(server.pid());

  const std::string body(4 * hostile::kMiB, 'x');
  std::vector<std::thread> clients;
  std::atomic<int> unauthorized{0}, unavailable{0}, other{0};
  for (int i = 0; i < 40; ++i) {
    clients.emplace_back([&, i] {
      RawConnection upload(server.port());
      const std::string head =
          hostile::upload_head(body.size(), hostile::signed_looking_headers("msg_forged_" + std::to_string(i)));
      upload.send(head + body, 20s);
      const std::string answer = upload.receive(20s);
      if (answer.starts_with("HTTP/1.1 401")) {
        ++unauthorized;
      } else if (answer.starts_with("HTTP/1.1 503") && answer.find("Retry-After: ") != std::string::npos) {
        ++unavailable;
      } else {
        ++other;
      }
    });
  }
  for (auto& c : clients) c.join();
  BOOST_TEST(unauthorized + unavailable == 40);
  BOOST_TEST(other == 0);
  // Budget, plus per connection one read buffer and one read of slack; 24 MiB for all.
  const uint64_t grown = peak_rss_kib(server.pid()) - baseline;
  if (hostile::kMemoryIsOurs) BOOST_TEST(grown < 16 * 1024 + 8 * 1024, "peak RSS grew by " << grown << " KiB");
  BOOST_TEST(hostile::deliveries(server.database()) == 1);
  // The service still gets through.
  BOOST_TEST(warm.post_webhook(server.secret(), "msg_after", hostile::kBody).status == 200);
  BOOST_TEST(server.stop() == 0);
}

// Addresses not yet proven (no signed delivery from them) announcing large bodies behind
// forged but well-formed signature headers, and sending none of them: each holds at most
// its share of the budget, and all of them together half of it, so deliveries are not
// answered 503 for as long as they keep them open (body_timeout_s). Those refusals are
// not unavailable deliveries (anyone can make them). A proven address is held to neither.
BOOST_AUTO_TEST_CASE(addresses_not_yet_proven_cannot_hold_the_whole_body_budget) {
  TempDir dir;
  // The share: 16 MiB / 1024 connections * 64 per address = 1 MiB, one body of the limit;
  // all unproven addresses: 8 MiB.
  dir.write("read-token", "read-token-of-this-test\n");
  ServerProcess server(dir, "max_inflight_body_mib = 16\nmax_body_bytes = 1048576\nbody_timeout_s = 60\n"
                            "[read_api]\ntoken_file = \"read-token\"\n[console]\nenabled = true\n");
  // The service has delivered before: 127.0.0.1 is proven.
  HttpClient service(server.port());
  BOOST_TEST(service.post_webhook(server.secret(), "msg_before", hostile::kBody).status == 200);
  const std::string head = hostile::upload_head(hostile::kMiB, hostile::signed_looking_headers("msg_forged"));
  const auto refused_at_once = [](RawConnection& upload) {
    const std::string answer = upload.receive_response(500ms);
    return answer.starts_with("HTTP/1.1 503") && answer.find("before a signed delivery") != std::string::npos;
  };
  // One address: its first upload holds its share, the others are answered at once.
  std::vector<RawConnection> forged;
  for (int i = 0; i < 16; ++i) {
    forged.emplace_back(server.port(), "127.0.0.2");
    BOOST_TEST(forged.back().send(head));
  }
  int refused = 0;
  for (auto& upload : forged) refused += refused_at_once(upload) ? 1 : 0;
  BOOST_TEST(refused == 15);
  // Ten more addresses: seven more fill half the budget, the last three are refused.
  std::vector<RawConnection> spread;
  for (int i = 3; i <= 12; ++i) {
    spread.emplace_back(server.port(), "127.0.0." + std::to_string(i));
    BOOST_TEST(spread.back().send(head));
  }
  refused = 0;
  for (auto& upload : spread) refused += refused_at_once(upload) ? 1 : 0;
  BOOST_TEST(refused == 3);

  BOOST_TEST(service.post_webhook(server.secret(), "msg_valid", hostile::kBody).status == 200);
  // An operator signs in to the console from an address never proven (only deliveries are
  // held to the unproven half: a sign-in was refused while attackers filled it).
  const std::string form = "token=read-token-of-this-test";
  RawConnection operator_(server.port(), "127.0.0.20");
  BOOST_TEST(operator_.send("POST /console/sign-in HTTP/1.1\r\nHost: x\r\nX-Requested-With: test\r\n"
                            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
                            std::to_string(form.size()) + "\r\n\r\n" + form));
  BOOST_TEST(operator_.receive_response(5s).starts_with("HTTP/1.1 200"));
  const std::string metrics = service.get("/metrics").body;
  BOOST_TEST(metrics.find("healthhook_refusals_total{reason=\"unproven_share\"} 18\n") != std::string::npos, metrics);
  BOOST_TEST(metrics.find("healthhook_deliveries_total{outcome=\"unavailable\"} 0\n") != std::string::npos, metrics);

  // The half kept for proven addresses takes 127.0.0.1's large bodies too, which wait for
  // their bytes.
  std::vector<RawConnection> from_proven;
  for (int i = 0; i < 4; ++i) {
    from_proven.emplace_back(server.port());
    BOOST_TEST(from_proven.back().send(head));
  }
  for (auto& upload : from_proven) BOOST_TEST(upload.receive_response(500ms) == "");
  BOOST_TEST(hostile::deliveries(server.database()) == 2);
  BOOST_TEST(server.stop() == 0);
}

// A body the limit allows but larger than the in-flight budget as configured: the budget
// is raised to fit it at start (a warning), or every retry of it would be answered 503 and
// it would never be stored.
BOOST_AUTO_TEST_CASE(a_body_the_limit_allows_fits_the_budget) {
  TempDir dir;
  ServerProcess server(dir, "max_inflight_body_mib = 1\nmax_body_bytes = 2097152");
  HttpClient client(server.port());
  const std::string body =
      R"({"event_type":"daily.data.ping.created","data":{"pad":")" + std::string(3 * hostile::kMiB / 2, 'x') + R"("}})";
  BOOST_TEST(server.wait_for_log("max_inflight_body_raised", 5s));
  BOOST_TEST(client.post_webhook(server.secret(), "msg_large", body).status == 200);
  BOOST_TEST(hostile::deliveries(server.database()) == 1);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
