#pragma once
// Writes one row of query output as a JSON object or a CSV record: the one place where
// output rows get their field names, their null convention and their quoting. The field
// list of each row type is written once (row_format.h), and the same code produces the
// CSV header, the CSV record and the JSON object, so the formats cannot drift apart.
//
// JSON: {"name":value,...}; text as JSON strings (invalid UTF-8 replaced by U+FFFD),
// numbers as numbers, booleans as true/false, times as RFC 3339 strings, stored JSON
// embedded minified (common/json_minify.h: a pretty-printed body stays on one line,
// strings and numbers byte for byte), null as null.
//
// CSV (RFC 4180): fields separated by ',', records end with CRLF (RFC 4180 §2.1). A field
// is quoted when it contains ',', '"', CR or LF, with '"' doubled. NULL is an empty field
// and an empty string is `""`, so the two stay distinguishable (as in PostgreSQL's CSV).
// Stored JSON is written as its minified text; booleans as true/false.
//
// The writer appends to a caller-owned string; nothing is flushed here.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hh::store {

enum class OutputFormat { csv, jsonl };

class RowWriter {
 public:
  enum class Mode { json, csv, csv_header };
  RowWriter(std::string& out, Mode mode) : out_(out), mode_(mode) {}

  // Starts / ends one row. A JSON row ends with '}', a CSV row (or header) with CRLF.
  void begin();
  void end();

  RowWriter& text(std::string_view name, std::string_view value);
  RowWriter& text(std::string_view name, std::optional<std::string_view> value);
  RowWriter& integer(std::string_view name, int64_t value);
  RowWriter& integer(std::string_view name, std::optional<int64_t> value);
  RowWriter& real(std::string_view name, std::optional<double> value);
  RowWriter& boolean(std::string_view name, std::optional<bool> value);
  // UTC milliseconds as RFC 3339 with "Z" and millisecond precision.
  RowWriter& time_ms(std::string_view name, std::optional<int64_t> utc_ms);
  // Stored JSON text (an object, array, number…), minified.
  RowWriter& json(std::string_view name, std::optional<std::string_view> json_text);
  RowWriter& null(std::string_view name);

 private:
  // Writes the separator and, in JSON mode, the key; false in header mode (the name was written).
  bool field(std::string_view name);

  std::string& out_;
  Mode mode_;
  bool first_ = true;
};

// Appends `text` as one CSV field (quoted only when needed).
void append_csv_field(std::string& out, std::string_view text);

}  // namespace hh::store
