#include "store/row_writer.h"

#include <charconv>

#include "common/json_minify.h"
#include "common/json_writer.h"
#include "common/timestamp.h"

namespace hh::store {

void append_csv_field(std::string& out, std::string_view text) {
  if (text.empty()) {
    out.append("\"\"");  // empty string, not NULL
    return;
  }
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    out.append(text);
    return;
  }
  out.push_back('"');
  for (const char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

void RowWriter::begin() {
  first_ = true;
  if (mode_ == Mode::json) out_.push_back('{');
}

void RowWriter::end() {
  if (mode_ == Mode::json) {
    out_.push_back('}');
  } else {
    out_.append("\r\n");
  }
}

bool RowWriter::field(std::string_view name) {
  if (!first_) out_.push_back(',');
  first_ = false;
  switch (mode_) {
    case Mode::json:
      out_.push_back('"');
      out_.append(name);  // names are our literals: nothing to escape
      out_.append("\":");
      return true;
    case Mode::csv: return true;
    case Mode::csv_header: out_.append(name); return false;
  }
  return false;
}

RowWriter& RowWriter::text(std::string_view name, std::string_view value) {
  if (!field(name)) return *this;
  if (mode_ == Mode::json) {
    json::append_string(out_, value);
  } else {
    append_csv_field(out_, value);
  }
  return *this;
}

RowWriter& RowWriter::text(std::string_view name, std::optional<std::string_view> value) {
  return value ? text(name, *value) : null(name);
}

RowWriter& RowWriter::integer(std::string_view name, int64_t value) {
  if (!field(name)) return *this;
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out_.append(buffer, end);
  return *this;
}

RowWriter& RowWriter::integer(std::string_view name, std::optional<int64_t> value) {
  return value ? integer(name, *value) : null(name);
}

RowWriter& RowWriter::real(std::string_view name, std::optional<double> value) {
  if (!value) return null(name);
  if (!field(name)) return *this;
  json::append_number(out_, *value);  // shortest form that reads back the same; NaN → null
  return *this;
}

RowWriter& RowWriter::time_ms(std::string_view name, std::optional<int64_t> utc_ms) {
  if (!utc_ms) return null(name);
  if (!field(name)) return *this;
  if (mode_ == Mode::json) out_.push_back('"');
  append_rfc3339_ms(out_, *utc_ms);  // no character that needs quoting in either format
  if (mode_ == Mode::json) out_.push_back('"');
  return *this;
}

RowWriter& RowWriter::json(std::string_view name, std::optional<std::string_view> json_text) {
  if (!json_text) return null(name);
  if (!field(name)) return *this;
  if (mode_ == Mode::json) {
    json::append_minified(out_, *json_text);
  } else {
    thread_local std::string minified;  // reused: one field at a time per thread
    minified.clear();
    json::append_minified(minified, *json_text);
    append_csv_field(out_, minified);
  }
  return *this;
}

RowWriter& RowWriter::boolean(std::string_view name, std::optional<bool> value) {
  if (!value) return null(name);
  if (!field(name)) return *this;
  out_.append(*value ? "true" : "false");
  return *this;
}

RowWriter& RowWriter::null(std::string_view name) {
  if (!field(name)) return *this;
  if (mode_ == Mode::json) out_.append("null");
  return *this;
}

}  // namespace hh::store
