// JSON output escaping (common/json_writer.h) and stored JSON put on one line
// (common/json_minify.h): every output path relies on them.
#include <boost/test/unit_test.hpp>

#include "common/base64.h"
#include "common/json_minify.h"
#include "common/json_writer.h"

BOOST_AUTO_TEST_SUITE(json_writer_test)

BOOST_AUTO_TEST_CASE(escapes_control_quotes_and_invalid_utf8) {
  std::string out;
  hh::json::append_string(out, std::string("a\"b\\c\n\x01\xC3\xA9\xFF", 10));
  BOOST_TEST(out == "\"a\\\"b\\\\c\\n\\u0001\xC3\xA9\xEF\xBF\xBD\"");
}

BOOST_AUTO_TEST_CASE(utf8_validation) {
  BOOST_TEST(hh::json::is_valid_utf8("plain"));
  BOOST_TEST(hh::json::is_valid_utf8("\xE2\x82\xAC"));
  BOOST_TEST(!hh::json::is_valid_utf8("\xC0\x80"));          // overlong
  BOOST_TEST(!hh::json::is_valid_utf8("\xED\xA0\x80"));      // surrogate
  BOOST_TEST(!hh::json::is_valid_utf8("\xE2\x82"));          // truncated
}

BOOST_AUTO_TEST_CASE(object_writer) {
  std::string out;
  hh::json::ObjectWriter(out).string("a", "x").integer("n", -3).number("f", 0.5).boolean("b", true).null("z").close();
  BOOST_TEST(out == R"({"a":"x","n":-3,"f":0.5,"b":true,"z":null})");
}

BOOST_AUTO_TEST_CASE(base64_round_trip_and_strictness) {
  for (const std::string& s : std::vector<std::string>{"", "f", "fo", "foo", "foob", std::string("\0\xff\x10", 3)}) {
    BOOST_TEST(*hh::base64_decode(hh::base64_encode(s)) == s);
  }
  BOOST_TEST(!hh::base64_decode("abc").has_value());
  BOOST_TEST(!hh::base64_decode("ab c").has_value());
  BOOST_TEST(!hh::base64_decode("a===").has_value());
}

BOOST_AUTO_TEST_CASE(minify_drops_whitespace_between_tokens_only) {
  std::string out = "x:";
  hh::json::append_minified(out, "{\n  \"a b\": [1.50, -0.0, 1e3 ],\r\n\t\"c\" : \"  two\\nlines \\\" \"\n}\n");
  BOOST_TEST(out == "x:{\"a b\":[1.50,-0.0,1e3],\"c\":\"  two\\nlines \\\" \"}");
  out.clear();
  hh::json::append_minified(out, "42");
  BOOST_TEST(out == "42");
  // Not JSON (a string never closed): still one line.
  out.clear();
  hh::json::append_minified(out, "{\"a\":\"open\n\r}");
  BOOST_TEST(out.find_first_of("\r\n") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_minified_array_splits_into_its_elements_only_at_its_own_commas) {
  using Elements = std::vector<std::string_view>;
  const std::string text = R"([{"a":"x,]\"}","b":[1,2]},[3,{"c":{}}],"s,t",4.50,null])";
  BOOST_TEST((hh::json::array_elements(text) ==
              Elements{R"({"a":"x,]\"}","b":[1,2]})", R"([3,{"c":{}}])", R"("s,t")", "4.50", "null"}));
  BOOST_TEST(hh::json::array_elements("[]").empty());
  BOOST_TEST((hh::json::array_elements(R"({"data":[1,2]})") == Elements{R"({"data":[1,2]})"}));
  BOOST_TEST((hh::json::array_elements("7") == Elements{"7"}));
}

BOOST_AUTO_TEST_SUITE_END()  // json_writer_test
