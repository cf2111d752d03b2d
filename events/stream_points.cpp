// Grammar read here (a ClientFacingStream, reference notes §3):
//   stream  = ws '{' ws [ member *( ws ',' ws member ) ] ws '}' ws
//   member  = string ws ':' ws ( array | 'null' | any )   ; the 11 names take array or null,
//                                                           other names any JSON (skipped)
//   array   = '[' ws [ element *( ws ',' ws element ) ] ws ']'
//   element = number | 'null'
// The first pass (init) finds each named array and skips over it by bracket counting;
// next() then advances the 11 cursors one element each. Element syntax is checked as
// the cursors reach it, so a stream that reads to the end was well-formed.
#include "events/stream_points.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace hh::events {
namespace {

constexpr std::array<std::string_view, 11> kArrayNames = {
    "time", "distance", "heartrate", "velocity_smooth", "lat", "lng", "altitude", "cadence", "power", "resistance",
    "temperature"};

// Where the double-valued arrays go; index 0 (time) is the integer one.
constexpr std::array<std::optional<double> StreamPoint::*, 11> kDoubleMembers = {
    nullptr,           &StreamPoint::distance, &StreamPoint::heartrate, &StreamPoint::velocity_smooth,
    &StreamPoint::lat, &StreamPoint::lng,      &StreamPoint::altitude,  &StreamPoint::cadence,
    &StreamPoint::power, &StreamPoint::resistance, &StreamPoint::temperature};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void skip_space(std::string_view& s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  s.remove_prefix(i);
}

// `s` starts at an opening quote; on success `s` is past the closing one and `content`
// holds the raw text between them (escapes undecoded).
bool take_string(std::string_view& s, std::string_view& content) {
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    if (s[i] == '"') {
      content = s.substr(1, i - 1);
      s.remove_prefix(i + 1);
      return true;
    }
  }
  return false;
}

// The length of the JSON number at the start of `s` (0 when there is none).
size_t number_length(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return 0;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return 0;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return 0;
  }
  return i;
}

// True when the JSON number `n` (already checked by number_length) is below 1 in
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
  int64_t exponent = 0;
  if (i < n.size() && (n[i] == 'e' || n[i] == 'E')) {
    ++i;
    const bool negative = i < n.size() && n[i] == '-';
    if (i < n.size() && (n[i] == '+' || n[i] == '-')) ++i;
    for (; i < n.size(); ++i) exponent = std::min<int64_t>(exponent * 10 + (n[i] - '0'), int64_t{1} << 40);
    if (negative) exponent = -exponent;
  }
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

// Skips one JSON value of any kind without recursion (a depth counter), checking strings
// and bracket balance; enough for members we do not keep.
bool skip_value(std::string_view& s) {
  size_t depth = 0;
  do {
    skip_space(s);
    if (s.empty()) return false;
    const char c = s.front();
    if (c == '"') {
      std::string_view ignored;
      if (!take_string(s, ignored)) return false;
    } else if (c == '{' || c == '[') {
      ++depth;
      s.remove_prefix(1);
      continue;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return false;
      --depth;
      s.remove_prefix(1);
    } else if (c == ',' || c == ':') {
      if (depth == 0) return false;
      s.remove_prefix(1);
      continue;
    } else {
      // A scalar: number or literal, up to the next delimiter.
      size_t n = 0;
      while (n < s.size() && !is_space(s[n]) && s[n] != ',' && s[n] != ']' && s[n] != '}' && s[n] != ':') ++n;
      const std::string_view token = s.substr(0, n);
      if (token != "true" && token != "false" && token != "null" && number_length(token) != n) return false;
      s.remove_prefix(n);
    }
  } while (depth > 0);
  return true;
}

}  // namespace

StreamPointReader::StreamPointReader(std::string_view body) : body_(body) {}

