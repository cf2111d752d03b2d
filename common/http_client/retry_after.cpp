#include "common/http_client/retry_after.h"

#include <charconv>
#include <ctime>
#include <string>

namespace hh::http_client {

std::optional<int64_t> parse_retry_after(std::string_view value, int64_t now_s) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (value.front() >= '0' && value.front() <= '9') {
    int64_t seconds = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec == std::errc::result_out_of_range) return int64_t{INT32_MAX};  // "very long": clamped by the policy
    if (ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
    return seconds;
  }
  // IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT", the form senders must use) and the two
  // obsolete forms a recipient must accept too (RFC 9110 §5.6.7): RFC 850 ("Sunday,
  // 06-Nov-94 08:49:37 GMT"; a two-digit year is 1969-2068) and asctime ("Sun Nov  6
  // 08:49:37 1994").
  const std::string text(value);
  for (const char* format : {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %d %H:%M:%S %Y"}) {
    std::tm tm{};
    const char* end = ::strptime(text.c_str(), format, &tm);
    if (end == nullptr || *end != '\0') continue;
    const int64_t at = static_cast<int64_t>(::timegm(&tm));
    return at > now_s ? at - now_s : 0;
  }
  return std::nullopt;
}

}  // namespace hh::http_client
