#include "common/redaction.h"

#include <optional>

namespace hh {
namespace {

constexpr size_t kMinPartial = 4;  // shortest start of a secret redacted at the end of cut text

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<unsigned> hex4(std::string_view text) {
  if (text.size() < 4) return std::nullopt;
  unsigned value = 0;
  for (const char c : text.substr(0, 4)) {
    const int digit = hex_value(c);
    if (digit < 0) return std::nullopt;
    value = value * 16 + static_cast<unsigned>(digit);
  }
  return value;
}

void append_utf8(std::string& out, unsigned code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

// One unit of `text` read as the inside of a JSON string: the bytes it stands for and the
// bytes it takes. Text that is no escape stands for itself, byte by byte. An escape cut
// short by the end of the text reads as nothing (`taken` 0).
struct Unit {
  std::string bytes;
  size_t taken = 0;
};

Unit unit_at(std::string_view text) {
  if (text[0] != '\\' || text.size() < 2) return {std::string(1, text[0]), text[0] == '\\' ? size_t{0} : 1};
  switch (text[1]) {
    case '"': case '\\': case '/': return {std::string(1, text[1]), 2};
    case 'b': return {"\b", 2};
    case 'f': return {"\f", 2};
    case 'n': return {"\n", 2};
    case 'r': return {"\r", 2};
    case 't': return {"\t", 2};
    case 'u': break;
    default: return {"\\", 1};
  }
  const auto high = hex4(text.substr(2));
  if (!high) return {"", 0};
  Unit unit{"", 6};
  unsigned code_point = *high;
  if (code_point >= 0xD800 && code_point < 0xDC00) {
    const auto low = text.size() >= 12 && text.substr(6, 2) == "\\u" ? hex4(text.substr(8)) : std::nullopt;
    if (!low) return text.size() < 12 ? Unit{"", 0} : Unit{"\\", 1};
    code_point = 0x10000 + ((code_point - 0xD800) << 10) + (*low - 0xDC00);
    unit.taken = 12;
  }
  append_utf8(unit.bytes, code_point);
  return unit;
}

// Bytes of `text` from its start that spell `secret` (0 if they do not), or, when the text
// ends first after at least kMinPartial bytes of it, the rest of the text.
size_t spelled_length(std::string_view text, std::string_view secret) {
  if (text.starts_with(secret)) return secret.size();  // as sent, whatever it holds
  size_t at = 0;
  size_t matched = 0;
  while (matched < secret.size()) {
    if (at == text.size()) return matched >= kMinPartial ? at : 0;
    const Unit unit = unit_at(text.substr(at));
    if (unit.taken == 0) return matched >= kMinPartial ? text.size() : 0;
    if (!secret.substr(matched).starts_with(unit.bytes)) return 0;
    matched += unit.bytes.size();
    at += unit.taken;
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
