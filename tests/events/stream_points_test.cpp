// StreamPointReader: parallel arrays of a fetched workout stream, read in lockstep.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rows/stream_points.h"

namespace hh::rows {

BOOST_AUTO_TEST_SUITE(stream_points_test)

namespace {

std::vector<StreamPoint> read_all(std::string_view body, std::string* error = nullptr) {
  StreamPointReader reader(body);
  std::vector<StreamPoint> points;
  StreamPoint point;
  while (reader.next(point)) points.push_back(point);
  if (error) *error = reader.error();
  return points;
}

std::string error_of(std::string_view body) {
  std::string error;
  read_all(body, &error);
  return error;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(stream_points)

BOOST_AUTO_TEST_CASE(example_stream_with_short_arrays_and_nulls) {
  std::ifstream in(std::string(HEALTHHOOK_SCHEMAS_DIR) + "/examples/fetched-stream.body.json");
  BOOST_REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  const std::string body = text.str();
  std::string error;
  const auto points = read_all(body, &error);
  BOOST_TEST(error == "");
  BOOST_REQUIRE(points.size() == 4u);
  BOOST_TEST(points[0].index == 0u);
  BOOST_TEST(points[0].time.value_or(-1) == 1626625123);
  BOOST_TEST(points[0].distance.value_or(-1) == 12.0);
  BOOST_TEST(points[0].heartrate.value_or(-1) == 120.0);
  BOOST_TEST(points[0].velocity_smooth.value_or(-1) == 10.0);
  BOOST_TEST(points[0].lat.value_or(0) == 51.5007);
  BOOST_TEST(points[0].lng.value_or(0) == -0.1246);
  BOOST_TEST(points[0].altitude.value_or(-1) == 10.0);
  BOOST_TEST(points[0].cadence.value_or(-1) == 80.0);
  BOOST_TEST(points[0].power.value_or(-1) == 100.0);
  BOOST_TEST(!points[0].resistance);   // []
  BOOST_TEST(!points[0].temperature);  // null
  BOOST_TEST(points[1].distance.value_or(-1) == 15.5);
  BOOST_TEST(!points[2].heartrate);    // null element
  BOOST_TEST(points[2].velocity_smooth.value_or(-1) == 19.5);
  BOOST_TEST(!points[3].velocity_smooth);  // shorter array
  BOOST_TEST(points[3].index == 3u);
  BOOST_TEST(points[3].time.value_or(-1) == 1626625174);
  BOOST_TEST(points[3].altitude.value_or(-1) == 11.25);
}

BOOST_AUTO_TEST_CASE(empty_and_absent) {
  std::string error;
  BOOST_TEST(read_all("{}", &error).empty());
  BOOST_TEST(error == "");
  BOOST_TEST(read_all(" { \"time\" : [ ] , \"power\": null } ", &error).empty());
  BOOST_TEST(error == "");
  // Point i exists while any array has an element i, even without time.
  const auto points = read_all(R"({"time":[],"power":[200, null ,210]})", &error);
  BOOST_TEST(error == "");
  BOOST_REQUIRE(points.size() == 3u);
  BOOST_TEST(!points[0].time);
  BOOST_TEST(!points[1].power);
  BOOST_TEST(points[2].power.value_or(-1) == 210.0);
}

BOOST_AUTO_TEST_CASE(unknown_members_are_skipped) {
  std::string error;
  const auto points = read_all(R"({"meta":{"a":[1,{"b":"]}\"["}],"c":true},"time":[5,6.0],"note":"x"})", &error);
  BOOST_TEST(error == "");
  BOOST_REQUIRE(points.size() == 2u);
  BOOST_TEST(points[1].time.value_or(-1) == 6);
}

