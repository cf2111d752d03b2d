// Fault: our clock and the service's disagree by more than timestamp_tolerance_s (issue 9).
// End to end against the real binary: a correctly signed delivery whose signed timestamp
// is beyond the tolerance, in the past or in the future, is refused with 401 naming the
// timestamp, logged, and not stored; within the tolerance it is stored. (The verifier's
// boundary, to the second, is tests/ingest/signature_test.cpp.)
#include <boost/test/unit_test.hpp>

#include "tests/faults/store_probe.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(clock_skew_test)

using namespace hh::test;

namespace {

constexpr int64_t kTolerance = 120;  // set below the 300 s default: the key is honoured, not just defaulted
constexpr int64_t kMargin = 30;      // far from the boundary: a second ticking over changes nothing

const std::string kSteps =
    R"({"event_type":"daily.data.steps.created","data":{"data":[{"timestamp":"2024-05-16T10:00:00+00:00",)"
    R"("timezone_offset":0,"type":null,"unit":"count","value":237}],"source":{"provider":"oura","type":"ring"},)"
    R"("user_id":"u1"},"user_id":"u1"})";

std::string seconds_from_now(int64_t offset) { return std::to_string(std::stoll(now_seconds()) + offset); }

}  // namespace

BOOST_AUTO_TEST_CASE(signed_timestamps_beyond_the_tolerance_are_401_and_nothing_is_stored) {
  TempDir dir;
  ServerProcess server(dir, "timestamp_tolerance_s = " + std::to_string(kTolerance) + "\nrefusal_log_interval_s = 1");
  HttpClient client(server.port());

  const auto old = client.post_webhook(server.secret(), "msg_old", kSteps, seconds_from_now(-kTolerance - kMargin));
  BOOST_TEST(old.status == 401);
  BOOST_TEST(old.body.find("signature timestamp too old") != std::string::npos, old.body);

  const auto future =
      client.post_webhook(server.secret(), "msg_future", kSteps, seconds_from_now(kTolerance + kMargin));
  BOOST_TEST(future.status == 401);
  BOOST_TEST(future.body.find("signature timestamp too far in the future") != std::string::npos, future.body);

  // What the operator sees: refusals counted by reason, and a summary line once per
  // interval (1 s here), not a line per request an attacker could send.
  BOOST_TEST(server.wait_for_log("\"signature_timestamp\":2", std::chrono::seconds(5)));
  BOOST_TEST(deliveries_where(server.database()) == 0);
  BOOST_TEST(client.get("/readyz").status == 200);  // the receiver is fine; the clock is not
  const auto metrics = client.get("/metrics");
  BOOST_TEST(metrics.body.find("\nhealthhook_signature_failures_total 2\n") != std::string::npos, metrics.body);
  BOOST_TEST(metrics.body.find("\nhealthhook_refusals_total{reason=\"signature_timestamp\"} 2\n") != std::string::npos,
             metrics.body);

  // Within the tolerance, either way: stored. The service's retry of the refused ids, once
  // the clocks agree again, is a new delivery as far as the inbox knows.
  BOOST_TEST(client.post_webhook(server.secret(), "msg_behind", kSteps, seconds_from_now(-kTolerance + kMargin))
                 .status == 200);
  BOOST_TEST(client.post_webhook(server.secret(), "msg_ahead", kSteps, seconds_from_now(kTolerance - kMargin))
                 .status == 200);
  BOOST_TEST(client.post_webhook(server.secret(), "msg_old", kSteps).status == 200);
  BOOST_TEST(deliveries_where(server.database()) == 3);
  BOOST_TEST(deliveries_where(server.database(), "message_id = 'msg_old'") == 1);
  BOOST_TEST(deliveries_where(server.database(), "message_id = 'msg_future'") == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // clock_skew_test
