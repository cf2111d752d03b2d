#include "events/json_reader.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "common/json_writer.h"

namespace hh::events {

std::string JsonPath::render(std::string_view field) const {
  std::string out(base);
  if (index) {
    out.push_back('[');
    out.append(std::to_string(*index));
    out.push_back(']');
  }
  if (!field.empty()) {
    if (!out.empty()) out.push_back('.');
    out.append(field);
  }
  return out;
}

std::string_view trim_json_space(std::string_view text) {
  while (!text.empty()) {
    const char c = text.back();
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    text.remove_suffix(1);
  }
  return text;
}

namespace {

// JSON's integer grammar: an optional minus, then 0 or a digit 1-9 and more digits.
bool is_json_integer(std::string_view token) {
  if (!token.empty() && token.front() == '-') token.remove_prefix(1);
  if (token.empty() || (token.front() == '0' && token.size() > 1)) return false;
  for (const char c : token) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::string_view json_type_name(od::json_type type) {
  switch (type) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
  }
  return "an unknown value";
}

bool JsonReader::problem_is(std::string_view what) {
  problem_.assign(what);
  return false;
}

bool JsonReader::json_problem(simdjson::error_code code) {
  switch (code) {
    case simdjson::NUMBER_ERROR:
    case simdjson::NUMBER_OUT_OF_RANGE:
      return problem_is("number out of range or malformed");
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
      return problem_is("not a valid literal");
    case simdjson::STRING_ERROR:
      return problem_is("malformed string (bad escape)");
    default:
      problem_.assign("not valid JSON (");
      problem_.append(simdjson::error_message(code));
      problem_.push_back(')');
      return false;
  }
}

bool JsonReader::wrong_type(std::string_view expected, od::json_type got) {
  problem_.assign("expected ");
  problem_.append(expected);
  problem_.append(", got ");
  problem_.append(json_type_name(got));
  return false;
}

bool JsonReader::fail(const JsonPath& path, std::string_view field) {
  error_ = path.render(field);
  error_.append(": ");
  error_.append(problem_);
  return false;
}

bool JsonReader::fail(const JsonPath& path, std::string_view field, std::string_view what) {
  problem_.assign(what);
  return fail(path, field);
}

bool JsonReader::fail(simdjson::error_code code, const JsonPath& path, std::string_view field) {
  json_problem(code);
  return fail(path, field);
}

bool JsonReader::type_of(od::value v, od::json_type& type) {
  if (auto code = v.type().get(type)) return json_problem(code);
  return true;
}

bool JsonReader::decoded_string(od::value v, std::string_view& out) {
  if (auto code = v.get_string().get(out)) return json_problem(code);
  // The limit is on the text, not on how it was escaped: "\u00e9" is one character of two
  // bytes (the escaped form counted let the same text pass or fail by the sender's
  // escaping). The parser's string buffer holds the whole document, so decoding first
  // costs no unbounded copy.
  if (out.size() > limits_.max_string_bytes) {
    problem_.assign("string longer than ");
    problem_.append(std::to_string(limits_.max_string_bytes));
    problem_.append(" bytes");
    return false;
  }
  return true;
}

bool JsonReader::object(od::value v, size_t depth, od::object& out) {
  od::json_type type{};
  if (!type_of(v, type)) return false;
  if (type != od::json_type::object) return wrong_type("an object", type);
  if (depth > limits_.max_depth) return problem_is("nesting deeper than the limit");
  if (auto code = v.get_object().get(out)) return json_problem(code);
  return true;
}

bool JsonReader::array(od::value v, size_t depth, od::array& out) {
  od::json_type type{};
  if (!type_of(v, type)) return false;
  if (type != od::json_type::array) return wrong_type("an array", type);
  if (depth > limits_.max_depth) return problem_is("nesting deeper than the limit");
  if (auto code = v.get_array().get(out)) return json_problem(code);
  return true;
}

bool JsonReader::text(od::value v, std::optional<std::string_view>& out) {
  od::json_type type{};
  if (!type_of(v, type)) return false;
  switch (type) {
    case od::json_type::string: {
      std::string_view s;
      if (!decoded_string(v, s)) return false;
      out = s;
      return true;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (v.is_null().get(is_null) || !is_null) return problem_is("not a valid literal");
      out.reset();
      return true;
    }
    case od::json_type::number:
    case od::json_type::boolean: {
      // Kept as its JSON text (e.g. a numeric sample_id), after checking it is valid.
      const std::string_view token = trim_json_space(v.raw_json_token());
      if (!validate(v, 1, nullptr)) return false;
      out = token;
      return true;
    }
    default:
      return wrong_type("a string", type);
  }
}

bool JsonReader::id(od::value v, std::optional<std::string_view>& out) {
  od::json_type type{};
  if (!type_of(v, type)) return false;
  if (type == od::json_type::boolean || type == od::json_type::object || type == od::json_type::array) {
    problem_.assign("must be a string or a number, got ");
    problem_.append(json_type_name(type));
    return false;
  }
  return text(v, out);
}

bool JsonReader::string(od::value v, std::string_view& out) {
  od::json_type type{};
  if (!type_of(v, type)) return false;
  if (type != od::json_type::string) return wrong_type("a string", type);
  return decoded_string(v, out);
}

bool JsonReader::int64(od::value v, std::optional<int64_t>& out) {
  Number n;
  bool null = false;
  if (!null_or_number(v, "an integer", null, n)) return false;
  if (null) {
    out.reset();
    return true;
  }
  if (n.is_integer) {
    out = n.integer;
    return true;
  }
  // 3600.0 is an integer sent by a serializer that only knows doubles.
  if (std::trunc(n.real) != n.real) return problem_is("expected an integer, got a fraction");
  // A whole number written with an exponent (1e20) past what 64 bits hold: said as such.
  // [-2^63, 2^63): both bounds are exact doubles.
  if (!(n.real >= -9223372036854775808.0 && n.real < 9223372036854775808.0)) {
    return problem_is("integer out of range (int64)");
  }
  out = static_cast<int64_t>(n.real);
  return true;
}

bool JsonReader::number(od::value v, std::optional<double>& out) {
  Number n;
  bool null = false;
  if (!null_or_number(v, "a number", null, n)) return false;
  if (null) {
    out.reset();
    return true;
  }
  out = n.is_integer ? static_cast<double>(n.integer) : n.real;
  return true;
}

bool JsonReader::null_or_number(od::value v, std::string_view expected, bool& null, Number& out) {
  od::json_type type{};
  if (!type_of(v, type)) return false;
  null = type == od::json_type::null;
  if (null) {
    bool is_null = false;
    if (v.is_null().get(is_null) || !is_null) return problem_is("not a valid literal");
    return true;
  }
  if (type != od::json_type::number) return wrong_type(expected, type);
  return number_value(v, out);
}

bool JsonReader::number_value(od::value v, Number& out) {
  od::number_type type{};
  if (auto code = v.get_number_type().get(type)) return json_problem(code);
  switch (type) {
    case od::number_type::signed_integer:
      out.is_integer = true;
      if (auto code = v.get_int64().get(out.integer)) {
        // simdjson 3.0.1 types an integer below INT64_MIN as signed, then fails it as a
        // wrong type: the same answer as one above INT64_MAX.
        if (is_json_integer(trim_json_space(v.raw_json_token()))) return problem_is("integer out of range (int64)");
        return json_problem(code);
      }
      return true;
    case od::number_type::unsigned_integer:
      return problem_is("integer out of range (int64)");
    case od::number_type::floating_point_number:
      // get_double(), not get_number(): simdjson 3.0.1's get_number() answers 0 for a
      // float of more than 19 significant digits (its slow path writes to a copy).
      out.is_integer = false;
      if (auto code = v.get_double().get(out.real)) return json_problem(code);
      // And simdjson 3.0.1's get_double() is wrong for "0." and 21 or more digits
      // (0.100000000000000000000 gave 0.0077…): a long token is read again, correctly
      // rounded, by the standard library. simdjson has checked its grammar.
      if (const std::string_view token = trim_json_space(v.raw_json_token()); token.size() > 17) {
        double exact = 0;
        const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), exact);
        if (ec == std::errc{} && end == token.data() + token.size()) out.real = exact;
      }
      return true;
  }
  return problem_is("expected a number");
}