bool StreamPointReader::next(StreamPoint& point) {
  if (!initialised_) {
    initialised_ = true;
    // Finds the arrays: one pass over the body, no allocation.
    std::string_view s = body_;
    auto fail = [&](std::string message) {
      error_ = std::move(message);
      for (Cursor& cursor : cursors_) cursor = Cursor{};
      return false;
    };
    skip_space(s);
    if (s.empty()) return fail("body: empty");
    if (s.front() != '{') return fail("body: not a JSON object");
    s.remove_prefix(1);
    skip_space(s);
    if (!s.empty() && s.front() == '}') {
      s.remove_prefix(1);
    } else {
      while (true) {
        skip_space(s);
        std::string_view key;
        if (s.empty() || s.front() != '"' || !take_string(s, key)) return fail("body: expected a member name");
        skip_space(s);
        if (s.empty() || s.front() != ':') return fail("body: expected ':' after \"" + std::string(key) + "\"");
        s.remove_prefix(1);
        skip_space(s);
        size_t slot = kArrayNames.size();
        for (size_t i = 0; i < kArrayNames.size(); ++i) {
          if (kArrayNames[i] == key) slot = i;
        }
        if (slot < kArrayNames.size() && !s.empty() && s.front() == '[') {
          cursors_[slot].rest = s.substr(1);
          cursors_[slot].active = true;
        } else if (slot < kArrayNames.size()) {
          if (s.substr(0, 4) != "null") return fail(std::string(key) + ": expected an array or null");
          cursors_[slot] = Cursor{};  // null: the default []
        }
        if (!skip_value(s)) return fail(std::string(key) + ": malformed value");
        skip_space(s);
        if (!s.empty() && s.front() == ',') {
          s.remove_prefix(1);
          continue;
        }
        if (!s.empty() && s.front() == '}') {
          s.remove_prefix(1);
          break;
        }
        return fail("body: expected ',' or '}' after \"" + std::string(key) + "\"");
      }
    }
    skip_space(s);
    if (!s.empty()) return fail("body: content after the top-level object");
  }
  if (!error_.empty()) return false;

  point = StreamPoint{};
  point.index = index_;
  bool any = false;
  for (size_t slot = 0; slot < kArrayNames.size(); ++slot) {
    Cursor& cursor = cursors_[slot];
    if (!cursor.active) continue;
    std::string_view& s = cursor.rest;
    skip_space(s);
    if (!s.empty() && s.front() == ']') {
      cursor.active = false;  // this array is shorter: the rest of its points are null
      continue;
    }
    auto element_error = [&](std::string_view what) {
      error_ = std::string(kArrayNames[slot]) + "[" + std::to_string(index_) + "]: " + std::string(what);
      return false;
    };
    if (s.substr(0, 4) == "null") {
      s.remove_prefix(4);
    } else {
      const size_t n = number_length(s);
      if (n == 0) return element_error("not a number");
      const char* first = s.data();
      const char* last = s.data() + n;
      if (slot == 0) {
        // Unix seconds; a fractional second (not seen in practice) is truncated.
        int64_t seconds = 0;
        auto [end, ec] = std::from_chars(first, last, seconds);
        if (ec != std::errc{} || end != last) {
          double value = 0;
          if (!parse_double(s.substr(0, n), value) || !(std::fabs(value) < 9.2e18)) {
            return element_error("time out of range");
          }
          seconds = static_cast<int64_t>(value);
        }
        point.time = seconds;
      } else {
        double value = 0;
        if (!parse_double(s.substr(0, n), value)) return element_error("number out of range");
        point.*kDoubleMembers[slot] = value;
      }
      s.remove_prefix(n);
    }
    any = true;
    skip_space(s);
    if (!s.empty() && s.front() == ',') {
      s.remove_prefix(1);
      skip_space(s);
      if (s.empty() || s.front() == ']') return element_error("expected an element after ','");
    } else if (!s.empty() && s.front() == ']') {
      // Left in place: the next call sees ']' and retires this cursor.
    } else {
      return element_error("expected ',' or ']'");
    }
  }
  if (!any) return false;
  ++index_;
  return true;
}

}  // namespace hh::events
