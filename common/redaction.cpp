#include "common/redaction.h"

#include <algorithm>
#include <vector>

#include "common/json_scan.h"

namespace hh {
namespace {

constexpr size_t kMinPartial = 4;  // shortest start of a secret redacted at the end of cut text

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Whether `text` (from a backslash to the end) is the start of an escape cut short: `\`,
// `\u` and fewer than four hex digits, or a high surrogate with its low one cut short.
bool is_cut_escape(std::string_view text) {
  if (text == "\\") return true;
  if (!text.starts_with("\\u")) return false;
  const std::string_view digits = text.substr(2, 4);
  if (!std::all_of(digits.begin(), digits.end(), is_hex)) return false;
  if (digits.size() < 4) return true;
  const bool high_surrogate =
      (digits[0] == 'd' || digits[0] == 'D') && std::string_view("89abAB").find(digits[1]) != std::string_view::npos;
  if (!high_surrogate || text.size() == 6) return high_surrogate;
  return text.size() < 12 && is_cut_escape(text.substr(6));
}

int hex_value(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

// Whether `text` (from a '%' to the end) is a percent-escape cut short: `%` or `%` and one
// hex digit.
bool is_cut_percent(std::string_view text) {
  return text == "%" || (text.size() == 2 && text[0] == '%' && is_hex(text[1]));
}

// One unit of `text` read as the inside of a JSON string or a percent-encoded URL (a
// service that echoes the request's query: `sk%5Flive…`): the bytes it stands for and the
// bytes it takes. Text that is no escape stands for itself, byte by byte.
json::DecodedEscape unit_at(std::string_view text) {
  if (text[0] == '\\') {
    if (auto escape = json::decode_escape(text)) return std::move(*escape);
  }
  if (text[0] == '%' && text.size() >= 3 && is_hex(text[1]) && is_hex(text[2])) {
    return {std::string(1, static_cast<char>(hex_value(text[1]) * 16 + hex_value(text[2]))), 3};
  }
  return {std::string(1, text[0]), 1};
}

// Bytes of `text` from its start that spell `secret` (0 if they do not). With `to_end`,
// also the rest of the text when it ends (or ends in a cut escape) after at least
// kMinPartial bytes of the secret.
size_t spelled_length(std::string_view text, std::string_view secret, bool to_end) {
  if (text.starts_with(secret)) return secret.size();  // as sent, whatever it holds
  if (to_end && text.size() >= kMinPartial && secret.starts_with(text)) return text.size();
  size_t at = 0;
  size_t matched = 0;
  while (matched < secret.size()) {
    if (at == text.size()) return to_end && matched >= kMinPartial ? at : 0;
    if (to_end && matched >= kMinPartial &&
        ((text[at] == '\\' && is_cut_escape(text.substr(at))) || is_cut_percent(text.substr(at)))) {
      return text.size();
    }
    const json::DecodedEscape unit = unit_at(text.substr(at));
    if (!secret.substr(matched).starts_with(unit.bytes)) return 0;
    matched += unit.bytes.size();
    at += unit.length;
  }
  return at;
}

// Where each secret is found, ends included, before any is replaced: so that a secret that
// starts another, or overlaps it, cannot leave a part of the other shown. Kept as the
// matches alone (a fetched page of many megabytes is scanned too, and a per-byte table
// cost eight times its size).
struct Match {
  size_t from;
  size_t until;
};

std::vector<Match> find_secrets(std::string_view text, std::span<const std::string> secrets, TextEnd end) {
  std::vector<Match> matches;
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (size_t at = 0; at < text.size(); ++at) {
      // A spelling of the secret starts with its first byte, an escape or a percent sign.
      const char c = text[at];
      if (c != secret[0] && c != '\\' && c != '%') continue;
      if (const size_t length = spelled_length(text.substr(at), secret, end == TextEnd::cut_short); length > 0) {
        matches.push_back({at, at + length});
      }
    }
  }
  std::sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) { return a.from < b.from; });
  return matches;
}

std::string replaced(std::string_view text, const std::vector<Match>& matches) {
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  for (size_t i = 0; i < matches.size();) {
    // One mark for this match and every one that starts inside it, however far they reach.
    const size_t from = matches[i].from;
    size_t until = matches[i].until;
    for (++i; i < matches.size() && matches[i].from < until; ++i) until = std::max(until, matches[i].until);
    out.append(text.substr(at, from - at));
    out += kRedactedMark;
    at = until;
  }
  out.append(text.substr(at));
  return out;
}

}  // namespace

std::string redacted(std::string_view text, std::span<const std::string> secrets, TextEnd end) {
  return replaced(text, find_secrets(text, secrets, end));
}

void redact_in_place(std::string& text, std::span<const std::string> secrets, TextEnd end) {
  const std::vector<Match> matches = find_secrets(text, secrets, end);
  if (!matches.empty()) text = replaced(text, matches);
}

}  // namespace hh