bool JsonReader::boolean(od::value v, std::optional<bool>& out) {
  od::json_type type{};
  if (!type_of(v, type)) return false;
  if (type == od::json_type::null) {
    bool is_null = false;
    if (v.is_null().get(is_null) || !is_null) return problem_is("not a valid literal");
    out.reset();
    return true;
  }
  if (type != od::json_type::boolean) return wrong_type("a boolean", type);
  bool b = false;
  if (v.get_bool().get(b)) return problem_is("not a valid literal");
  out = b;
  return true;
}

bool JsonReader::raw(od::value v, size_t depth, std::string_view& out) { return validate(v, depth, &out); }

bool JsonReader::skip(od::value v, size_t depth) { return validate(v, depth, nullptr); }

// Reads `v` and everything inside it. Containers are iterated (which is what makes their
// raw_json() trustworthy afterwards: simdjson's raw_json() of an unread container only
// counts brackets); scalars are parsed.
bool JsonReader::validate(od::value v, size_t depth, std::string_view* raw_out) {
  od::json_type type{};
  if (!type_of(v, type)) return false;
  switch (type) {
    case od::json_type::object: {
      od::object object;
      if (!this->object(v, depth, object)) return false;
      for (auto field : object) {
        std::string_view key;
        if (!this->key(field, key)) return false;
        od::value child;
        if (auto code = field.value().get(child)) return json_problem(code);
        if (!validate(child, depth + 1, nullptr)) return false;
      }
      if (raw_out) {
        // After a complete iteration raw_json() spans from '{' to the next token.
        std::string_view raw;
        if (auto code = object.raw_json().get(raw)) return json_problem(code);
        *raw_out = trim_json_space(raw);
      }
      return true;
    }
    case od::json_type::array: {
      od::array array;
      if (!this->array(v, depth, array)) return false;
      for (auto element : array) {
        od::value child;
        if (auto code = element.get(child)) return json_problem(code);
        if (!validate(child, depth + 1, nullptr)) return false;
      }
      if (raw_out) {
        std::string_view raw;
        if (auto code = array.raw_json().get(raw)) return json_problem(code);
        *raw_out = trim_json_space(raw);
      }
      return true;
    }
    case od::json_type::string: {
      std::string_view s;
      if (!decoded_string(v, s)) return false;
      break;
    }
    case od::json_type::number: {
      od::number n;
      // An integer past 64 bits is valid JSON that simdjson 3.0.1 cannot hold: a member
      // only kept as JSON keeps it as sent (an id, a counter); members read as numbers are
      // checked where they are read. A float out of a double's range stays refused.
      if (auto code = v.get_number().get(n); code && !is_json_integer(trim_json_space(v.raw_json_token()))) {
        return json_problem(code);
      }
      break;
    }
    case od::json_type::boolean: {
      bool b = false;
      if (v.get_bool().get(b)) return problem_is("not a valid literal");  // "tru", "falsey"
      break;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (v.is_null().get(is_null) || !is_null) return problem_is("not a valid literal");
      break;
    }
  }
  if (raw_out) *raw_out = trim_json_space(v.raw_json_token());
  return true;
}

}  // namespace hh::events
