// Poisoned bodies: each must come back `invalid` with an error that says what is wrong,
// without throwing or crashing, and the same parser must then parse a good row exactly.
#include <boost/test/unit_test.hpp>

#include <string>

#include "events/envelope_peek.h"
#include "fixtures.h"

namespace hh::events {

BOOST_AUTO_TEST_SUITE(poisoned_input_test)

namespace {

using test::ParserFixture;
using test::read_example;

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string summary_with(std::string_view member) {
  return R"({"event_type":"daily.data.sleep.created","user_id":"u","data":{"id":"s1","source":{"provider":"oura"},)" +
         std::string(member) + "}}";
}
std::string sample_with(std::string_view member) {
  return R"({"event_type":"daily.data.heartrate.created","user_id":"u","data":{"source":{"provider":"p"},"data":[{"timestamp":"2024-01-01T00:00:00Z",)" +
         std::string(member) + "}]}}";
}

// After every poisoned body the parser must still read the heartrate example exactly.
void expect_good_row_after(ParserFixture& f) {
  const ParseResult r = f.example("timeseries-heartrate.json");
  BOOST_TEST(r.error == "");
  BOOST_REQUIRE(f.rows.sample_batches.size() == 1u);
  const SampleBatch& b = f.rows.sample_batches[0];
  BOOST_TEST(b.provider == "garmin");
  BOOST_REQUIRE(b.samples.size() == 3u);
  BOOST_TEST(b.samples[1].t_ms == 1717305305000);
  BOOST_TEST(std::get<double>(b.samples[1].value) == 97.5);
  BOOST_TEST(b.samples[0].extra_json == R"({"id":9001})");
}

void expect_invalid(ParserFixture& f, const std::string& body, std::string_view error_prefix) {
  const ParseResult r = f.webhook(body);
  BOOST_TEST((r.status == Status::invalid));
  BOOST_TEST(r.error.substr(0, error_prefix.size()) == error_prefix, "error was: " << r.error);
  BOOST_TEST(f.rows.summaries.empty());
  BOOST_TEST(f.rows.sample_batches.empty());
  expect_good_row_after(f);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(poisoned, ParserFixture)

BOOST_AUTO_TEST_CASE(invalid_utf8_anywhere) {
  expect_invalid(*this, summary_with("\"note\":\"caf\xC3\x28\""), "body: not valid UTF-8");
  expect_invalid(*this, summary_with("\"n\xFFte\":1"), "body: not valid UTF-8");
  // In a member nobody reads (the envelope's team_id).
  expect_invalid(*this, "{\"event_type\":\"ping\",\"team_id\":\"\xED\xA0\x80\",\"data\":{}}", "body: not valid UTF-8");
}

// PostgreSQL's text and jsonb cannot hold U+0000: a body that spells it in any string is
// refused on both backends alike (not kept whole by one and cut short by the other).
BOOST_AUTO_TEST_CASE(nul_escape_in_any_string) {
  const std::string_view error = "body: a string holds \\u0000 (U+0000), which the store does not keep";
  expect_invalid(*this, summary_with(R"("note":"a\u0000b")"), error);
  expect_invalid(*this, sample_with(R"("value":"x\u0000")"), error);
  expect_invalid(*this, summary_with(R"("nested":{"deep":["\\\u0000"]})"), error);  // \\ then \u0000
  // A backslash written as \\ before "u0000" is text, not the escape.
  const ParseResult kept = webhook(summary_with(R"("note":"a\\u0000b")"));
  BOOST_TEST(kept.error == "");
  BOOST_TEST((kept.status == Status::processed));
  // The envelope peek at ingest does not keep an event type that holds it.
  BOOST_TEST(!events::peek_event_type(R"({"event_type":"daily.data.sleep\u0000.created","data":{}})"));
  BOOST_TEST(events::peek_event_type(R"({"event_type":"daily.data.sleep.created","data":{}})").has_value());
}

BOOST_AUTO_TEST_CASE(deep_nesting) {
  expect_invalid(*this, summary_with("\"deep\":" + nested(1000)), "data.deep: nesting deeper than the limit");
  expect_invalid(*this, R"({"event_type":"ping","data":{},"team_id":)" + nested(1000) + "}",
                 "team_id: nesting deeper than the limit");
  expect_invalid(*this, sample_with("\"tags\":" + nested(1000)), "data.data[0].tags: nesting deeper than the limit");
  // Unbalanced: 1,000 openers and no closers.
  expect_invalid(*this, summary_with("\"deep\":" + std::string(1000, '[')), "");
}

BOOST_AUTO_TEST_CASE(number_overflow) {
  expect_invalid(*this, sample_with("\"value\":1e400"), "data.data[0].value: number out of range or malformed");
  expect_invalid(*this, sample_with("\"value\":99999999999999999999"), "data.data[0].value: integer out of range (int64)");
  expect_invalid(*this, sample_with("\"timezone_offset\":99999999999999999999"), "data.data[0].timezone_offset: integer out of range (int64)");
  // Whole, but written with an exponent: out of range, not "a fraction" (attack of a4c8a9d's session).
  expect_invalid(*this, sample_with("\"timezone_offset\":1e20"), "data.data[0].timezone_offset: integer out of range (int64)");
  expect_invalid(*this, sample_with("\"timezone_offset\":1.5"), "data.data[0].timezone_offset: expected an integer, got a fraction");
  {
    // Within int64, with an exponent: read as the integer it is (the bound is 2^63, exact).
    const ParseResult within = webhook(sample_with("\"timezone_offset\":9.21e18"));
    BOOST_TEST(within.error == "");
    BOOST_REQUIRE(rows.sample_batches.size() == 1u);
    BOOST_TEST(rows.sample_batches[0].samples[0].timezone_offset.value_or(0) == int64_t{9210000000000000000});
  }
  expect_invalid(*this, sample_with("\"timezone_offset\":9.3e18"), "data.data[0].timezone_offset: integer out of range (int64)");
  expect_invalid(*this, sample_with("\"systolic\":-1e400"), "data.data[0].systolic: number out of range or malformed");
  // In members that are only stored, not read: still checked.
  expect_invalid(*this, summary_with("\"score\":1e400"), "data.score: number out of range or malformed");
  // Past int64 but within uint64: refused alike, never stored as a rounded double.
  expect_invalid(*this, sample_with("\"value\":9223372036854775808"), "data.data[0].value: integer out of range (int64)");
  expect_invalid(*this, sample_with("\"value\":18446744073709551615"), "data.data[0].value: integer out of range (int64)");
  // And below INT64_MIN, which simdjson types as a signed integer it then cannot give.
  expect_invalid(*this, sample_with("\"value\":-9223372036854775809"), "data.data[0].value: integer out of range (int64)");
  expect_invalid(*this, sample_with("\"timezone_offset\":-123456789012345678901"),
                 "data.data[0].timezone_offset: integer out of range (int64)");
  expect_invalid(*this, sample_with("\"systolic\":10000000000000000000"), "data.data[0].systolic: integer out of range (int64)");
  // In a member only kept as JSON (a summary's, an unknown one): kept as sent, applied.
  const ParseResult kept = webhook(summary_with("\"weight\":12345678901234567890"));
  BOOST_TEST(kept.error == "");
  BOOST_TEST((kept.status == Status::processed));
  // Past 64 bits, too (valid JSON; simdjson 3.0.1 holds no such integer): a summary's
  // member, a sample's unknown one and its deprecated id keep their digits.
  for (const std::string big : {"123456789012345678901", "-123456789012345678901234567890"}) {
    BOOST_TEST_CONTEXT(big) {
      const ParseResult summary = webhook(summary_with("\"big\":" + big));
      BOOST_TEST(summary.error == "");
      BOOST_TEST((summary.status == Status::processed));
      BOOST_REQUIRE(rows.summaries.size() == 1u);
      BOOST_TEST(rows.summaries[0].data_json.find("\"big\":" + big) != std::string::npos);
      const ParseResult sample = webhook(sample_with("\"value\":1,\"id\":" + big + ",\"count\":" + big));
      BOOST_TEST(sample.error == "");
      BOOST_REQUIRE(rows.sample_batches.size() == 1u);
      BOOST_TEST(rows.sample_batches[0].samples[0].extra_json.find("\"count\":" + big) != std::string::npos);
    }
  }
  // Not integers, or not JSON: still refused.
  expect_invalid(*this, summary_with("\"big\":123456789012345678901e400"), "data.big: number out of range or malformed");
  expect_invalid(*this, summary_with("\"big\":0123456789012345678901"), "");
}

// Floats of more than 19 significant digits are read as the nearest double (simdjson
// 3.0.1's get_number() read them as 0), in sample values, blood pressure and summaries.
BOOST_AUTO_TEST_CASE(long_floats_keep_their_value) {
  const std::pair<std::string_view, double> cases[] = {
      {"0.12345678901234567890", 0.12345678901234567890},
      {"36.600000000000001421085", 36.6},
      {"72.00000000000000000001", 72.0},
      {"1234567890123456789.0", 1234567890123456789.0},
      {"-100000000000000000000.0", -1e20},
      {"12345678901234567890e0", 12345678901234567890e0},
      // "0." and 21 digits or more: simdjson 3.0.1's get_double() gave 0.0077… for 0.1.
      {"0.100000000000000000000", 0.1},
      {"0.12345678901234567890123", 0.12345678901234567890123},
      {"0.1000000000000000055511151231257827", 0.1},
      {"-0.30000000000000000000001", -0.3},
      {"0.000000000000000000000000012345", 1.2345e-26},
  };
  for (const auto& [text, expected] : cases) {
    BOOST_TEST_CONTEXT(text) {
      const ParseResult r = webhook(sample_with("\"value\":" + std::string(text) + ",\"systolic\":" + std::string(text)));
      BOOST_TEST(r.error == "");
      BOOST_REQUIRE(rows.sample_batches.size() == 1u);
      BOOST_REQUIRE(rows.sample_batches[0].samples.size() == 1u);
      const auto& sample = rows.sample_batches[0].samples[0];
      BOOST_REQUIRE(std::holds_alternative<double>(sample.value));
      BOOST_TEST(std::get<double>(sample.value) == expected);
      BOOST_TEST(sample.systolic.value_or(0) == expected);
    }
  }
}

BOOST_AUTO_TEST_CASE(huge_string) {
  const std::string ten_mb(10 * 1024 * 1024, 'a');
  expect_invalid(*this, summary_with("\"note\":\"" + ten_mb + "\""), "data.note: string longer than 1048576 bytes");
  expect_invalid(*this, sample_with("\"unit\":\"" + ten_mb + "\""), "data.data[0].unit: string longer than 1048576 bytes");
  // As a member name, which would otherwise be copied into samples.extra.
  expect_invalid(*this, sample_with("\"" + ten_mb + "\":1"), "data.data[0]: member name longer than the string limit");
}

// An envelope member given twice meant two things: the event type was read from the first,
// the user from the last (attack, stop 82). Invalid, naming the member; inside `data`, a
// repeated member stays the JSON library's business (the service sends none).
BOOST_AUTO_TEST_CASE(an_envelope_member_given_twice_is_invalid) {
  const std::string data = R"("data":{"id":"s1","user_id":"u","source":{"provider":"oura"}})";
  expect_invalid(*this, R"({"event_type":"daily.data.body.created","event_type":"daily.data.sleep.created",)" + data + "}",
                 "event_type: given twice");
  expect_invalid(*this, R"({"event_type":"daily.data.sleep.created","user_id":"a","user_id":"b",)" + data + "}",
                 "user_id: given twice");
  expect_invalid(*this, R"({"event_type":"daily.data.sleep.created","team_id":"a",)" + data + R"(,"team_id":"b"})",
                 "team_id: given twice");
  expect_invalid(*this, R"({"event_type":"daily.data.sleep.created",)" + data + "," + data + "}", "data: given twice");
}

// The limit is on the text, not on its escaping: 400,000 "é" written "\u00e9" are 2.4 MB
// as sent and 800,000 bytes decoded (they were refused as "longer than 1048576 bytes", and
// the same text sent unescaped was taken). One byte past the limit, decoded, still is not.
BOOST_AUTO_TEST_CASE(the_string_limit_counts_the_decoded_text) {
  std::string escaped;
  for (int i = 0; i < 400'000; ++i) escaped += "\\u00e9";
  const ParseResult r = webhook(summary_with("\"note\":\"" + escaped + "\""));
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.status != Status::invalid));
  BOOST_TEST(rows.summaries.size() == 1u);
  std::string past_limit;
  for (size_t i = 0; i < (size_t{1} << 20) / 2; ++i) past_limit += "\\u00e9";  // exactly 1 MiB decoded
  past_limit += "a";
  expect_invalid(*this, summary_with("\"note\":\"" + past_limit + "\""), "data.note: string longer than 1048576 bytes");
}

BOOST_AUTO_TEST_CASE(truncated_json) {
  const std::string good = read_example("timeseries-heartrate.json");
  BOOST_REQUIRE(good.back() == '\n');
  for (size_t cut : {good.size() / 4, good.size() / 2, good.size() - 3, good.size() - 2}) {
    BOOST_TEST_CONTEXT("cut at " << cut) { expect_invalid(*this, good.substr(0, cut), ""); }
  }
  const std::string sleep = read_example("summary-sleep.json");
  expect_invalid(*this, sleep.substr(0, sleep.size() / 2), "");
}

BOOST_AUTO_TEST_CASE(malformed_values_in_stored_json) {
  expect_invalid(*this, summary_with("\"flag\":tru"), "data.flag: not a valid literal");
  expect_invalid(*this, summary_with("\"flag\":nul"), "data.flag: not a valid literal");
  expect_invalid(*this, summary_with("\"note\":\"bad \\x escape\""), "data.note: malformed string (bad escape)");
  expect_invalid(*this, summary_with("\"list\":[1,,2]"), "data.list: not valid JSON");
  expect_invalid(*this, summary_with("\"list\":[1,2}"), "");
  expect_invalid(*this, summary_with("\"n\":NaN"), "");
  expect_invalid(*this, summary_with("\"n\":01"), "");
  expect_invalid(*this, std::string(R"({"event_type":"daily.data.sleep.created","data":{"id":"s1","note":"line)") + "\n" + R"(break"}})",
                 "");
  expect_invalid(*this, sample_with("\"tags\":[\"a\",tru]"), "data.data[0].tags: not a valid literal");
}

BOOST_AUTO_TEST_CASE(content_after_the_object) {
  expect_invalid(*this, summary_with("\"x\":1") + R"( {"event_type":"ping"})", "body: content after the top-level object");
  // Said as what it is, not "ended early in the middle of an object" (black-box pass).
  expect_invalid(*this, summary_with("\"x\":1") + " trailing", "body: content after the top-level object");
  expect_invalid(*this, summary_with("\"x\":1") + " x", "body: content after the top-level object");
  expect_invalid(*this, summary_with("\"x\":1") + "]", "body: content after the top-level object");
  // Cut short is still said so.
  expect_invalid(*this, R"({"event_type":"daily.data.sleep.created","data":{"id":"s1")", "body: not valid JSON (JSON document ended early");
  expect_invalid(*this, R"({"event_type":"ping","data":{},})", "body: not valid JSON");
}

BOOST_AUTO_TEST_CASE(document_over_the_parser_limit) {
  ParseLimits limits;
  limits.max_document_bytes = 4096;
  limits.retained_bytes = 1024;
  ParserFixture small(limits);
  const std::string big = summary_with("\"note\":\"" + std::string(5000, 'z') + "\"");
  const ParseResult r = small.webhook(big);
  BOOST_TEST((r.status == Status::invalid));
  BOOST_TEST(r.error == "body: " + std::to_string(big.size()) + " bytes, over the parser's limit of 4096");
  // A 3 KB body (over retained_bytes) then small ones: buffers are released and rebuilt.
  BOOST_TEST(small.webhook(summary_with("\"note\":\"" + std::string(3000, 'y') + "\"")).error == "");
  BOOST_TEST(small.rows.summaries.at(0).data_json.size() > 3000u);
  expect_good_row_after(small);
}

BOOST_AUTO_TEST_CASE(wrong_types_for_known_members) {
  expect_invalid(*this, summary_with("\"user_id\":{\"a\":1}"), "data.user_id: must be a string or a number, got an object");
  expect_invalid(*this, summary_with("\"user_id\":true"), "data.user_id: must be a string or a number, got a boolean");
  expect_invalid(*this, R"({"event_type":"daily.data.sleep.created","data":{"id":"s1","source":{"provider":["oura"]}}})",
                 "data.source.provider: expected a string, got an array");
  expect_invalid(*this, sample_with("\"timezone_offset\":\"+01:00\""), "data.data[0].timezone_offset: expected an integer, got a string");
  expect_invalid(*this, sample_with("\"timezone_offset\":3600.5"), "data.data[0].timezone_offset: expected an integer, got a fraction");
  expect_invalid(*this, R"({"event_type":"daily.data.heartrate.created","user_id":"u","data":{"source":{"provider":"p"},"data":[1,2]}})",
                 "data.data[0]: expected an object, got a number");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // poisoned_input_test

}  // namespace hh::events