// Stream times are whole Unix seconds (reference notes §3). A fraction was cut off (two
// points half a second apart then shared one time): it is refused as an element that is
// no number is, which makes the delivery invalid. A whole number written with a fraction
// or an exponent is one.
BOOST_AUTO_TEST_CASE(a_time_that_is_not_a_whole_number_of_seconds_is_refused) {
  BOOST_TEST(error_of(R"({"time":[1700000000.75,1700000000.25],"heartrate":[1,2]})") ==
             "time[0]: not a whole number of seconds");
  BOOST_TEST(error_of(R"({"time":[1700000000,1700000000.5]})") == "time[1]: not a whole number of seconds");
  BOOST_TEST(error_of(R"({"time":[1700000000.0000000001]})") == "time[0]: not a whole number of seconds");
  BOOST_TEST(error_of(R"({"time":[17e-1]})") == "time[0]: not a whole number of seconds");
  BOOST_TEST(error_of(R"({"time":[1e-400]})") == "time[0]: not a whole number of seconds");
  BOOST_TEST(error_of(R"({"time":[true]})") == "time[0]: not a number");
  std::string error;
  const auto points =
      read_all(R"({"time":[1700000000.0,1.7000000005e10,170e-1,-5.00,0.0e-999,1700000002.500e1],"lat":[0.5]})", &error);
  BOOST_TEST(error == "");
  BOOST_REQUIRE(points.size() == 6u);
  BOOST_TEST(points[0].time.value_or(-1) == 1700000000);
  BOOST_TEST(points[1].time.value_or(-1) == 17000000005);
  BOOST_TEST(points[2].time.value_or(-1) == 17);
  BOOST_TEST(points[3].time.value_or(-1) == -5);
  BOOST_TEST(points[4].time.value_or(-1) == 0);
  BOOST_TEST(points[5].time.value_or(-1) == 17000000025);
  BOOST_TEST(points[0].lat.value_or(-1) == 0.5);  // other arrays keep their fractions
}

// An answer of 200 whose object has no member of a stream (an error body) is not an empty
// stream: read as one, it would replace the points stored with none.
BOOST_AUTO_TEST_CASE(an_object_without_a_stream_member_is_not_a_stream) {
  for (const char* body : {R"({"detail":"Workout not found"})", R"({"detail":[{"msg":"x"}],"status":500})"}) {
    std::string error;
    BOOST_TEST(read_all(body, &error).empty());
    BOOST_TEST(error == "body: no member of a stream (time, heartrate, ...): not a stream", body);
  }
  std::string error;
  BOOST_TEST(read_all("{}", &error).empty());  // every array defaults to []: an empty stream
  BOOST_TEST(error == "");
  BOOST_TEST(read_all(R"({"time":null,"detail":"x"})", &error).empty());
  BOOST_TEST(error == "");
}

