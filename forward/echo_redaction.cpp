#include "forward/echo_redaction.h"

#include <algorithm>

#include "common/redaction.h"

namespace hh::forward {
namespace {

// Query values shorter than this are not hidden on their own ("1", "on", "json"): they
// would mangle the text around them and hide nothing; the query as a whole still is.
constexpr size_t kShortestHiddenValue = 6;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A query part as a form decoder reads it: %XX decoded, '+' a space.
std::string percent_decoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 && hex_value(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i] == '+' ? ' ' : text[i]);
    }
  }
  return out;
}

}  // namespace

EchoRedaction::EchoRedaction(const HttpUrl& url, std::string_view secret) {
  auto hide = [this](std::string_view text, size_t shortest) {
    if (text.size() >= shortest) hidden_.emplace_back(text);
  };
  if (url.has_query) {
    hide(url.query, 1);
    std::string_view rest = url.query;
    while (!rest.empty()) {
      const size_t amp = rest.find('&');
      const std::string_view part = rest.substr(0, amp);
      rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
      const size_t eq = part.find('=');
      const std::string_view value = eq == std::string_view::npos ? part : part.substr(eq + 1);
      hide(value, kShortestHiddenValue);
      hide(percent_decoded(value), kShortestHiddenValue);
    }
  }
  hide(secret, 1);
  if (secret.starts_with("whsec_")) {
    // The key's base64 as a backend may print it back: padded or not, and as base64url
    // ('-' and '_' for '+' and '/'), with or without its padding.
    const std::string_view key = secret.substr(6);
    std::string_view unpadded = key;
    while (unpadded.ends_with('=')) unpadded.remove_suffix(1);
    std::string url(key);
    std::replace(url.begin(), url.end(), '+', '-');
    std::replace(url.begin(), url.end(), '/', '_');
    hide(key, 1);
    hide(unpadded, 1);
    hide(url, 1);
    hide(std::string_view(url).substr(0, unpadded.size()), 1);
  }
  // The shared matcher merges overlapping matches, so order does not matter: only repeats go.
  std::sort(hidden_.begin(), hidden_.end());
  hidden_.erase(std::unique(hidden_.begin(), hidden_.end()), hidden_.end());
  size_t longest = 0;
  for (const std::string& text : hidden_) longest = std::max(longest, text.size());
  // A JSON string may spend six bytes on one (\u002f).
  longest_ = 6 * longest;
}

std::string EchoRedaction::apply(std::string_view text, TextEnd end) const { return redacted(text, hidden_, end); }

}  // namespace hh::forward
