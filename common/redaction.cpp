#include "common/redaction.h"

#include "common/json_scan.h"

namespace hh {
namespace {

constexpr size_t kMinPartial = 4;  // shortest start of a secret redacted at the end of cut text
constexpr size_t kLongestEscape = 12;  // a surrogate pair, \ud83d\udd11

// One unit of `text` read as the inside of a JSON string: the bytes it stands for and the
// bytes it takes. Text that is no escape stands for itself, byte by byte. An escape cut
// short by the end of the text reads as nothing (`length` 0).
json::DecodedEscape unit_at(std::string_view text) {
  if (text[0] == '\\') {
    if (auto escape = json::decode_escape(text)) return std::move(*escape);
    if (text.size() < kLongestEscape) return {"", 0};
  }
  return {std::string(1, text[0]), 1};
}

// Bytes of `text` from its start that spell `secret` (0 if they do not), or, when the text
// ends first after at least kMinPartial bytes of it, the rest of the text.
size_t spelled_length(std::string_view text, std::string_view secret) {
  if (text.starts_with(secret)) return secret.size();  // as sent, whatever it holds
  size_t at = 0;
  size_t matched = 0;
  while (matched < secret.size()) {
    if (at == text.size()) return matched >= kMinPartial ? at : 0;
    const json::DecodedEscape unit = unit_at(text.substr(at));
    if (unit.length == 0) return matched >= kMinPartial ? text.size() : 0;
    if (!secret.substr(matched).starts_with(unit.bytes)) return 0;
    matched += unit.bytes.size();
    at += unit.length;
  }
  return at;
}

}  // namespace

std::string redacted(std::string_view text, std::span<const std::string> secrets) {
  std::string out(text);
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    std::string next;
    size_t at = 0;
    while (at < out.size()) {
      if (const size_t length = spelled_length(std::string_view(out).substr(at), secret); length > 0) {
        next += kRedactedMark;
        at += length;
      } else {
        next.push_back(out[at++]);
      }
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace hh
