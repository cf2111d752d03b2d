// The capture file format (replay/capture_file.h): exact lines, round trips including
// bodies that are not UTF-8, and malformed lines reported by line number.
#include <boost/test/unit_test.hpp>

#include "replay/capture_file.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(capture_file_test)

using namespace hh::replay;
using hh::test::TempDir;

namespace {

struct Read {
  std::vector<CaptureRecord> records;
  std::vector<std::pair<uint64_t, std::string>> bad;  // line, reason
  std::vector<uint64_t> record_lines;
};

Read read_all(const std::string& path) {
  auto reader = CaptureReader::open(path);
  BOOST_REQUIRE_MESSAGE(reader.ok(), reader.error());
  Read read;
  CaptureRecord record;
  std::string error;
  for (;;) {
    auto next = reader->next(record, error);
    BOOST_REQUIRE_MESSAGE(next.ok(), next.error());
    if (*next == CaptureReader::Next::end) break;
    if (*next == CaptureReader::Next::bad_line) {
      read.bad.emplace_back(reader->line_number(), error);
    } else {
      read.records.push_back(record);
      read.record_lines.push_back(reader->line_number());
    }
  }
  return read;
}

}  // namespace

BOOST_AUTO_TEST_CASE(line_is_written_exactly_as_specified) {
  std::string out;
  const std::vector<CaptureHeader> headers = {{"content-type", "application/json"}, {"svix-id", "msg_1"}};
  append_capture_line(out, "msg_1", 1715853600, headers, R"({"event_type":"x","v":"a\"b"})");
  BOOST_TEST(out ==
             R"({"id":"msg_1","timestamp":1715853600,"headers":{"content-type":"application/json","svix-id":"msg_1"},)"
             R"("body":"{\"event_type\":\"x\",\"v\":\"a\\\"b\"}"})"
             "\n");
}

BOOST_AUTO_TEST_CASE(bytes_that_are_not_utf8_are_written_as_base64) {
  std::string out;
  append_capture_line(out, "m", 1, {}, std::string("\xff\x00\x01", 3));
  BOOST_TEST(out == "{\"id\":\"m\",\"timestamp\":1,\"headers\":{},\"body_base64\":\"/wAB\"}\n");
}

// A message id whose bytes are not UTF-8 (a header value may hold any visible byte) was
// written with U+FFFD in their place: replayed, it was another message (a second copy in
// the same store, a signature that no longer matched). Written as base64 now, read back
// byte for byte; a body-removed line too.
BOOST_AUTO_TEST_CASE(an_id_that_is_not_utf8_is_written_as_base64_and_read_back) {
  const std::string id = "msg_\xff" "1";
  std::string out;
  append_capture_line(out, id, 1, {}, "{}");
  BOOST_TEST(out == "{\"id_base64\":\"bXNnX/8x\",\"timestamp\":1,\"headers\":{},\"body\":\"{}\"}\n");
  append_removed_capture_line(out, id, 2, 5, "ab");
  BOOST_TEST(out.ends_with(
      "{\"id_base64\":\"bXNnX/8x\",\"timestamp\":2,\"headers\":{},\"body_removed\":{\"removed_at_ms\":5,\"sha256\":\"ab\"}}\n"));
  TempDir dir;
  const Read read = read_all(dir.write("ids.jsonl", out + R"({"id":"a","id_base64":"YQ==","timestamp":3,"body":""})" "\n" +
                                                        R"({"id_base64":"CQ==","timestamp":4,"body":""})" "\n"));
  BOOST_TEST_REQUIRE(read.records.size() == 2u);
  BOOST_TEST(read.records[0].id == id);
  BOOST_TEST(read.records[1].id == id);
  BOOST_TEST(read.records[1].body_removed);
  BOOST_TEST_REQUIRE(read.bad.size() == 2u);
  BOOST_TEST(read.bad[0].second == "id, id_base64: give only one");
  BOOST_TEST(read.bad[1].second == "id_base64: starts or ends with a space (no header value does)");
}

