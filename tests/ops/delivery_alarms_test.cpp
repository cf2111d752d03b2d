// The silence and signature-failure alarms (metrics/delivery_alarms.h) on a fake clock:
// check() is called with the time the test chooses, and what it logs is read from stderr.
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include "metrics/delivery_alarms.h"
#include "tests/support/logged_by.h"

BOOST_AUTO_TEST_SUITE(delivery_alarms_test)

using namespace hh;
using test::logged_by;

namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kStart = 1'760'000'000'000;  // a unix time in ms

struct Alarms {
  explicit Alarms(metrics::AlarmOptions options) : alarms(io, stats, options) {}
  boost::asio::io_context io;
  http::WebhookStats stats;
  metrics::DeliveryAlarms alarms;
};

}  // namespace

BOOST_AUTO_TEST_CASE(silence_is_logged_once_when_it_begins_and_once_when_it_ends) {
  Alarms a({.silence_minutes = 60, .signature_failures_per_minute = 10});
  a.stats.last_verified_ms = kStart;
  BOOST_TEST(!a.alarms.check(kStart + 59 * kMinute).silence_began);

  metrics::AlarmsRaised raised;
  const std::string began = logged_by([&] { raised = a.alarms.check(kStart + 60 * kMinute); });
  BOOST_TEST(raised.silence_began);
  BOOST_TEST(began.find("\"no_verified_delivery\"") != std::string::npos, began);
  BOOST_TEST(began.find("\"minutes\":60") != std::string::npos, began);

  // Still silent a minute later: nothing new is logged.
  const std::string still = logged_by([&] { raised = a.alarms.check(kStart + 61 * kMinute); });
  BOOST_TEST(!raised.silence_began);
  BOOST_TEST(!raised.silence_ended);
  BOOST_TEST(still.empty(), still);

  a.stats.last_verified_ms = kStart + 62 * kMinute;  // a delivery verified
  const std::string ended = logged_by([&] { raised = a.alarms.check(kStart + 62 * kMinute + 1000); });
  BOOST_TEST(raised.silence_ended);
  BOOST_TEST(ended.find("\"deliveries_resumed\"") != std::string::npos, ended);

  // A second silence is a second episode.
  BOOST_TEST(!a.alarms.check(kStart + 121 * kMinute).silence_began);
  BOOST_TEST(a.alarms.check(kStart + 122 * kMinute).silence_began);
}

BOOST_AUTO_TEST_CASE(zero_turns_the_silence_alarm_off) {
  Alarms a({.silence_minutes = 0, .signature_failures_per_minute = 10});
  a.stats.last_verified_ms = kStart;
  BOOST_TEST(!a.alarms.check(kStart + 10'000 * kMinute).silence_began);
}

BOOST_AUTO_TEST_CASE(a_burst_of_401s_is_logged_each_minute_it_lasts) {
  Alarms a({.silence_minutes = 60, .signature_failures_per_minute = 10});
  a.stats.last_verified_ms = kStart;
  a.stats.signature_failures = 9;
  BOOST_TEST(a.alarms.check(kStart + kMinute).signature_failures == 0u);  // 9 < 10

  a.stats.signature_failures += 12;
  metrics::AlarmsRaised raised;
  const std::string burst = logged_by([&] { raised = a.alarms.check(kStart + 2 * kMinute); });
  BOOST_TEST(raised.signature_failures == 12u);
  BOOST_TEST(burst.find("\"signature_failures\"") != std::string::npos, burst);
  BOOST_TEST(burst.find("\"last_minute\":12") != std::string::npos, burst);

  a.stats.signature_failures += 10;
  BOOST_TEST(a.alarms.check(kStart + 3 * kMinute).signature_failures == 10u);
  BOOST_TEST(a.alarms.check(kStart + 4 * kMinute).signature_failures == 0u);  // the burst is over
}

BOOST_AUTO_TEST_CASE(failures_before_the_alarms_started_are_not_a_burst) {
  boost::asio::io_context io;
  http::WebhookStats stats;
  stats.last_verified_ms = kStart;
  stats.signature_failures = 500;
  metrics::DeliveryAlarms alarms(io, stats, {.silence_minutes = 60, .signature_failures_per_minute = 10});
  BOOST_TEST(alarms.check(kStart + kMinute).signature_failures == 0u);
}

// [[service.teams]]: each team has a silence of its own, logged with its id; deliveries
// for another team do not end it.
BOOST_AUTO_TEST_CASE(a_silent_team_is_logged_with_its_id_while_others_deliver) {
  Alarms a({.silence_minutes = 60, .signature_failures_per_minute = 0});
  a.stats.team_ids = {"team-eu", "team-us"};
  a.stats.team_last_verified_ms = std::make_unique<std::atomic<int64_t>[]>(2);
  a.stats.team_last_verified_ms[0] = kStart;
  a.stats.team_last_verified_ms[1] = kStart + 60 * kMinute;
  a.stats.last_verified_ms = kStart + 60 * kMinute;  // deliveries keep coming, for team-us only

  metrics::AlarmsRaised raised;
  const std::string began = logged_by([&] { raised = a.alarms.check(kStart + 60 * kMinute); });
  BOOST_TEST(!raised.silence_began);
  BOOST_TEST(raised.teams_silent == std::vector<std::string>{"team-eu"}, boost::test_tools::per_element());
  BOOST_TEST(began.find(R"("event":"no_verified_delivery","team":"team-eu","minutes":60)") != std::string::npos,
             began);
  BOOST_TEST(began.find("team-us") == std::string::npos, began);
  // Once per episode.
  BOOST_TEST(logged_by([&] { raised = a.alarms.check(kStart + 90 * kMinute); }).empty());

  a.stats.team_last_verified_ms[0] = kStart + 95 * kMinute;
  const std::string resumed = logged_by([&] { (void)a.alarms.check(kStart + 96 * kMinute); });
  BOOST_TEST(resumed.find(R"("event":"deliveries_resumed","team":"team-eu")") != std::string::npos, resumed);
}

BOOST_AUTO_TEST_SUITE_END()
