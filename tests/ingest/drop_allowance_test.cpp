// The listener's allowance for bytes read after refusals only to be dropped
// (receiver/http/lingering_close.h): a token bucket of one second's worth.
#include <boost/test/unit_test.hpp>

#include "receiver/http/lingering_close.h"

BOOST_AUTO_TEST_SUITE(drop_allowance_test)

using hh::http::DropAllowance;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_CASE(holds_one_seconds_worth_and_refills_with_time) {
  const auto start = DropAllowance::Clock::time_point{} + 100s;
  DropAllowance allowance(1000, start);
  BOOST_TEST(allowance.take(600, start));
  BOOST_TEST(!allowance.take(600, start));  // 400 left: nothing is taken
  BOOST_TEST(allowance.take(400, start));
  BOOST_TEST(!allowance.take(1, start));
  BOOST_TEST(allowance.take(500, start + 500ms));  // half a second: half of it back
  BOOST_TEST(!allowance.take(1, start + 500ms));
  // A long quiet spell gives back one second's worth, never more.
  BOOST_TEST(!allowance.take(1001, start + 1h));
  BOOST_TEST(allowance.take(1000, start + 1h));
  BOOST_TEST(!allowance.take(1, start + 1h));
}

BOOST_AUTO_TEST_SUITE_END()