BOOST_AUTO_TEST_CASE(round_trip_keeps_ids_timestamps_headers_and_bodies_byte_for_byte) {
  TempDir dir;
  const std::vector<CaptureHeader> headers = {
      {"Content-Type", "application/json"}, {"svix-id", "msg_ü"}, {"x-odd", "tab\there \"quoted\" \\ back"},
      {"x-repeated", "a, b"}};
  const std::vector<std::pair<std::string, std::string>> deliveries = {
      {"msg_text", R"({"event_type":"daily.data.steps.created","note":"naïve ☃ 𝄞"})"},
      {"msg_control", "line1\nline2\r\n\t\x01\x1f end"},  // 20 bytes, no NUL
      {"msg_binary", std::string("\x89PNG\r\n\x1a\n\x00\xff\xfe", 11)},
      {"msg_truncated_utf8", std::string("ok \xe2\x98", 5)},
      {"msg_empty", ""},
      {"msg_nul", std::string("a\0b", 3)},
  };
  std::string file;
  int64_t timestamp = 1700000000;
  for (const auto& [id, body] : deliveries) append_capture_line(file, id, timestamp++, headers, body);
  const std::string path = dir.write("capture.jsonl", file);

  const Read read = read_all(path);
  BOOST_TEST(read.bad.empty());
  BOOST_REQUIRE_EQUAL(read.records.size(), deliveries.size());
  for (size_t i = 0; i < deliveries.size(); ++i) {
    BOOST_TEST(read.records[i].id == deliveries[i].first);
    BOOST_TEST(read.records[i].timestamp == 1700000000 + static_cast<int64_t>(i));
    BOOST_TEST(read.records[i].body == deliveries[i].second, "body of " << deliveries[i].first);
    BOOST_REQUIRE_EQUAL(read.records[i].headers.size(), headers.size());
    for (size_t h = 0; h < headers.size(); ++h) {
      BOOST_TEST(read.records[i].headers[h].name == headers[h].name);
      BOOST_TEST(read.records[i].headers[h].value == headers[h].value);
    }
  }
  // Only the bodies that are not valid UTF-8 went to body_base64.
  BOOST_TEST(file.find(R"("id":"msg_binary","timestamp":1700000002,)") != std::string::npos);
  size_t base64_lines = 0;
  for (size_t at = file.find("\"body_base64\""); at != std::string::npos; at = file.find("\"body_base64\"", at + 1)) {
    ++base64_lines;
  }
  BOOST_TEST(base64_lines == 2u);  // msg_binary, msg_truncated_utf8
}

