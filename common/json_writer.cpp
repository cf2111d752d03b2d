#include "common/json_writer.h"

#include <charconv>
#include <cmath>

namespace hh::json {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when invalid.
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t need = 0;
  uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) { need = 1; cp = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { need = 2; cp = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { need = 3; cp = c & 0x07; }
  else return 0;
  for (size_t k = 1; k <= need; ++k) {
    if (i + k >= text.size() || (byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  // Reject overlong forms, surrogates and values past U+10FFFF.
  static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMin[need] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return need + 1;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void append_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    // Copy the longest run that needs no escaping in one go.
    size_t run = i;
    while (run < text.size()) {
      const auto c = static_cast<unsigned char>(text[run]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++run;
    }
    out.append(text.data() + i, run - i);
    i = run;
    if (i >= text.size()) break;
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t n = utf8_sequence_length(text, i);
      if (n == 0) {
        out.append("\xEF\xBF\xBD");
        ++i;
      } else {
        out.append(text.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        out.append("\\u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
    }
    ++i;
  }
  out.push_back('"');
}

void append_quoted_excerpt(std::string& out, std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) {
    json::append_string(out, text);
    return;
  }
  // Cut on a UTF-8 boundary so the excerpt stays readable; append_string would replace a
  // split sequence with U+FFFD anyway.
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string excerpt(text.substr(0, cut));
  excerpt.append("\xE2\x80\xA6");  // …
  json::append_string(out, excerpt);
}

void append_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out.append("null");
    return;
  }
  // -0 is written 0: SQLite's REAL columns do not keep the sign of zero and PostgreSQL's
  // keep it, so the two backends answer alike (and JSON readers differ on "-0" anyway).
  if (value == 0) value = 0;
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (ec != std::errc{}) return;
  // to_chars pads the exponent to two digits, as printf does ("1e-07"); the shortest
  // form the docs promise (docs/getting-data-out.md) has no padding, as JavaScript and
  // most JSON writers print it: "1e-7". "1e+21" keeps its sign, as JavaScript writes it.
  std::string_view text(buffer, static_cast<size_t>(end - buffer));
  const auto e = text.find('e');
  if (e == std::string_view::npos) {
    out.append(text);
    return;
  }
  out.append(text.substr(0, e + 2));  // the mantissa, 'e' and the exponent's sign
  std::string_view exponent = text.substr(e + 2);
  while (exponent.size() > 1 && exponent.front() == '0') exponent.remove_prefix(1);
  out.append(exponent);
}

void ObjectWriter::key(std::string_view key) {
  if (!first_) out_.push_back(',');
  first_ = false;
  out_.push_back('"');
  out_.append(key);
  out_.append("\":");
}

ObjectWriter& ObjectWriter::string(std::string_view k, std::string_view value) {
  key(k);
  append_string(out_, value);
  return *this;
}

ObjectWriter& ObjectWriter::optional_string(std::string_view k, std::optional<std::string_view> value) {
  return value ? string(k, *value) : null(k);
}

ObjectWriter& ObjectWriter::integer(std::string_view k, int64_t value) {
  key(k);
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out_.append(buffer, end);
  return *this;
}

ObjectWriter& ObjectWriter::number(std::string_view k, double value) {
  key(k);
  append_number(out_, value);
  return *this;
}

ObjectWriter& ObjectWriter::boolean(std::string_view k, bool value) {
  key(k);
  out_.append(value ? "true" : "false");
  return *this;
}

ObjectWriter& ObjectWriter::null(std::string_view k) {
  key(k);
  out_.append("null");
  return *this;
}

ObjectWriter& ObjectWriter::raw(std::string_view k, std::string_view json) {
  key(k);
  out_.append(json);
  return *this;
}

}  // namespace hh::json
