// The shared JSON scanner (common/json_scan.h): the fetcher's checks of fetched pages and
// the workout-stream reader's tokens. Error texts and byte offsets are what the fetcher
// logs and stores as a job's last error.
#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>

#include "common/json_scan.h"

BOOST_AUTO_TEST_SUITE(json_scan_test)

using namespace hh::json;

BOOST_AUTO_TEST_SUITE(json_scan)

BOOST_AUTO_TEST_CASE(accepts_valid_documents) {
  for (const char* text : {"{}", "[]", " {\"a\":[1,-2.5e3,true,false,null,\"x\\u00e9\\n\"]} ", "0", "\"s\"",
                           "{\"time\":[1626625123,1626625140],\"temperature\":null}"}) {
    BOOST_TEST_INFO(text);
    BOOST_TEST(check_json(text).ok());
  }
}

BOOST_AUTO_TEST_CASE(rejects_malformed_documents_naming_the_offset) {
  for (const char* text : {"", "{", "{\"a\":[1,2}", "{\"a\" 1}", "[1,]", "{\"a\":01}", "{\"a\":1} x", "\"\x01\"",
                           "{\"a\":tru}", "{\"a\":\"\\q\"}", "[1.]", "[-]"}) {
    BOOST_TEST_INFO(text);
    BOOST_TEST(!check_json(text).ok());
  }
  BOOST_TEST(check_json("{\"a\":[1,2}").error() == "malformed JSON at byte 9: expected ',' or ']'");
}

BOOST_AUTO_TEST_CASE(each_problem_and_where_it_is) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "malformed JSON at byte 0: unexpected end of input"},
      {"{", "malformed JSON at byte 1: expected a member name"},
      {"{\"a\" 1}", "malformed JSON at byte 5: expected ':'"},
      {"[1,]", "malformed JSON at byte 3: expected a value"},
      {"{\"a\":01}", "malformed JSON at byte 6: expected ',' or '}'"},
      {"{\"a\":1} x", "malformed JSON at byte 8: unexpected text after the document"},
      {"\"\x01\"", "malformed JSON at byte 1: control character in a string"},
      {"{\"a\":tru}", "malformed JSON at byte 5: unexpected character"},
      {"{\"a\":\"\\q\"}", "malformed JSON at byte 7: bad escape"},
      {"\"\\u12\"", "malformed JSON at byte 2: bad \\u escape"},
      {"\"abc", "malformed JSON at byte 4: unterminated string"},
      {"[1.]", "malformed JSON at byte 3: expected digits after '.'"},
      {"[1e]", "malformed JSON at byte 3: expected digits in the exponent"},
      {"[-]", "malformed JSON at byte 2: expected a value"},
      {"[[1]", "malformed JSON at byte 4: unexpected end of input in an array"},
      {"{\"a\":1", "malformed JSON at byte 6: unexpected end of input in an object"},
  };
  for (const auto& [text, error] : cases) {
    BOOST_TEST_INFO(text);
    BOOST_TEST(check_json(text).error() == error);
  }
  BOOST_TEST(check_json("[[[]]]", 2).error() == "malformed JSON at byte 2: nested too deeply");
}

BOOST_AUTO_TEST_CASE(limits_nesting) {
  BOOST_TEST(!check_json(std::string(100, '[') + std::string(100, ']')).ok());
  BOOST_TEST(check_json(std::string(10, '[') + std::string(10, ']')).ok());
  BOOST_TEST(check_json(std::string(64, '[') + std::string(64, ']')).ok());
  BOOST_TEST(!check_json(std::string(65, '[') + std::string(65, ']')).ok());
  BOOST_TEST(check_json("1", 0).ok());
  BOOST_TEST(!check_json("[]", 0).ok());
}

BOOST_AUTO_TEST_CASE(reads_top_level_members_only) {
  const std::string body = R"({"groups":{"next_cursor":"inner"},"next_cursor" : "abc\/=","x":1})";
  BOOST_TEST(top_level_member(body, "next_cursor").value() == "\"abc\\/=\"");
  BOOST_TEST(top_level_member(body, "groups").value() == "{\"next_cursor\":\"inner\"}");
  BOOST_TEST(!top_level_member(body, "missing"));
  BOOST_TEST(!top_level_member("[1]", "x"));
  BOOST_TEST(decode_string("\"abc\\/=\"").value() == "abc/=");
  BOOST_TEST(decode_string("\"\\u00e9\\ud83d\\ude00\"").value() == "\xc3\xa9\xf0\x9f\x98\x80");
  BOOST_TEST(!decode_string("null"));
}

BOOST_AUTO_TEST_CASE(top_level_member_takes_the_first_match_as_written) {
  BOOST_TEST(top_level_member(R"({"a":1,"a":2})", "a").value() == "1");
  BOOST_TEST(!top_level_member(R"({"\u0061":1})", "a"));
  BOOST_TEST(top_level_member(R"({"\u0061":1})", "\\u0061").value() == "1");
  BOOST_TEST(!top_level_member("{}", "a"));
  BOOST_TEST(!top_level_member(" ", "a"));
}

