#pragma once
// Reads a workout stream response (parallel arrays, reference notes §3) one point at a
// time:  {"time":[…],"distance":[…],"heartrate":[…],"velocity_smooth":[…],"lat":[…],
//         "lng":[…],"altitude":[…],"cadence":[…],"power":[…],"resistance":[…],"temperature":[…]}
// Every array is optional, may be shorter than the others, and may hold nulls: a missing
// element is a null. Point i exists while any array has an element i.
//
// Read with the shared scanner (common/json_scan.h says why not simdjson): a first pass
// finds each array, then one json::Scanner per array walks them in lockstep. No memory
// beyond the body and this object; a body that reads to the end is well-formed JSON
// (nested at most json::kSimdjsonMaxDepth deep, as simdjson allows).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/json_scan.h"

namespace hh::rows {

struct StreamPoint {
  size_t index = 0;
  std::optional<int64_t> time;
  std::optional<double> distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, resistance,
      temperature;
};

class StreamPointReader {
 public:
  explicit StreamPointReader(std::string_view body);
  // Fills `point` with the next point; false at the end or on an error (see error()).
  bool next(StreamPoint& point);
  // Empty unless the body is malformed: names the field and position.
  const std::string& error() const { return error_; }

 private:
  struct Cursor {
    json::Scanner at;  // the next element of one array
    bool active = false;  // false: the array is absent, null or read to its ']'
  };
  // The first pass: checks the top-level object and points a cursor at each array.
  bool find_arrays();
  bool fail(std::string message);

  std::string_view body_;
  Cursor cursors_[11];
  size_t index_ = 0;
  std::string error_;
  bool initialised_ = false;
};

}  // namespace hh::rows
