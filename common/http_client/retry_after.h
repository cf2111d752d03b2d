#pragma once
// The Retry-After response header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
#include <cstdint>
#include <optional>
#include <string_view>

namespace hh::http_client {

// Seconds to wait from `now_s` (Unix seconds); an HTTP-date in the past gives 0.
// nullopt when the value is neither form.
std::optional<int64_t> parse_retry_after(std::string_view value, int64_t now_s);

}  // namespace hh::http_client
