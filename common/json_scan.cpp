// The syntax read here is RFC 8259's:
//   value  = object | array | string | number | 'true' | 'false' | 'null'
//   object = '{' ws [ string ws ':' ws value *( ws ',' ws string ws ':' ws value ) ] ws '}'
//   array  = '[' ws [ value *( ws ',' ws value ) ] ws ']'
//   string = '"' *( unescaped | '\' ( '"' | '\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u' 4HEXDIG ) ) '"'
//   number = [ '-' ] ( '0' | 1-9 *DIGIT ) [ '.' 1*DIGIT ] [ ( 'e' | 'E' ) [ '+' | '-' ] 1*DIGIT ]
//   ws     = *( ' ' | TAB | LF | CR )
// Bytes of 0x80 and above are taken as they are (UTF-8 is not checked).
#include "common/json_scan.h"

#include <cstdint>

namespace hh::json {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_short_escape(char c) {
  return c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't';
}
// Where token() ends a number or literal, as simdjson bounds a scalar.
bool ends_scalar(char c) { return is_space(c) || c == ',' || c == ':' || c == ']' || c == '}'; }

}  // namespace

void Scanner::skip_space() {
  while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
}

bool Scanner::skip(char c) {
  if (at_end() || text_[pos_] != c) return false;
  ++pos_;
  return true;
}

bool Scanner::fail(std::string_view what) {
  if (problem_.empty()) {
    problem_ = what;
    problem_offset_ = pos_;
  }
  return false;
}

bool Scanner::document(size_t max_depth) {
  skip_space();
  if (!value(max_depth)) return false;
  skip_space();
  return at_end() || fail("unexpected text after the document");
}

bool Scanner::value(size_t max_depth) {
  if (at_end()) return fail("unexpected end of input");
  switch (text_[pos_]) {
    case '{': return object(max_depth);
    case '[': return array(max_depth);
    case '"': return string();
    case 't': return literal("true");
    case 'f': return literal("false");
    case 'n': return literal("null");
    default: return number();
  }
}

bool Scanner::string(std::string_view* content) {
  if (!skip('"')) return fail("expected a string");
  const size_t start = pos_;
  while (pos_ < text_.size()) {
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      if (content) *content = text_.substr(start, pos_ - start);
      ++pos_;
      return true;
    }
    if (c < 0x20) return fail("control character in a string");
    if (c == '\\') {
      if (++pos_ >= text_.size()) break;
      const char e = text_[pos_];
      if (e == 'u') {
        for (size_t i = 1; i <= 4; ++i) {
          if (pos_ + i >= text_.size() || !is_hex(text_[pos_ + i])) return fail("bad \\u escape");
        }
        pos_ += 4;
      } else if (!is_short_escape(e)) {
        return fail("bad escape");
      }
    }
    ++pos_;
  }
  return fail("unterminated string");
}

bool Scanner::digits() {
  const size_t start = pos_;
  while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
  return pos_ > start;
}

bool Scanner::number(std::string_view* text) {
  const size_t start = pos_;
  skip('-');
  if (at_end() || !is_digit(text_[pos_])) return fail("expected a value");
  if (!skip('0')) digits();
  if (skip('.') && !digits()) return fail("expected digits after '.'");
  if (skip('e') || skip('E')) {
    if (!skip('+')) skip('-');
    if (!digits()) return fail("expected digits in the exponent");
  }
  if (text) *text = text_.substr(start, pos_ - start);
  return true;
}

bool Scanner::literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return fail("unexpected character");
  pos_ += word.size();
  return true;
}

bool Scanner::token() {
  switch (peek()) {
    case '{':
    case '}':
    case '[':
    case ']':
    case ',':
    case ':': ++pos_; return true;
    case '"': return string();
    default: break;
  }
  // A scalar (containers are their brackets, above), or what is wrong at this byte.
  if (!value(0)) return false;
  return at_end() || ends_scalar(text_[pos_]) || fail("unexpected character");
}

bool Scanner::array(size_t max_depth) {
  if (max_depth == 0) return fail("nested too deeply");
  ++pos_;
  skip_space();
  if (skip(']')) return true;
  for (;;) {
    skip_space();
    if (!value(max_depth - 1)) return false;
    skip_space();
    if (at_end()) return fail("unexpected end of input in an array");
    if (skip(']')) return true;
    if (!skip(',')) return fail("expected ',' or ']'");
  }
}

