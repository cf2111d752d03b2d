// Grammar read here (a ClientFacingStream, reference notes §3):
//   stream  = ws '{' ws [ member *( ws ',' ws member ) ] ws '}' ws
//   member  = string ws ':' ws ( array | 'null' | any )   ; the 11 names take array or null,
//                                                           other names any JSON (skipped)
//   array   = '[' ws [ element *( ws ',' ws element ) ] ws ']'
//   element = number | 'null'
// The first pass (find_arrays) checks the object and every member it does not keep, and
// skips each named array token by token, keeping a cursor at its first element; next()
// then advances the 11 cursors one element each. Element order is checked as the cursors
// reach it, so a stream that reads to the end was well-formed.
#include "rows/stream_points.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace hh::rows {
namespace {

constexpr std::array<std::string_view, 11> kArrayNames = {
    "time", "distance", "heartrate", "velocity_smooth", "lat", "lng", "altitude", "cadence", "power", "resistance",
    "temperature"};

// Where the double-valued arrays go; index 0 (time) is the integer one.
constexpr std::array<std::optional<double> StreamPoint::*, 11> kDoubleMembers = {
    nullptr,           &StreamPoint::distance, &StreamPoint::heartrate, &StreamPoint::velocity_smooth,
    &StreamPoint::lat, &StreamPoint::lng,      &StreamPoint::altitude,  &StreamPoint::cadence,
    &StreamPoint::power, &StreamPoint::resistance, &StreamPoint::temperature};

// The exponent of the JSON number `n` from its `e` at `i` on (0 without one), its magnitude
// capped at 2^40: far past any order that decides below_one() or is_whole().
int64_t exponent_at(std::string_view n, size_t i) {
  int64_t exponent = 0;
  if (i < n.size() && (n[i] == 'e' || n[i] == 'E')) {
    ++i;
    const bool negative = i < n.size() && n[i] == '-';
    if (i < n.size() && (n[i] == '+' || n[i] == '-')) ++i;
    for (; i < n.size(); ++i) exponent = std::min<int64_t>(exponent * 10 + (n[i] - '0'), int64_t{1} << 40);
    if (negative) exponent = -exponent;
  }
  return exponent;
}

// True when the JSON number `n` (read by json::Scanner::number) is below 1 in
// magnitude: the decimal order of its first non-zero digit plus its exponent is negative.
// Used only for numbers std::from_chars reports out of range, to tell 1e-400 (too small:
// zero) from 1e400 (too large: refused).
bool below_one(std::string_view n) {
  size_t i = n.starts_with('-') ? 1 : 0;
  int64_t order = 0;  // decimal order of the first non-zero digit, once found
  bool found = false;
  int64_t integer_digits = 0;
  for (; i < n.size() && n[i] >= '0' && n[i] <= '9'; ++i) {
    if (found) ++integer_digits;
    if (!found && n[i] != '0') found = true, integer_digits = 1;
  }
  if (found) order = integer_digits - 1;
  if (i < n.size() && n[i] == '.') {
    for (++i; i < n.size() && n[i] >= '0' && n[i] <= '9'; ++i) {
      if (!found) {
        --order;
        if (n[i] != '0') found = true;
      }
    }
  }
  if (!found) return true;  // zero
  const int64_t exponent = exponent_at(n, i);
  return order + exponent < 0;
}

// A JSON number as a double. std::from_chars reports a number too small for a double
// (1e-400) as out of range, but JSON allows it and simdjson, like strtod, reads it as
// zero: so do we (found by fuzz_stream_points). Too large (1e400) stays an error.
bool parse_double(std::string_view number, double& value) {
  const char* last = number.data() + number.size();
  auto [end, ec] = std::from_chars(number.data(), last, value);
  if (end != last) return false;
  if (ec == std::errc{}) return true;
  if (ec != std::errc::result_out_of_range || !below_one(number)) return false;
  value = number.starts_with('-') ? -0.0 : 0.0;
  return true;
}

// True when the JSON number `n` (read by json::Scanner::number) is a whole number, read
// from its digits rather than from a double (1700000000.0000001 rounds to a whole double):
// its significant digits, trailing zeros dropped, end at or left of the decimal point once
// the exponent has moved it. Zero is whole, however written.
bool is_whole(std::string_view n) {
  size_t i = n.starts_with('-') ? 1 : 0;
  int64_t fraction_digits = 0, trailing_zeros = 0;
  bool nonzero = false;
  const auto digit = [&](char c) {
    if (c == '0') {
      ++trailing_zeros;
    } else {
      trailing_zeros = 0;
      nonzero = true;
    }
  };
  for (; i < n.size() && n[i] >= '0' && n[i] <= '9'; ++i) digit(n[i]);
  if (i < n.size() && n[i] == '.') {
    for (++i; i < n.size() && n[i] >= '0' && n[i] <= '9'; ++i) {
      digit(n[i]);
      ++fraction_digits;
    }
  }
  if (!nonzero) return true;
  const int64_t exponent = exponent_at(n, i);
  return exponent - fraction_digits + trailing_zeros >= 0;
}

// Moves past the array at `s` (its '['), checking each token but not the order of its
// elements: the cursors check those and name the element that is wrong.
bool skip_array_tokens(json::Scanner& s) {
  size_t depth = 0;
  do {
    s.skip_space();
    const char c = s.peek();
    if (!s.token()) return false;
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
  } while (depth > 0);
  return true;
}

// Stores element `number` of array `slot` in `point`; empty, or why it is refused.
std::string_view store_number(size_t slot, std::string_view number, StreamPoint& point) {
  if (slot != 0) {
    double value = 0;
    if (!parse_double(number, value)) return "number out of range";
    point.*kDoubleMembers[slot] = value;
    return {};
  }
  // Whole Unix seconds (reference notes §3). A fraction was cut off, so that two points
  // half a second apart shared one time: refused, as any element that is no time is. A
  // whole number written otherwise (1700000000.0, 1.7e9) is one.
  int64_t seconds = 0;
  const char* last = number.data() + number.size();
  if (auto [end, ec] = std::from_chars(number.data(), last, seconds); ec != std::errc{} || end != last) {
    if (!is_whole(number)) return "not a whole number of seconds";
    double value = 0;
    if (!parse_double(number, value) || !(std::fabs(value) < 9.2e18)) return "time out of range";
    seconds = static_cast<int64_t>(value);
  }
  point.time = seconds;
  return {};
}

}  // namespace

