#pragma once
// The read API's request target, decoded: path segments and query parameters, and typed
// reads of the parameters whose errors name the parameter (they become 400 answers):
// "start: expected RFC 3339, a date or Unix seconds, got \"x\"".
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace hh::api {

struct ApiTarget {
  std::vector<std::string> segments;                        // percent-decoded, "/v1/a/b" → {"v1","a","b"}
  std::vector<std::pair<std::string, std::string>> params;  // percent-decoded, in order
};

// Query values are percent-decoded; '+' stays a plus sign (send a space as %20).
Result<ApiTarget> parse_target(std::string_view target);

class Params {
 public:
  // Fails (error()) on a parameter not in `allowed`, one given twice, or one given with an
  // empty value ("provider: empty value").
  Params(const ApiTarget& target, std::initializer_list<std::string_view> allowed);
  const std::string& error() const { return error_; }

  std::optional<std::string_view> text(std::string_view name) const;
  // RFC 3339, a date (midnight UTC) or Unix seconds → UTC milliseconds.
  Result<std::optional<int64_t>> time_ms(std::string_view name) const;
  // `start` and `end` (time_ms), each optional; when both are given, start is before end.
  struct Window {
    std::optional<int64_t> start_ms, end_ms;
  };
  Result<Window> window() const;
  // An integer in [min, max].
  Result<std::optional<int64_t>> integer(std::string_view name, int64_t min, int64_t max) const;

 private:
  const ApiTarget& target_;
  std::string error_;
};

// Page cursors: opaque to clients (base64url), so the encoding may change; a cursor that
// does not decode is a 400.
std::string encode_cursor(std::string_view plain);
std::optional<std::string> decode_cursor(std::string_view cursor);

}  // namespace hh::api
