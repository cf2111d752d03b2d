#include "receiver/http/chunked_body_end.h"

#include <algorithm>

#include "receiver/http/request_parser.h"

namespace hh::http {
namespace {

constexpr std::string_view kCrlf = "\r\n";

// RFC 9110 §5.6.2: tchar.
bool is_token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view name) { return !name.empty() && std::all_of(name.begin(), name.end(), is_token_char); }

// What Beast refuses in a head's field value: a control character other than HTAB (a CR
// or LF alone among them).
bool has_control_char(std::string_view value) {
  return std::any_of(value.begin(), value.end(), [](char c) {
    const auto octet = static_cast<unsigned char>(c);
    return (octet < 0x20 && c != '\t') || octet == 0x7f;
  });
}

std::string_view trimmed(std::string_view value) {
  const size_t first = value.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return value.substr(first, value.find_last_not_of(" \t") - first + 1);
}

ChunkedBodyEnd malformed(std::string_view reason) {
  return {.verdict = ChunkedBodyEnd::Verdict::malformed, .bytes = 0, .reason = reason};
}

ChunkedBodyEnd too_large() { return {.verdict = ChunkedBodyEnd::Verdict::too_large, .bytes = 0, .reason = {}}; }

}  // namespace

ChunkedBodyEnd read_chunked_body_end(std::string_view bytes, size_t trailer_limit) {
  size_t at = bytes.starts_with(kCrlf) ? kCrlf.size() : 0;
  const size_t last_chunk_end = bytes.find(kCrlf, at);
  if (last_chunk_end == std::string_view::npos) return malformed("the last chunk's line has no end");
  at = last_chunk_end + kCrlf.size();
  size_t field_bytes = 0;
  bool after_field = false;  // an obs-fold line continues a field
  for (;;) {
    const size_t end_of_line = bytes.find(kCrlf, at);
    if (end_of_line == std::string_view::npos) return malformed("the trailer section has no end");
    const std::string_view line = bytes.substr(at, end_of_line - at);
    at = end_of_line + kCrlf.size();
    if (line.empty()) return {.verdict = ChunkedBodyEnd::Verdict::complete, .bytes = at, .reason = {}};
    field_bytes += line.size() + kCrlf.size();
    if (field_bytes > trailer_limit) return too_large();
    std::string_view value = line;
    if (line.front() == ' ' || line.front() == '\t') {
      if (!after_field) return malformed("a trailer line that starts with a space, before any field");
    } else {
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos) return malformed("a trailer line that is not a field (no colon)");
      const std::string_view name = line.substr(0, colon);
      // RFC 9112 §5.1: no whitespace inside a field name or between it and its colon; the
      // head is refused for it too (Beast: "bad field").
      if (!is_token(name)) return malformed("a trailer field name that is not a token (a space in it, or before its colon)");
      if (name.size() > kMaxFieldBytes) return too_large();
      value = line.substr(colon + 1);
      after_field = true;
    }
    if (trimmed(value).size() > kMaxFieldBytes) return too_large();
    if (has_control_char(value)) return malformed("a control character in a trailer field's value");
  }
}

}  // namespace hh::http
