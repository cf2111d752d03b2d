#pragma once
// Typed, validating reads of simdjson On-Demand values, with errors as values.
//
// On-Demand validates lazily: a value that is skipped is never checked, so a stored
// `raw_json()` of an object whose fields were not read may hold `tru`, `1e400` or a bad
// escape. Every value the parsers keep, and every value they skip, goes through this
// class, which reads it completely (numbers parsed, strings unescaped, literals checked,
// nesting and string length capped) before handing out its text. With that, a body
// that parses is valid JSON throughout, and stored JSON text can be trusted.
//
// Every read returns false on a problem; problem() says what ("expected a string, got an
// object") and fail(path, field) turns it into the parse error "path.field: problem".
// Views handed out point into the padded body or the parser's string buffer: valid until
// the parser iterates the next document.
#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "common/json_writer.h"
#include "events/parse_limits.h"

namespace hh::events {

namespace od = simdjson::ondemand;

// A place in the document for error messages, rendered only when something fails:
// {"data.data", 3}.render("timestamp") == "data.data[3].timestamp".
struct JsonPath {
  JsonPath() = default;
  explicit JsonPath(std::string_view base_text, std::optional<size_t> at = std::nullopt)
      : base(base_text), index(at) {}

  std::string_view base;
  std::optional<size_t> index;
  std::string render(std::string_view field = {}) const;
};

// Drops trailing JSON whitespace (simdjson's raw tokens run up to the next structural
// character, so `1 ,` yields "1 ").
std::string_view trim_json_space(std::string_view text);

using json::append_quoted_excerpt;  // common/json_writer.h

class JsonReader {
 public:
  explicit JsonReader(const ParseLimits& limits) : limits_(limits) {}

  const ParseLimits& limits() const { return limits_; }

  // Containers. `depth` is the nesting level of `v` itself (document root = 1).
  bool object(od::value v, size_t depth, od::object& out);
  bool array(od::value v, size_t depth, od::array& out);

  // A string, null (nullopt), or another scalar kept as its JSON text (ids sent as
  // numbers, enum values sent as booleans). Objects and arrays are a problem.
  bool text(od::value v, std::optional<std::string_view>& out);
  // An id: a string, or a number kept as its JSON text (123 and "123" name one row), or
  // null (nullopt). A boolean, object or array is a problem ("must be a string or a
  // number, got a boolean"): `"id":true` named a summary "true".
  bool id(od::value v, std::optional<std::string_view>& out);
  // A string; null and non-strings are a problem.
  bool string(od::value v, std::string_view& out);
  // An integer (a float with an integral value is accepted), or null.
  bool int64(od::value v, std::optional<int64_t>& out);
  // Any number, or null.
  bool number(od::value v, std::optional<double>& out);
  // `v`, known to be a number, as sent: an int64 or a double. An integer past int64 is a
  // problem (schemas/README.md: such a delivery is invalid, never stored altered).
  struct Number {
    bool is_integer = false;
    int64_t integer = 0;
    double real = 0;
  };
  bool number_value(od::value v, Number& out);
  // int64() and number()'s first step: a null (`null` set), a number (in `out`), or false
  // with the problem (`expected` names what was wanted instead of another type).
  bool null_or_number(od::value v, std::string_view expected, bool& null, Number& out);
  // true/false, or null.
  bool boolean(od::value v, std::optional<bool>& out);

  // Validates `v` completely and returns its exact JSON text (trailing space trimmed).
  bool raw(od::value v, size_t depth, std::string_view& out);
  // Validates `v` completely and drops it (unknown fields: skipped but checked).
  bool skip(od::value v, size_t depth);

  // A member name, unescaped; names longer than max_string_bytes are a problem too.
  // Names without escapes (all real ones) are viewed in the input where they stand:
  // stage 1 has validated the document's UTF-8 and found the closing quote, so the
  // bytes up to the next '"' are the name, and nothing is copied.
  template <typename Field>
  bool key(Field& field, std::string_view& out) {
    od::raw_json_string raw;
    if (auto code = field.key().get(raw)) return json_problem(code);
    const char* start = reinterpret_cast<const char*>(raw.raw());
    const void* quote = std::memchr(start, '"', limits_.max_string_bytes + 1);
    if (quote != nullptr) {
      const std::string_view text(start, static_cast<size_t>(static_cast<const char*>(quote) - start));
      if (text.find('\\') == std::string_view::npos) {
        out = text;
        return true;
      }
    }
    if (auto code = field.unescaped_key().get(out)) return json_problem(code);
    if (out.size() > limits_.max_string_bytes) return problem_is("member name longer than the string limit");
    return true;
  }

  // Iterates the object `v` at `depth`, calling read(key, value) once per member, in
  // order. `read` returns false with problem() set, and the error becomes "path.key:
  // problem" (or, when `read` already set the error itself, stays as it is). With
  // `raw_out`, the object's exact text is returned after the complete iteration.
  template <typename Read>
  bool members(od::value v, size_t depth, const JsonPath& path, Read&& read, std::string_view* raw_out = nullptr);

  // Why the last read returned false.
  const std::string& problem() const { return problem_; }
  // Sets the problem; returns false, for `return json.problem_is("...")`.
  bool problem_is(std::string_view what);
  bool json_problem(simdjson::error_code code);

  // The parse error: "where: problem". Returns false, for `return json.fail(path, "id")`.
  bool fail(const JsonPath& path, std::string_view field);
  bool fail(const JsonPath& path, std::string_view field, std::string_view what);
  bool fail(simdjson::error_code code, const JsonPath& path, std::string_view field);
  const std::string& error() const { return error_; }
  void set_error(std::string error) { error_ = std::move(error); }
  void clear() {
    problem_.clear();
    error_.clear();
  }

 private:
  bool validate(od::value v, size_t depth, std::string_view* raw_out);
  bool type_of(od::value v, od::json_type& type);
  // The string unescaped into `out`; a problem when longer than max_string_bytes.
  bool decoded_string(od::value v, std::string_view& out);
  bool wrong_type(std::string_view expected, od::json_type got);

  const ParseLimits& limits_;
  std::string problem_;
  std::string error_;
};

std::string_view json_type_name(od::json_type type);

template <typename Read>
bool JsonReader::members(od::value v, size_t depth, const JsonPath& path, Read&& read, std::string_view* raw_out) {
  od::object object;
  if (!this->object(v, depth, object)) return fail(path, {});
  for (auto field : object) {
    std::string_view key;
    if (!this->key(field, key)) return fail(path, {});
    od::value value;
    if (auto code = field.value().get(value)) return fail(code, path, key);
    if (!read(key, value)) return error_.empty() ? fail(path, key) : false;
  }
  if (raw_out) {
    std::string_view raw;
    if (auto code = object.raw_json().get(raw)) return fail(code, path, {});
    *raw_out = trim_json_space(raw);
  }
  return true;
}

}  // namespace hh::events