BOOST_AUTO_TEST_CASE(lines_longer_than_the_read_buffer_are_read_whole) {
  TempDir dir;
  std::string big(3 * 1024 * 1024 + 17, 'x');
  big[12345] = '"';
  std::string file;
  append_capture_line(file, "small", 1, {}, "a");
  append_capture_line(file, "big", 2, {}, big);
  append_capture_line(file, "after", 3, {}, "b");
  const Read read = read_all(dir.write("big.jsonl", file));
  BOOST_REQUIRE_EQUAL(read.records.size(), 3u);
  BOOST_TEST(read.records[1].body == big);
  BOOST_TEST(read.records[2].id == "after");
  BOOST_TEST(read.record_lines == std::vector<uint64_t>({1, 2, 3}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(malformed_lines_are_reported_by_number_and_the_rest_are_read) {
  TempDir dir;
  const std::string file =
      R"({"id":"good1","timestamp":1,"body":"a"})" "\n"                             // 1
      "not json\n"                                                                  // 2
      R"({"id":"x","body":"a"})" "\n"                                               // 3
      "\n"                                                                          // 4 blank: skipped
      R"({"id":"x","timestamp":1,"body":"a","body_base64":"YQ=="})" "\n"            // 5
      R"({"id":"good2","timestamp":"12","body":"b","comment":"ignored"})" "\r\n"    // 6 CRLF, string timestamp
      R"({"id":"x","timestamp":1,"body":"a"} {"id":"y"})" "\n"                      // 7
      R"({"id":"x","timestamp":1,"body_base64":"%%%"})" "\n"                        // 8
      R"({"id":"x","timestamp":-5,"body":"a"})" "\n"                                // 9
      R"({"id":"x","timestamp":1,"headers":{"a":1},"body":"a"})" "\n"               // 10
      R"({"id":"","timestamp":1,"body":"a"})" "\n"                                  // 11
      R"({"id":"x","id":"y","timestamp":1,"body":"a"})" "\n"                        // 12
      R"([1,2])" "\n"                                                               // 13
      R"({"id":"x","timestamp":1})" "\n"                                            // 14
      R"({"id":"x","timestamp":1.5,"body":"a"})" "\n"                               // 15
      R"({"id":"x","timestamp":1,"body":"a)" "\n"                                   // 16 truncated
      "   \t\n"                                                                     // 17 blank
      R"({"id":"x","timestamp":99999999999999,"body":"a"})" "\n"                  // 18
      R"({"id":"x","timestamp":1,"body":"a"} trailing)" "\n"                      // 19
      R"({"id":"good3","timestamp":3,"body_base64":"/wA="})";                       // 20, no final LF
  const Read read = read_all(dir.write("bad.jsonl", file));

  BOOST_REQUIRE_EQUAL(read.records.size(), 3u);
  BOOST_TEST(read.records[0].id == "good1");
  BOOST_TEST(read.records[1].id == "good2");
  BOOST_TEST(read.records[1].timestamp == 12);
  BOOST_TEST(read.records[1].body == "b");
  BOOST_TEST(read.records[2].body == std::string("\xff\x00", 2));
  BOOST_TEST(read.record_lines == std::vector<uint64_t>({1, 6, 20}), boost::test_tools::per_element());

  const std::vector<std::pair<uint64_t, std::string>> expected = {
      {2, "not JSON (each line is one JSON object)"},
      {3, "timestamp: missing"},
      {5, "body, body_base64: give only one"},
      {7, "unexpected content after the object"},
      {8, "body_base64: not valid base64"},
      {9, "timestamp: expected Unix seconds (an integer >= 0)"},
      {10, "headers.a: wrong type"},
      {11, "id: empty"},
      {12, "id: given twice"},
      {13, "not a JSON object"},
      {14, "body: missing (or body_base64)"},
      {15, "timestamp: expected Unix seconds (an integer >= 0)"},
  };
  BOOST_REQUIRE_EQUAL(read.bad.size(), expected.size() + 3);  // + the truncated line 16, lines 18 and 19
  for (size_t i = 0; i < expected.size(); ++i) {
    BOOST_TEST(read.bad[i].first == expected[i].first);
    BOOST_TEST(read.bad[i].second == expected[i].second, "line " << expected[i].first);
  }
  BOOST_TEST(read.bad[expected.size()].first == 16u);
  BOOST_TEST(read.bad[expected.size()].second.find("not valid JSON") != std::string::npos, read.bad[expected.size()].second);
  BOOST_TEST(read.bad[expected.size() + 1].first == 18u);
  BOOST_TEST(read.bad[expected.size() + 1].second == "timestamp: after the year 9999");
  // Text after the object that is no JSON: said as such, not "document ended early".
  BOOST_TEST(read.bad.back().first == 19u);
  BOOST_TEST(read.bad.back().second == "unexpected content after the object");
}

// An id no HTTP header can carry (a NUL, a newline): the receiver refuses it (400), so an
// offline replay does too, naming the line; it stored "x17\0z", which the read API could
// not look up and a CSV export wrote as a raw NUL (black-box pass). A tab is a header's.
BOOST_AUTO_TEST_CASE(an_id_no_header_can_carry_is_refused) {
  TempDir dir;
  const Read read = read_all(dir.write("ids.jsonl", R"({"id":"x17\u0000z","timestamp":1,"body":"a"})" "\n"
                                                    R"({"id":"a\nb","timestamp":1,"body":"a"})" "\n"
                                                    R"({"id":"tab\there","timestamp":1,"body":"a"})" "\n"
                                                    R"({"id":" msg_ws ","timestamp":1,"body":"a"})" "\n"));
  BOOST_REQUIRE_EQUAL(read.records.size(), 1u);
  BOOST_TEST(read.records[0].id == "tab\there");
  BOOST_REQUIRE_EQUAL(read.bad.size(), 3u);
  BOOST_TEST(read.bad[0].second == "id: holds a control character (U+0000)");
  BOOST_TEST(read.bad[1].second == "id: holds a control character (U+000A)");
  BOOST_TEST(read.bad[2].second == "id: starts or ends with a space (no header value does)");
}

// A file an editor saved with a UTF-8 byte order mark: read from its first line; a mark
// further on (files joined with cat) is named as such.
BOOST_AUTO_TEST_CASE(a_byte_order_mark_starting_the_file_is_read_past) {
  TempDir dir;
  const std::string line = R"({"id":"a","timestamp":1,"body":"x"})";
  const Read read = read_all(dir.write("bom.jsonl", "\xEF\xBB\xBF" + line + "\n\xEF\xBB\xBF" + line + "\n"));
  BOOST_REQUIRE_EQUAL(read.records.size(), 1u);
  BOOST_TEST(read.records[0].id == "a");
  BOOST_REQUIRE_EQUAL(read.bad.size(), 1u);
  BOOST_TEST(read.bad[0].first == 2u);
  BOOST_TEST(read.bad[0].second == "starts with a byte order mark (U+FEFF), which JSON does not allow");
}

BOOST_AUTO_TEST_CASE(headers_of_the_inbox_parse_into_pairs_in_order) {
  CaptureParser parser;
  std::vector<CaptureHeader> headers;
  BOOST_TEST(parser.parse_headers(R"({"b":"2","a":"1","b":"3"})", headers).ok());
  BOOST_REQUIRE_EQUAL(headers.size(), 3u);
  BOOST_TEST(headers[0].name == "b");
  BOOST_TEST(headers[2].value == "3");
  std::string json;
  append_headers_json(json, headers);
  BOOST_TEST(json == R"({"b":"2","a":"1","b":"3"})");
  BOOST_TEST(!parser.parse_headers(R"(["a"])", headers).ok());
}

BOOST_AUTO_TEST_SUITE_END()  // capture_file_test
