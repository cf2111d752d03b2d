// The Retry-After header's two forms (common/http_client/retry_after.h), which the
// fetcher's failure policy and `replay --to` both read.
#include <boost/test/unit_test.hpp>

#include "common/http_client/retry_after.h"

BOOST_AUTO_TEST_SUITE(retry_after_test)

using hh::http_client::parse_retry_after;

BOOST_AUTO_TEST_CASE(retry_after_header_forms) {
  BOOST_TEST(parse_retry_after("120", 0).value_or(-1) == 120);
  BOOST_TEST(parse_retry_after(" 0 ", 0).value_or(-1) == 0);
  // Sun, 06 Nov 1994 08:49:37 GMT = 784111777
  BOOST_TEST(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 90).value_or(-1) == 90);
  BOOST_TEST(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 + 90).value_or(-1) == 0);
  // The obsolete forms a recipient must accept (RFC 9110 §5.6.7): RFC 850 and asctime.
  BOOST_TEST(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", 784111777 - 90).value_or(-1) == 90);
  BOOST_TEST(parse_retry_after("Sun Nov  6 08:49:37 1994", 784111777 - 90).value_or(-1) == 90);
  // Tue, 01 Dec 2026 17:04:39 GMT = 1796144679: a two-digit year in this century.
  BOOST_TEST(parse_retry_after("Tuesday, 01-Dec-26 17:04:39 GMT", 1796144679 - 120).value_or(-1) == 120);
  BOOST_TEST(parse_retry_after("Tue Dec  1 17:04:39 2026", 1796144679 - 120).value_or(-1) == 120);
  BOOST_TEST(!parse_retry_after("Sunday, 06-Nov-94 08:49:37", 0));
  BOOST_TEST(!parse_retry_after("", 0));
  BOOST_TEST(!parse_retry_after("12s", 0));
  BOOST_TEST(!parse_retry_after("tomorrow", 0));
}

BOOST_AUTO_TEST_SUITE_END()  // retry_after_test
