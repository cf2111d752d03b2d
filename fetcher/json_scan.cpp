#include "fetcher/json_scan.h"

#include <cstdint>

namespace hh::fetcher {
namespace {

class Scanner {
 public:
  Scanner(std::string_view text, size_t max_depth) : text_(text), max_depth_(max_depth) {}

  bool document() {
    skip_space();
    if (!value(0)) return false;
    skip_space();
    if (pos_ != text_.size()) return fail("unexpected text after the document");
    return true;
  }
  // Skips one value starting at pos_ (after whitespace); used by top_level_member.
  bool value(size_t depth) {
    if (pos_ >= text_.size()) return fail("unexpected end of input");
    switch (text_[pos_]) {
      case '{': return object(depth + 1);
      case '[': return array(depth + 1);
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' ||
                                   text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool string() {
    ++pos_;  // opening quote
    while (pos_ < text_.size()) {
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return fail("control character in a string");
      if (c == '\\') {
        if (++pos_ >= text_.size()) break;
        const char e = text_[pos_];
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i) {
            if (pos_ + i >= text_.size() || !is_hex(text_[pos_ + i])) return fail("bad \\u escape");
          }
          pos_ += 4;
        } else if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't') {
          return fail("bad escape");
        }
      }
      ++pos_;
    }
    return fail("unterminated string");
  }

  size_t pos_ = 0;
  std::string error_;

 private:
  static bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  bool fail(std::string_view what) {
    if (error_.empty()) error_ = "malformed JSON at byte " + std::to_string(pos_) + ": " + std::string(what);
    return false;
  }
  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return fail("unexpected character");
    pos_ += word.size();
    return true;
  }
  bool digits() {
    const size_t start = pos_;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    return pos_ > start;
  }
  bool number() {
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    if (pos_ >= text_.size() || !is_digit(text_[pos_])) return fail("expected a value");
    if (text_[pos_] == '0') {
      ++pos_;
    } else {
      digits();
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!digits()) return fail("expected digits after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digits()) return fail("expected digits in the exponent");
    }
    return true;
  }
  bool array(size_t depth) {
    if (depth > max_depth_) return fail("nested too deeply");
    ++pos_;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      if (!value(depth)) return false;
      skip_space();
      if (pos_ >= text_.size()) return fail("unexpected end of input in an array");
      if (text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      if (text_[pos_] != ',') return fail("expected ',' or ']'");
      ++pos_;
    }
  }
  bool object(size_t depth) {
    if (depth > max_depth_) return fail("nested too deeply");
    ++pos_;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') return fail("expected a member name");
      if (!string()) return false;
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ':') return fail("expected ':'");
      ++pos_;
      skip_space();
      if (!value(depth)) return false;
      skip_space();
      if (pos_ >= text_.size()) return fail("unexpected end of input in an object");
      if (text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      if (text_[pos_] != ',') return fail("expected ',' or '}'");
      ++pos_;
    }
  }

  std::string_view text_;
  size_t max_depth_;
};

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

Result<void> check_json(std::string_view text, size_t max_depth) {
  Scanner scanner(text, max_depth);
  if (!scanner.document()) return fail(scanner.error_);
  return {};
}

std::optional<std::string_view> top_level_member(std::string_view text, std::string_view key) {
  Scanner scanner(text, 1024);
  scanner.skip_space();
  if (scanner.pos_ >= text.size() || text[scanner.pos_] != '{') return std::nullopt;
  ++scanner.pos_;
  for (;;) {
    scanner.skip_space();
    if (scanner.pos_ >= text.size() || text[scanner.pos_] != '"') return std::nullopt;
    const size_t name_start = scanner.pos_ + 1;
    if (!scanner.string()) return std::nullopt;
    const std::string_view name = text.substr(name_start, scanner.pos_ - 1 - name_start);
    scanner.skip_space();
    if (scanner.pos_ >= text.size() || text[scanner.pos_] != ':') return std::nullopt;
    ++scanner.pos_;
    scanner.skip_space();
    const size_t value_start = scanner.pos_;
    if (!scanner.value(1)) return std::nullopt;
    if (name == key) return text.substr(value_start, scanner.pos_ - value_start);
    scanner.skip_space();
    if (scanner.pos_ >= text.size() || text[scanner.pos_] != ',') return std::nullopt;
    ++scanner.pos_;
  }
}

std::optional<std::string> decode_string(std::string_view literal) {
  if (literal.size() < 2 || literal.front() != '"' || literal.back() != '"') return std::nullopt;
  std::string out;
  out.reserve(literal.size() - 2);
  for (size_t i = 1; i + 1 < literal.size(); ++i) {
    const char c = literal[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i + 1 > literal.size() - 1) return std::nullopt;
    switch (literal[i]) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '/': out.push_back('/'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        auto cp = hex4(literal.substr(i + 1));
        if (!cp) return std::nullopt;
        i += 4;
        if (*cp >= 0xD800 && *cp < 0xDC00 && i + 6 < literal.size() && literal[i + 1] == '\\' &&
            literal[i + 2] == 'u') {
          auto low = hex4(literal.substr(i + 3));
          if (low && *low >= 0xDC00 && *low < 0xE000) {
            *cp = 0x10000 + ((*cp - 0xD800) << 10) + (*low - 0xDC00);
            i += 6;
          }
        }
        append_utf8(out, *cp);
        break;
      }
      default: return std::nullopt;
    }
  }
  return out;
}

}  // namespace hh::fetcher