BOOST_AUTO_TEST_CASE(malformed) {
  BOOST_TEST(error_of("") == "body: empty");
  BOOST_TEST(error_of("[1,2]") == "body: not a JSON object");
  BOOST_TEST(error_of(R"({"time":[1,,2]})") == "time[1]: not a number");
  BOOST_TEST(error_of(R"({"time":[1,2,]})") == "time[1]: expected an element after ','");
  BOOST_TEST(error_of(R"({"time":[1 2]})") == "time[0]: expected ',' or ']'");
  BOOST_TEST(error_of(R"({"time":[1,2)") == "time: malformed value");
  BOOST_TEST(error_of(R"({"time":[1,2]} x)") == "body: content after the top-level object");
  BOOST_TEST(error_of(R"({"time":[1,2]})" "\n") == "");
  BOOST_TEST(error_of(R"({"time": 5})") == "time: expected an array or null");
  BOOST_TEST(error_of(R"({"heartrate":[120,"fast"]})") == "heartrate[1]: not a number");
  BOOST_TEST(error_of(R"({"heartrate":[1e400]})") == "heartrate[0]: number out of range");
  BOOST_TEST(error_of(R"({"heartrate":[-12345678901234567890e300]})") == "heartrate[0]: number out of range");
  BOOST_TEST(error_of(R"({"time":[99999999999999999999999]})") == "time[0]: time out of range");
  BOOST_TEST(error_of(R"({"lat":[01]})") == "lat: malformed value");
  BOOST_TEST(error_of(R"({"lat":[nan]})") == "lat: malformed value");
  BOOST_TEST(error_of(R"({"time":[1]})"
                      R"(,"x":1})") == "body: content after the top-level object");
  BOOST_TEST(error_of(R"({"time" [1]})") == R"(body: expected ':' after "time")");
  BOOST_TEST(error_of(R"({"time":[1] "x":2})") == R"(body: expected ',' or '}' after "time")");
  BOOST_TEST(error_of(R"({"meta":"unterminated)") == "meta: malformed value");
}

// Members the reader does not keep are checked whole, as deep as simdjson parses; the
// named arrays token by token, then element by element as the cursors reach them.
BOOST_AUTO_TEST_CASE(a_body_that_reads_to_the_end_is_json) {
  BOOST_TEST(error_of(R"({"meta":[1 2],"time":[1]})") == "meta: malformed value");
  BOOST_TEST(error_of(R"({"meta":[1},"time":[1]})") == "meta: malformed value");
  BOOST_TEST(error_of(R"({"meta":"\q","time":[1]})") == "meta: malformed value");
  BOOST_TEST(error_of(R"({"time":[1"a"]})") == "time: malformed value");
  BOOST_TEST(error_of(R"({"time":[nullx]})") == "time: malformed value");
  BOOST_TEST(error_of(R"({"time":[1}})") == "time[0]: expected ',' or ']'");
  BOOST_TEST(error_of(R"({"time":[[1],2]})") == "time[0]: not a number");
  BOOST_TEST(error_of(R"({"ti\me":[1]})") == "body: expected a member name");
  const auto nested = [](size_t depth) {
    return R"({"meta":)" + std::string(depth, '[') + std::string(depth, ']') + R"(,"time":[1]})";
  };
  BOOST_TEST(error_of(nested(json::kSimdjsonMaxDepth - 1)) == "");  // the body's object is level 1
  BOOST_TEST(error_of(nested(json::kSimdjsonMaxDepth)) == "meta: malformed value");
}

BOOST_AUTO_TEST_CASE(a_later_member_of_the_same_name_replaces_the_earlier) {
  std::string error;
  auto points = read_all(R"({"time":[1,2],"power":[5],"time":[7]})", &error);
  BOOST_TEST(error == "");
  BOOST_REQUIRE(points.size() == 1u);
  BOOST_TEST(points[0].time.value_or(-1) == 7);
  BOOST_TEST(points[0].power.value_or(-1) == 5.0);
  BOOST_TEST(read_all(R"({"time":[1,2],"time":null})", &error).empty());
  BOOST_TEST(error == "");
  // The replaced array is never walked by a cursor, so it is checked when it is replaced.
  BOOST_TEST(error_of(R"({"time":["x",{}],"time":[7]})") == "");
  BOOST_TEST(error_of(R"({"time":["x"},"time":[7]})") == "time: malformed value");
}

// Found by fuzz_stream_points: a number too small for a double is valid JSON and reads as
// zero (as simdjson and strtod read it); std::from_chars alone refused it.
BOOST_AUTO_TEST_CASE(numbers_below_the_smallest_double_read_as_zero) {
  StreamPointReader reader(R"({"time":[0e-400, 5],"lat":[1e-325140, -0.000001e-330],"lng":[1e-300, 0.0e-999]})");
  StreamPoint point;
  BOOST_REQUIRE(reader.next(point));
  BOOST_TEST(point.time.value() == 0);
  BOOST_TEST(point.lat.value() == 0.0);
  BOOST_TEST(point.lng.value() == 1e-300);
  BOOST_REQUIRE(reader.next(point));
  BOOST_TEST(point.time.value() == 5);
  BOOST_TEST(point.lat.value() == 0.0);
  BOOST_TEST(std::signbit(*point.lat));
  BOOST_TEST(point.lng.value() == 0.0);
  BOOST_TEST(!reader.next(point));
  BOOST_TEST(reader.error() == "");
}

BOOST_AUTO_TEST_CASE(error_stops_reading) {
  StreamPointReader reader(R"({"time":[1,2,"x",4]})");
  StreamPoint point;
  BOOST_TEST(reader.next(point));
  BOOST_TEST(reader.next(point));
  BOOST_TEST(!reader.next(point));
  BOOST_TEST(reader.error() == "time[2]: not a number");
  BOOST_TEST(!reader.next(point));
}

BOOST_AUTO_TEST_CASE(large_stream) {
  std::string body = R"({"time":[)";
  std::string heartrate = R"(],"heartrate":[)";
  for (int i = 0; i < 100000; ++i) {
    if (i) {
      body.push_back(',');
      heartrate.push_back(',');
    }
    body += std::to_string(1626625123 + i);
    heartrate += i % 7 == 0 ? "null" : std::to_string(100 + i % 60);
  }
  body += heartrate + "]}";
  StreamPointReader reader(body);
  StreamPoint point;
  size_t count = 0;
  int64_t last_time = 0;
  size_t nulls = 0;
  while (reader.next(point)) {
    ++count;
    last_time = point.time.value_or(0);
    if (!point.heartrate) ++nulls;
  }
  BOOST_TEST(reader.error() == "");
  BOOST_TEST(count == 100000u);
  BOOST_TEST(last_time == 1626625123 + 99999);
  BOOST_TEST(nulls == 14286u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // stream_points_test

}  // namespace hh::rows
