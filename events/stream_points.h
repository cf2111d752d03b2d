#pragma once
// Reads a workout stream response (parallel arrays, reference notes §3) one point at a
// time:  {"time":[…],"distance":[…],"heartrate":[…],"velocity_smooth":[…],"lat":[…],
//         "lng":[…],"altitude":[…],"cadence":[…],"power":[…],"resistance":[…],"temperature":[…]}
// Every array is optional, may be shorter than the others, and may hold nulls: a missing
// element is a null. Point i exists while any array has an element i.
//
// Hand-written rather than simdjson: simdjson's structural index needs about 4 bytes per
// input byte (120 MB for a 30 MB stream), while this scanner walks the arrays in lockstep
// with one cursor each and needs no memory beyond the body.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hh::events {

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
    std::string_view rest;  // remaining text of one array after '[' (empty: exhausted/absent)
    bool active = false;
  };
  std::string_view body_;
  Cursor cursors_[11];
  size_t index_ = 0;
  std::string error_;
  bool initialised_ = false;
};

}  // namespace hh::events
