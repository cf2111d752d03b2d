// ISO 8601 → UTC milliseconds, and back (common/timestamp.h).
#include <boost/test/unit_test.hpp>

#include "common/timestamp.h"

BOOST_AUTO_TEST_SUITE(timestamp_test)

using hh::parse_iso8601_ms;

BOOST_AUTO_TEST_CASE(offsets_normalise_to_one_instant) {
  const auto utc = parse_iso8601_ms("2023-05-16T10:00:00Z");
  BOOST_REQUIRE(utc);
  BOOST_TEST(*utc == 1684231200000);
  BOOST_TEST(*parse_iso8601_ms("2023-05-16T11:00:00+01:00") == *utc);
  BOOST_TEST(*parse_iso8601_ms("2023-05-16T10:00:00+00:00") == *utc);
  BOOST_TEST(*parse_iso8601_ms("2023-05-16T05:30:00-0430") == *utc);
  BOOST_TEST(*parse_iso8601_ms("2023-05-16T10:00:00") == *utc);  // no offset: UTC
  BOOST_TEST(*parse_iso8601_ms("2023-05-16 10:00:00Z") == *utc);
}

BOOST_AUTO_TEST_CASE(fractions_dates_and_edges) {
  BOOST_TEST(*parse_iso8601_ms("2023-05-16T10:00:00.123456Z") == 1684231200123);
  BOOST_TEST(*parse_iso8601_ms("2023-05-16T10:00:00.5Z") == 1684231200500);
  BOOST_TEST(*parse_iso8601_ms("2023-05-16") == 1684195200000);
  BOOST_TEST(*parse_iso8601_ms("1970-01-01T00:00:00Z") == 0);
  BOOST_TEST(*parse_iso8601_ms("1969-12-31T23:59:59Z") == -1000);
  BOOST_TEST(*parse_iso8601_ms("2024-02-29T00:00:00Z") == 1709164800000);
  // A leap second is the last millisecond of second 59, apart from the next second (whose
  // sample it replaced, folded into it).
  BOOST_TEST(*parse_iso8601_ms("2016-12-31T23:59:60Z") == *parse_iso8601_ms("2017-01-01T00:00:00Z") - 1);
  BOOST_TEST(*parse_iso8601_ms("2016-12-31T23:59:60.5Z") == *parse_iso8601_ms("2016-12-31T23:59:59.999Z"));
}

BOOST_AUTO_TEST_CASE(rejects_what_is_not_a_time) {
  for (const char* bad : {"", "x", "2023-13-01T00:00:00Z", "2023-02-30", "2023-05-16T25:00:00Z", "2023-05-16T10:00:00+",
                          "2023-05-16T10:00:00Zjunk", "2023-05-16T10:00:00.Z", "20230516T100000Z", "2023-5-16"}) {
    BOOST_TEST(!parse_iso8601_ms(bad).has_value(), bad);
  }
}

BOOST_AUTO_TEST_CASE(formats_rfc3339_with_millis) {
  BOOST_TEST(hh::format_rfc3339_ms(1684231200123) == "2023-05-16T10:00:00.123Z");
  BOOST_TEST(hh::format_rfc3339_ms(-1000) == "1969-12-31T23:59:59.000Z");
  for (int64_t ms : {int64_t{0}, int64_t{951782400000}, int64_t{4102444799999}}) {
    BOOST_TEST(*parse_iso8601_ms(hh::format_rfc3339_ms(ms)) == ms);
  }
}

// A year RFC 3339 cannot write is written whole and signed, never wrapped to another
// instant (10000-01-01 was written 0000-01-01: a backfill through 9999-12-31 was queued
// with that end, attack bbS); such text is not read back as a time.
BOOST_AUTO_TEST_CASE(a_year_past_9999_or_before_0000_is_never_wrapped) {
  BOOST_TEST(hh::format_rfc3339_ms(hh::kLastRfc3339Ms) == "9999-12-31T23:59:59.999Z");
  BOOST_TEST(*parse_iso8601_ms("9999-12-31T23:59:59.999Z") == hh::kLastRfc3339Ms);
  BOOST_TEST(hh::format_rfc3339_ms(hh::kLastRfc3339Ms + 1) == "+10000-01-01T00:00:00.000Z");
  BOOST_TEST(hh::format_rfc3339_ms(-62167219200000) == "0000-01-01T00:00:00.000Z");
  BOOST_TEST(hh::format_rfc3339_ms(-62167219200001) == "-0001-12-31T23:59:59.999Z");
  BOOST_TEST(!parse_iso8601_ms(hh::format_rfc3339_ms(hh::kLastRfc3339Ms + 1)));
}

BOOST_AUTO_TEST_CASE(time_bounds_accept_unix_seconds) {
  BOOST_TEST(*hh::parse_time_bound_ms("1684231200") == 1684231200000);
  BOOST_TEST(*hh::parse_time_bound_ms("2023-05-16T10:00:00Z") == 1684231200000);
  BOOST_TEST(!hh::parse_time_bound_ms("yesterday").has_value());
}

// A bound is cut as a stored time is (digits below the millisecond dropped), so a bound
// equal to a sample's sent time finds it; they were rounded up (.123456 to .124).
BOOST_AUTO_TEST_CASE(time_bounds_drop_digits_below_the_millisecond_as_stored_times_do) {
  for (const char* text : {"2023-05-16T10:00:00.123456Z", "2023-05-16T10:00:00,1239Z", "2023-05-16T12:00:00.123999+02:00"}) {
    BOOST_TEST(*hh::parse_time_bound_ms(text) == *parse_iso8601_ms(text), text);
    BOOST_TEST(*hh::parse_time_bound_ms(text) == 1684231200123, text);
  }
  BOOST_TEST(*hh::parse_time_bound_ms("1969-12-31T23:59:59.9999Z") == -1);
  BOOST_TEST(hh::same_millisecond_note(1684231202999, 1684231202999, "2023-05-16T10:00:02.9995Z",
                                        "2023-05-16T10:00:02.9999Z") == " (both are 2023-05-16T10:00:02.999Z to the millisecond)");
  BOOST_TEST(hh::same_millisecond_note(1684231202999, 1684231203000, "2023-05-16T10:00:02.9995Z", "1684231203").empty());
  BOOST_TEST(hh::same_millisecond_note(1684231203000, 1684231203000, "1684231203", "1684231203").empty());
}

BOOST_AUTO_TEST_CASE(regression_huge_unix_seconds_do_not_overflow) {
  // fuzz_timestamp: "9223372036854776" * 1000 overflowed int64 (undefined behaviour).
  BOOST_TEST(!hh::parse_time_bound_ms("9223372036854776").has_value());
  BOOST_TEST(!hh::parse_time_bound_ms("-9223372036854776").has_value());
  // The years RFC 3339 writes, and no more: a console chart between bounds further apart
  // overflowed `end - start` and lost its downsampling.
  BOOST_TEST(!hh::parse_time_bound_ms("9223372036854").has_value());
  BOOST_TEST(!hh::parse_time_bound_ms("-9223372036854775").has_value());
  BOOST_TEST(*hh::parse_time_bound_ms("253402300799") == 253402300799000);  // 9999-12-31T23:59:59Z
  BOOST_TEST(!hh::parse_time_bound_ms("253402300800").has_value());
  BOOST_TEST(*hh::parse_time_bound_ms("-62167219200") == -62167219200000);  // 0000-01-01T00:00:00Z
  BOOST_TEST(!hh::parse_time_bound_ms("-62167219201").has_value());
}

BOOST_AUTO_TEST_SUITE_END()  // timestamp_test
