// Fuzzes the workout stream reader (rows/stream_points.h), the hand-written
// scanner that reads fetched streams of up to tens of MB without simdjson, against
// simdjson's DOM parser as the oracle:
//  - a body simdjson reads as a stream (an object whose named members are arrays of
//    numbers and nulls, or null; with at least one of them unless it is empty) must read
//    to the end, point for point, value for value;
//    a time is an integer, or a whole float (|t| < 9.2e18); a float with a fraction is
//    refused (one whose fraction a double rounds away may be refused too: the reader
//    reads the digits);
//  - a body that reads to the end is JSON (check_json at simdjson's depth accepts it), and
//    one simdjson rejects reads to the end only for a reason that check_json, a syntax
//    check only, leaves to others (UTF-8, a string's content, a number's range, depth);
//  - the processor's count (DeliveryParser on a fetched stream row) equals the reader's.
// Seeds: schemas/examples/fetched-stream.body.json and workout-stream.json.
#include <simdjson.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "delivery_rows_checks.h"
#include "rows/stream_points.h"

using namespace hh;

namespace {

constexpr std::array<std::string_view, 11> kNames = {"time",     "distance", "heartrate", "velocity_smooth",
                                                     "lat",      "lng",      "altitude",  "cadence",
                                                     "power",    "resistance", "temperature"};

std::optional<double> StreamPoint_value(const rows::StreamPoint& p, size_t slot) {
  switch (slot) {
    case 1: return p.distance;
    case 2: return p.heartrate;
    case 3: return p.velocity_smooth;
    case 4: return p.lat;
    case 5: return p.lng;
    case 6: return p.altitude;
    case 7: return p.cadence;
    case 8: return p.power;
    case 9: return p.resistance;
    case 10: return p.temperature;
    default: return std::nullopt;
  }
}

// What the oracle expects of one element: null, a value, or a reason the reader refuses.
struct Expected {
  bool refuse = false;
  bool may_refuse = false;  // a whole double whose text may have held a fraction
  std::optional<int64_t> time;
  std::optional<double> value;
};

struct Oracle {
  bool is_stream = false;   // false: the reader must fail (or the body is not JSON)
  bool may_refuse = false;  // an element the reader refuses by its documented limits
  std::array<std::vector<Expected>, 11> columns;
};

Oracle expect(simdjson::dom::element root) {
  Oracle oracle;
  simdjson::dom::object object;
  if (root.get_object().get(object)) return oracle;
  // An array with an element that is not a number or null fails the reader when it reads
  // that element, unless a later member of the same name replaces the array: the reader
  // keeps the last one (simdjson's at_key would take the first), so does this loop.
  std::array<bool, 11> bad_element{};
  bool any_member = false, any_stream_member = false;  // an object of other members only is not a stream
  for (auto [key, value] : object) {
    any_member = true;
    for (size_t slot = 0; slot < kNames.size(); ++slot) {
      if (key != kNames[slot]) continue;
      any_stream_member = true;
      auto& column = oracle.columns[slot];
      column.clear();
      bad_element[slot] = false;
      if (value.is_null()) continue;
      simdjson::dom::array array;
      if (value.get_array().get(array)) return oracle;  // the reader refuses at once
      for (auto element : array) {
        Expected e;
        if (element.is_null()) {
        } else if (slot == 0) {
          int64_t i;
          double d;
          if (!element.get_int64().get(i)) {
            e.time = i;
          } else if (!element.get_double().get(d) && element.is_double() && d != std::trunc(d)) {
            e.refuse = true;  // not a whole number of seconds
          } else if (!element.get_double().get(d) && element.is_double() && std::fabs(d) < 9.2e18) {
            e.time = static_cast<int64_t>(d);
            e.may_refuse = true;
          } else if (element.is_number()) {
            e.refuse = true;  // uint64 above int64, or a float out of range
          } else {
            bad_element[slot] = true;
            break;
          }
        } else {
          double d;
          if (element.get_double().get(d)) {
            bad_element[slot] = true;
            break;
          }
          e.value = d;
        }
        column.push_back(e);
      }
    }
  }
  for (size_t slot = 0; slot < kNames.size(); ++slot) {
    if (bad_element[slot]) return oracle;
    for (const Expected& e : oracle.columns[slot]) oracle.may_refuse |= e.refuse || e.may_refuse;
  }
  if (any_member && !any_stream_member) return oracle;
  oracle.is_stream = true;
  return oracle;
}

void compare(const Oracle& oracle, std::string_view body) {
  rows::StreamPointReader reader(body);
  rows::StreamPoint point;
  size_t index = 0;
  while (reader.next(point)) {
    if (point.index != index) fuzz::broken("point index");
    bool any = false;
    for (size_t slot = 0; slot < kNames.size(); ++slot) {
      const auto& column = oracle.columns[slot];
      const Expected none;
      const Expected& e = index < column.size() ? column[index] : none;
      any |= index < column.size();
      if (e.refuse) fuzz::broken("reader accepted an element it must refuse", kNames[slot]);
      if (slot == 0) {
        if (point.time != e.time) fuzz::broken("time differs", body);
      } else {
        const auto got = StreamPoint_value(point, slot);
        if (got.has_value() != e.value.has_value() || (got && !(*got == *e.value))) {
          fuzz::broken("value differs", kNames[slot]);
        }
      }
    }
    if (!any) fuzz::broken("a point past the end of every array");
    ++index;
  }
  size_t longest = 0;
  for (const auto& column : oracle.columns) longest = std::max(longest, column.size());
  if (!reader.error().empty()) {
    if (!oracle.may_refuse) fuzz::broken("reader refused a valid stream", reader.error());
    return;
  }
  if (index != longest) fuzz::broken("point count differs", body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static simdjson::dom::parser dom;
  static events::DeliveryParser parser;
  static rows::DeliveryRows rows;
  const std::string body(reinterpret_cast<const char*>(data), size);

  // What the reader makes of it on its own.
  size_t count = 0;
  bool read_to_end;
  {
    rows::StreamPointReader reader(body);
    rows::StreamPoint point;
    while (reader.next(point)) ++count;
    read_to_end = reader.error().empty();
  }
  if (read_to_end) {
    if (auto valid = json::check_json(body, json::kSimdjsonMaxDepth); !valid) {
      fuzz::broken("reader read a body that is not JSON", valid.error());
    }
  }

  const simdjson::padded_string padded(body);
  simdjson::dom::element root;
  const simdjson::error_code code = dom.parse(padded).get(root);
  if (code == simdjson::SUCCESS) {
    // Names are compared as written by the reader and unescaped by simdjson, so a body
    // with escapes ("t\u0069me") is only checked for crashes and the processor's count.
    const Oracle oracle = body.find('\\') == std::string::npos ? expect(root) : Oracle{};
    if (oracle.is_stream) {
      compare(oracle, body);
    } else if (read_to_end && body.find('\\') == std::string::npos) {
      // Not a stream by simdjson's reading (a named member of another type, an element
      // that is not a number): the reader must refuse it.
      fuzz::broken("reader accepted a body that is not a stream");
    }
  } else if (read_to_end && json::check_json(body).ok() && code != simdjson::UTF8_ERROR &&
             code != simdjson::STRING_ERROR && code != simdjson::NUMBER_ERROR &&
             code != simdjson::DEPTH_ERROR) {
    fuzz::broken("reader and check_json accept what simdjson rejects", simdjson::error_message(code));
  }

  // The processor's path: a fetched row with the stream's context counts the same points.
  const rows::InboxRow row{1, "fetch", "fetch.workout_stream",
                             R"({"kind":"workout_stream","workout_id":"w1","user_id":"u1","provider":"p"})", body};
  const events::ParseResult result = parser.parse(row, rows);
  fuzz::check_parse(result, rows);
  if ((result.status == rows::Status::processed) != read_to_end) fuzz::broken("processor and reader disagree");
  if (read_to_end && rows.fetched_stream->point_count != count) fuzz::broken("processor counted differently");
  return 0;
}