StreamPointReader::StreamPointReader(std::string_view body) : body_(body) {}

bool StreamPointReader::fail(std::string message) {
  error_ = std::move(message);
  return false;
}

bool StreamPointReader::find_arrays() {
  json::Scanner s(body_);
  s.skip_space();
  if (s.at_end()) return fail("body: empty");
  if (!s.skip('{')) return fail("body: not a JSON object");
  s.skip_space();
  // Members, and members of a stream: an object of members none of which is a stream's
  // (`{"detail": "..."}` answered with 200) is an error, not an empty stream that would
  // replace the points stored. `{}` is an empty stream (every array defaults to []).
  bool any_member = false, any_stream_member = false;
  if (!s.skip('}')) {
    for (;;) {
      s.skip_space();
      std::string_view key;
      if (s.peek() != '"' || !s.string(&key)) return fail("body: expected a member name");
      s.skip_space();
      if (!s.skip(':')) return fail("body: expected ':' after \"" + std::string(key) + "\"");
      s.skip_space();
      const auto named = std::find(kArrayNames.begin(), kArrayNames.end(), key);
      any_member = true;
      any_stream_member = any_stream_member || named != kArrayNames.end();
      bool read = false;
      if (named == kArrayNames.end()) {
        read = s.value(json::kSimdjsonMaxDepth - 1);  // a member not kept: checked whole
      } else {
        // A later member of the same name replaces an earlier one, which no cursor will
        // read: it is checked whole now (its cursor stands just past its '[').
        Cursor& cursor = cursors_[static_cast<size_t>(named - kArrayNames.begin())];
        if (cursor.active) {
          json::Scanner replaced(body_.substr(cursor.at.offset() - 1));
          if (!replaced.value(json::kSimdjsonMaxDepth - 1)) return fail(std::string(key) + ": malformed value");
        }
        if (s.peek() == '[') {
          cursor.at = s;
          cursor.at.skip('[');
          cursor.active = true;
          read = skip_array_tokens(s);
        } else if (s.peek() == 'n' && s.literal("null")) {
          cursor = Cursor{};  // null: the default []
          read = true;
        } else {
          return fail(std::string(key) + ": expected an array or null");
        }
      }
      if (!read) return fail(std::string(key) + ": malformed value");
      s.skip_space();
      if (s.skip(',')) continue;
      if (s.skip('}')) break;
      return fail("body: expected ',' or '}' after \"" + std::string(key) + "\"");
    }
  }
  s.skip_space();
  if (!s.at_end()) return fail("body: content after the top-level object");
  if (any_member && !any_stream_member) return fail("body: no member of a stream (time, heartrate, ...): not a stream");
  return true;
}

bool StreamPointReader::next(StreamPoint& point) {
  if (!initialised_) {
    initialised_ = true;
    if (!find_arrays()) return false;
  }
  if (!error_.empty()) return false;

  point = StreamPoint{};
  point.index = index_;
  bool any = false;
  for (size_t slot = 0; slot < kArrayNames.size(); ++slot) {
    Cursor& cursor = cursors_[slot];
    if (!cursor.active) continue;
    json::Scanner& s = cursor.at;
    s.skip_space();
    if (s.skip(']')) {
      cursor.active = false;  // this array is shorter: the rest of its points are null
      continue;
    }
    auto element_error = [&](std::string_view what) {
      return fail(std::string(kArrayNames[slot]) + "[" + std::to_string(index_) + "]: " + std::string(what));
    };
    if (!(s.peek() == 'n' && s.literal("null"))) {
      std::string_view number;
      if (!s.number(&number)) return element_error("not a number");
      if (const std::string_view refused = store_number(slot, number, point); !refused.empty()) {
        return element_error(refused);
      }
    }
    any = true;
    s.skip_space();
    if (s.skip(',')) {
      s.skip_space();
      if (s.at_end() || s.peek() == ']') return element_error("expected an element after ','");
    } else if (s.peek() != ']') {  // ']' is left for the next call, which retires the cursor
      return element_error("expected ',' or ']'");
    }
  }
  if (!any) return false;
  ++index_;
  return true;
}

}  // namespace hh::rows
