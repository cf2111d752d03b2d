#include "config/toml_syntax_error.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/forward_settings.h"
#include "config/setting_keys.h"

namespace hh::config {
namespace {

// Read by hand, not with std::regex: libstdc++'s recurses per character, and a line may be
// megabytes long (the file's limit is 4 MiB).

bool bare_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

void skip_blanks(std::string_view text, size_t& at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
}

// A bare or dotted key from `at` ("listen", "service . base_url" as "service.base_url"),
// `at` then after it and the blanks that follow; nullopt when there is none. Quoted keys
// are not read: no setting needs one.
std::optional<std::string> dotted_key(std::string_view text, size_t& at) {
  std::string key;
  for (;;) {
    skip_blanks(text, at);
    const size_t start = at;
    while (at < text.size() && bare_key_char(text[at])) ++at;
    if (at == start) return std::nullopt;
    key.append(text.substr(start, at - start));
    skip_blanks(text, at);
    if (at == text.size() || text[at] != '.') return key;
    key += '.';
    ++at;
  }
}

struct KeyLine {
  std::string key;         // as written, without blanks: "base_url"
  std::string_view value;  // what follows the '='
  size_t equals_column;    // the '=', 1-based as toml++ counts columns
};

// The `key = value` a line starts with.
std::optional<KeyLine> key_line(std::string_view line) {
  size_t at = 0;
  auto key = dotted_key(line, at);
  if (!key || at == line.size() || line[at] != '=') return std::nullopt;
  return KeyLine{std::move(*key), line.substr(at + 1), at + 1};
}

// A table header line's name and whether it opens an array of tables ([[forward]]).
std::optional<std::pair<std::string, bool>> table_header(std::string_view line) {
  size_t at = 0;
  skip_blanks(line, at);
  if (at == line.size() || line[at] != '[') return std::nullopt;
  const bool array = at + 1 < line.size() && line[at + 1] == '[';
  at += array ? 2 : 1;
  auto name = dotted_key(line, at);
  const std::string_view close = array ? "]]" : "]";
  if (!name || line.substr(at, close.size()) != close) return std::nullopt;
  return std::pair{std::move(*name), array};
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// The table the lines before `line` (1-based) leave open, as errors name keys in it:
// "service.", "forward[1]." (the second [[forward]] block), "" at the top.
std::string table_before(const std::vector<std::string_view>& lines, size_t line) {
  std::string table;
  std::map<std::string, int> blocks;  // of each array of tables so far
  for (size_t i = 0; i + 1 < line && i < lines.size(); ++i) {
    const auto header = table_header(lines[i]);
    if (!header) continue;
    const auto& [name, array] = *header;
    table = array ? name + "[" + std::to_string(blocks[name]++) + "]." : name + ".";
  }
  return table;
}

std::string_view without_edge_blanks(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// Whether `text` is a TOML number: decimal (with '_', a fraction, an exponent), hex,
// octal, binary, inf or nan, with an optional sign.
bool toml_number(std::string_view text) {
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) text.remove_prefix(1);
  if (text == "inf" || text == "nan") return true;
  const auto all_of = [](std::string_view digits, auto is_digit) {
    return !digits.empty() && std::all_of(digits.begin(), digits.end(), [&](char c) { return c == '_' || is_digit(c); });
  };
  const auto decimal = [](char c) { return c >= '0' && c <= '9'; };
  if (text.starts_with("0x")) return all_of(text.substr(2), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
  if (text.starts_with("0o")) return all_of(text.substr(2), [](char c) { return c >= '0' && c <= '7'; });
  if (text.starts_with("0b")) return all_of(text.substr(2), [](char c) { return c == '0' || c == '1'; });
  if (text.empty() || !decimal(text.front())) return false;
  const size_t exponent = text.find_first_of("eE");
  const std::string_view mantissa = text.substr(0, exponent);
  const size_t point = mantissa.find('.');
  if (!all_of(mantissa.substr(0, point), decimal)) return false;
  if (point != std::string_view::npos && !all_of(mantissa.substr(point + 1), decimal)) return false;
  if (exponent == std::string_view::npos) return true;
  std::string_view power = text.substr(exponent + 1);
  if (!power.empty() && (power.front() == '+' || power.front() == '-')) power.remove_prefix(1);
  return all_of(power, decimal);
}

// Whether the value a line gives (what follows its '=') is bare text TOML has no type for:
// not quoted, and no number, boolean, array or inline table. Nothing given is not.
bool bare_text(std::string_view after_equals) {
  const std::string_view value = without_edge_blanks(after_equals.substr(0, after_equals.find('#')));  // bare: no '#'
  if (value.empty()) return false;
  if (value.front() == '"' || value.front() == '\'' || value.front() == '[' || value.front() == '{') return false;
  if (value == "true" || value == "false") return false;
  return !toml_number(value);
}

// Whether the key `name` (as errors name it: "max_body_bytes", "forward[1].batch") takes a
// number or true/false: quotes would be the wrong advice for its bare text (`10MB`).
bool takes_no_string(const std::string& name) {
  const KeyDoc* doc = nullptr;
  if (name.starts_with("forward[")) {
    const size_t block_end = name.find("].");
    const ForwardKey* key = block_end == std::string::npos ? nullptr : find_forward_key(name.substr(block_end + 2));
    if (key) doc = &key->doc;
  } else if (const SettingKey* key = find_setting_key(name)) {
    doc = &key->doc;
  }
  return doc != nullptr && (doc->type == "integer" || doc->type == "true/false");
}

}  // namespace

std::string toml_syntax_error(std::string_view text, std::string_view source_name, int64_t line, int64_t column,
                              std::string_view description) {
  std::string message =
      std::string(source_name) + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  const std::vector<std::string_view> lines = lines_of(text);
  const bool in_text = line >= 1 && static_cast<size_t>(line) <= lines.size();
  const auto key = in_text ? key_line(lines[static_cast<size_t>(line) - 1]) : std::nullopt;
  // Named only when the error is in that line's value: an array left open lines above is
  // reported where the parser gave up, at the start of an innocent `key =` (review). And
  // not after a multi-line string, whose lines this reading cannot tell from keys and
  // table headers.
  const auto multi_line_string_before = [&] {
    for (size_t i = 0; i + 1 < static_cast<size_t>(line); ++i) {
      if (lines[i].find("\"\"\"") != std::string_view::npos || lines[i].find("'''") != std::string_view::npos) return true;
    }
    return false;
  };
  if (!key || column <= static_cast<int64_t>(key->equals_column) || multi_line_string_before()) {
    return message + std::string(description);
  }
  const std::string name = table_before(lines, static_cast<size_t>(line)) + key->key;
  message += name + ": " + std::string(description);
  if (bare_text(key->value) && !takes_no_string(name)) message += " (a string needs quotes: " + key->key + " = \"…\")";
  return message;
}

}  // namespace hh::config
