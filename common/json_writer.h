#pragma once
// Appends JSON text to a string. Written by hand because every output path (log lines,
// query rows, read-API pages, capture lines) streams millions of small objects and only
// needs correct string escaping; a DOM library would allocate per value.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hh::json {

// Appends `text` as a JSON string literal (with quotes). Bytes that are not valid UTF-8
// are replaced by U+FFFD so the output is always valid JSON.
void append_string(std::string& out, std::string_view text);

// Appends `text` as a JSON string, cut to `max_bytes` with "…" when longer (for quoting
// offending values in error messages without copying a 10 MB string into one).
void append_quoted_excerpt(std::string& out, std::string_view text, size_t max_bytes = 64);

// True when `text` is valid UTF-8 (used to choose `body` vs `body_base64` in captures).
bool is_valid_utf8(std::string_view text);

// Builds one JSON object: {"k":v,...}. Keys are trusted literals (not escaped).
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_.push_back('{'); }
  ObjectWriter& string(std::string_view key, std::string_view value);
  ObjectWriter& optional_string(std::string_view key, std::optional<std::string_view> value);
  ObjectWriter& integer(std::string_view key, int64_t value);
  ObjectWriter& number(std::string_view key, double value);
  ObjectWriter& boolean(std::string_view key, bool value);
  ObjectWriter& null(std::string_view key);
  // `json` must already be valid JSON text (an object, array, number...).
  ObjectWriter& raw(std::string_view key, std::string_view json);
  void close() { out_.push_back('}'); }

 private:
  void key(std::string_view key);
  std::string& out_;
  bool first_ = true;
};

// Formats a double the shortest way that reads back to the same value (std::to_chars'
// choice of digits and notation), its exponent without leading zeros: "1e-7", "1e+21",
// "0.5", "72"; NaN and infinities as null.
void append_number(std::string& out, double value);

}  // namespace hh::json