BOOST_AUTO_TEST_CASE(decodes_every_escape) {
  BOOST_TEST(decode_string(R"("\b\f\n\r\t\"\\\/")").value() == "\b\f\n\r\t\"\\/");
  BOOST_TEST(decode_string(R"("")").value() == "");
  BOOST_TEST(!decode_string(R"("\q")"));
  BOOST_TEST(!decode_string(R"("\u12")"));
  BOOST_TEST(!decode_string(R"("a\")"));  // the backslash escapes the closing quote
  BOOST_TEST(!decode_string("\"abc"));
}

BOOST_AUTO_TEST_CASE(first_byte_after_whitespace) {
  BOOST_TEST(first_byte(" \r\n\t{}") == '{');
  BOOST_TEST(first_byte("[1]") == '[');
  BOOST_TEST(first_byte(" \n") == '\0');
  BOOST_TEST(first_byte("") == '\0');
}

BOOST_AUTO_TEST_CASE(scanner_reads_a_token_and_moves_past_it) {
  Scanner s(R"( "a\"b" -12.5e+3 null ,)");
  s.skip_space();
  std::string_view content;
  BOOST_TEST(s.string(&content));
  BOOST_TEST(content == R"(a\"b)");
  BOOST_TEST(s.offset() == 7u);
  s.skip_space();
  std::string_view number;
  BOOST_TEST(s.number(&number));
  BOOST_TEST(number == "-12.5e+3");
  s.skip_space();
  BOOST_TEST(!s.skip(','));
  BOOST_TEST(s.literal("null"));
  s.skip_space();
  BOOST_TEST(s.peek() == ',');
  BOOST_TEST(s.skip(','));
  BOOST_TEST(s.at_end());
  BOOST_TEST(s.peek() == '\0');
  BOOST_TEST(s.problem().empty());
}

BOOST_AUTO_TEST_CASE(scanner_keeps_the_first_problem) {
  Scanner s("[1,2} x");
  BOOST_TEST(!s.value(8));
  BOOST_TEST(s.problem() == "expected ',' or ']'");
  BOOST_TEST(s.problem_offset() == 4u);
  BOOST_TEST(s.offset() == 4u);
  BOOST_TEST(!s.literal("true"));
  BOOST_TEST(s.problem() == "expected ',' or ']'");
  BOOST_TEST(s.problem_offset() == 4u);
}

BOOST_AUTO_TEST_CASE(a_copy_is_a_second_position) {
  Scanner first("[10,20]");
  BOOST_TEST(first.skip('['));
  Scanner second = first;
  std::string_view number;
  BOOST_TEST(first.number(&number));
  BOOST_TEST(number == "10");
  BOOST_TEST(second.offset() == 1u);
  BOOST_TEST(second.value(0));
  BOOST_TEST(second.offset() == 3u);
}

BOOST_AUTO_TEST_CASE(value_bounds_nesting) {
  BOOST_TEST(Scanner("1").value(0));
  Scanner flat("[]");
  BOOST_TEST(!flat.value(0));
  BOOST_TEST(flat.problem() == "nested too deeply");
  BOOST_TEST(Scanner("[{\"a\":1}]").value(2));
  Scanner deep("[[[1]]]");
  BOOST_TEST(!deep.value(2));
  BOOST_TEST(deep.problem_offset() == 2u);
  // The scanner's recursion is bounded by the caller's limit, not by the input.
  const std::string very_deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  BOOST_TEST(!Scanner(very_deep).value(kSimdjsonMaxDepth));
  BOOST_TEST(!check_json(very_deep).ok());
}

BOOST_AUTO_TEST_CASE(token_checks_a_token_but_not_its_place) {
  Scanner s(R"(]},:[{"x" 1.5, null])");
  size_t tokens = 0;
  for (s.skip_space(); !s.at_end(); s.skip_space()) {
    BOOST_REQUIRE(s.token());
    ++tokens;
  }
  BOOST_TEST(tokens == 11u);
}

BOOST_AUTO_TEST_CASE(token_bounds_a_scalar_as_simdjson_does) {
  const std::pair<const char*, size_t> bounded[] = {{"1", 1},  {"1,", 1},      {"1]", 1},       {"1}", 1},
                                                     {"1:", 1}, {"1 2", 1},     {"null\n", 4},   {"true,", 4},
                                                     {"-0.5e3]", 6}};
  for (const auto& [text, end] : bounded) {
    BOOST_TEST_INFO(text);
    Scanner s(text);
    BOOST_TEST(s.token());
    BOOST_TEST(s.offset() == end);
  }
  for (const char* text : {"01", "1x", "nullx", "1\"a\"", "1[", "tru", "\"\\q\"", "", "+1"}) {
    BOOST_TEST_INFO(text);
    BOOST_TEST(!Scanner(text).token());
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // json_scan_test