bool Scanner::object(size_t max_depth) {
  if (max_depth == 0) return fail("nested too deeply");
  ++pos_;
  skip_space();
  if (skip('}')) return true;
  for (;;) {
    skip_space();
    if (peek() != '"') return fail("expected a member name");
    if (!string()) return false;
    skip_space();
    if (!skip(':')) return fail("expected ':'");
    skip_space();
    if (!value(max_depth - 1)) return false;
    skip_space();
    if (at_end()) return fail("unexpected end of input in an object");
    if (skip('}')) return true;
    if (!skip(',')) return fail("expected ',' or '}'");
  }
}

Result<void> check_json(std::string_view text, size_t max_depth) {
  Scanner scanner(text);
  if (scanner.document(max_depth)) return {};
  return fail("malformed JSON at byte " + std::to_string(scanner.problem_offset()) + ": " +
              std::string(scanner.problem()));
}

bool text_after_value(std::string_view text, size_t max_depth) {
  Scanner scanner(text);
  scanner.skip_space();
  if (!scanner.value(max_depth)) return false;
  scanner.skip_space();
  return !scanner.at_end();
}

char first_byte(std::string_view text) {
  Scanner scanner(text);
  scanner.skip_space();
  return scanner.peek();
}

std::optional<std::string_view> top_level_member(std::string_view text, std::string_view key) {
  Scanner scanner(text);
  scanner.skip_space();
  if (!scanner.skip('{')) return std::nullopt;
  for (;;) {
    scanner.skip_space();
    std::string_view name;
    if (!scanner.string(&name)) return std::nullopt;
    scanner.skip_space();
    if (!scanner.skip(':')) return std::nullopt;
    scanner.skip_space();
    const size_t start = scanner.offset();
    if (!scanner.value(kSimdjsonMaxDepth - 1)) return std::nullopt;  // inside the object
    if (name == key) return text.substr(start, scanner.offset() - start);
    scanner.skip_space();
    if (!scanner.skip(',')) return std::nullopt;
  }
}

namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::optional<uint32_t> hex4(std::string_view text) {
  if (text.size() < 4) return std::nullopt;
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) {
    const char c = text[i];
    value <<= 4;
    if (c >= '0' && c <= '9') value |= static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') value |= static_cast<uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') value |= static_cast<uint32_t>(c - 'A' + 10);
    else return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<DecodedEscape> decode_escape(std::string_view text) {
  if (text.size() < 2 || text[0] != '\\') return std::nullopt;
  switch (text[1]) {
    case '"': return DecodedEscape{"\"", 2};
    case '\\': return DecodedEscape{"\\", 2};
    case '/': return DecodedEscape{"/", 2};
    case 'b': return DecodedEscape{"\b", 2};
    case 'f': return DecodedEscape{"\f", 2};
    case 'n': return DecodedEscape{"\n", 2};
    case 'r': return DecodedEscape{"\r", 2};
    case 't': return DecodedEscape{"\t", 2};
    case 'u': break;
    default: return std::nullopt;
  }
  auto cp = hex4(text.substr(2));
  if (!cp) return std::nullopt;
  DecodedEscape escape{"", 6};
  if (*cp >= 0xD800 && *cp < 0xDC00 && text.substr(6, 2) == "\\u") {
    auto low = hex4(text.substr(8));
    if (low && *low >= 0xDC00 && *low < 0xE000) {
      *cp = 0x10000 + ((*cp - 0xD800) << 10) + (*low - 0xDC00);
      escape.length = 12;
    }
  }
  append_utf8(escape.bytes, *cp);
  return escape;
}

std::optional<std::string> decode_string(std::string_view literal) {
  if (literal.size() < 2 || literal.front() != '"' || literal.back() != '"') return std::nullopt;
  const std::string_view inside = literal.substr(1, literal.size() - 2);
  std::string out;
  out.reserve(inside.size());
  for (size_t i = 0; i < inside.size();) {
    if (inside[i] != '\\') {
      out.push_back(inside[i++]);
      continue;
    }
    auto escape = decode_escape(inside.substr(i));
    if (!escape) return std::nullopt;
    out += escape->bytes;
    i += escape->length;
  }
  return out;
}

}  // namespace hh::json
