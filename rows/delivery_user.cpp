#include "rows/delivery_user.h"

#include <simdjson.h>

#include <string>

namespace hh::rows {
namespace {

// `text` as a JSON object, on this thread's parser and buffer (style.md: one parser per
// thread; simdjson 3.0.1 does not pad). False when it is not one. `object` reads `doc`,
// both valid until the next call on this thread.
bool parse_object(std::string_view text, simdjson::ondemand::document& doc, simdjson::ondemand::object& object) {
  thread_local simdjson::ondemand::parser parser;
  thread_local std::string padded;
  padded.assign(text);
  padded.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  if (parser.iterate(padded.data(), padded.size(), padded.capacity()).get(doc)) return false;
  return !doc.get_object().get(object);
}

// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 when it is not one.
size_t utf8_sequence(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

// `text` made readable as the JSON object it almost is: bytes that are not UTF-8 become
// '?', and whatever follows the object's closing brace is cut. A signed delivery refused
// as invalid for one of these still names its user, and `purge-user` must find it while
// its body is kept (spec §11). Empty when `text` does not start as an object.
std::string lenient_object(std::string_view text) {
  size_t start = 0;
  while (start < text.size() && (text[start] == ' ' || text[start] == '\t' || text[start] == '\n' ||
                                 text[start] == '\r')) {
    ++start;
  }
  if (start == text.size() || text[start] != '{') return {};
  std::string out;
  out.reserve(text.size() - start);
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = start; i < text.size();) {
    const size_t length = utf8_sequence(text.substr(i));
    if (length == 0) {
      out.push_back('?');
      ++i;
      continue;
    }
    const char c = text[i];
    out.append(text.substr(i, length));
    i += length;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      break;
    }
  }
  return out;
}

// Calls `found(user, inside_data)` for each string "user_id" of the JSON object `text`: the one at its
// top level, then (when `look_in_data`) the one inside its "data" object, in the order they
// come; stops when `found` returns true. Returns whether it did. A text that is not JSON is
// read again as lenient_object() makes it.
template <typename Found>
bool object_user_ids(std::string_view text, bool look_in_data, Found&& found, bool lenient = true) {
  simdjson::ondemand::document doc;
  simdjson::ondemand::object object;
  if (!parse_object(text, doc, object)) {
    if (!lenient) return false;
    const std::string readable = lenient_object(text);
    if (readable.empty() || readable == text) return false;
    return object_user_ids(readable, look_in_data, found, false);
  }
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "user_id") {
      std::string_view value;
      if (!field.value().get_string().get(value) && found(value, false)) return true;
    } else if (look_in_data && key == "data") {
      simdjson::ondemand::object data;
      if (field.value().get_object().get(data)) continue;  // a fetched list or a malformed body
      for (auto inner : data) {
        std::string_view inner_key;
        if (inner.unescaped_key().get(inner_key)) return false;
        if (inner_key != "user_id") continue;
        std::string_view value;
        if (!inner.value().get_string().get(value) && found(value, true)) return true;
      }
    }
  }
  return false;
}

bool object_names_user(std::string_view text, std::string_view user_id, bool look_in_data) {
  return object_user_ids(text, look_in_data, [&](std::string_view value, bool) { return value == user_id; });
}

}  // namespace

std::optional<std::string> delivery_user_of(std::string_view origin, std::string_view headers_json,
                                            std::string_view body) {
  std::optional<std::string> top, in_data;
  const auto take = [&](std::string_view value, bool inside_data) {
    if (value.empty()) return false;
    auto& slot = inside_data ? in_data : top;
    if (!slot) slot.emplace(value);
    return !inside_data;  // the envelope's user decides; data's only when there is none
  };
  if (origin == "fetch") {
    object_user_ids(headers_json, false, take);
  } else {
    object_user_ids(body, true, take);
  }
  return top ? top : in_data;
}

// A user_id as the delivery parser reads it (events/json_reader.cpp JsonReader::text): a
// string's text, a number's or a boolean's JSON text; nullopt for null or anything else.
std::optional<std::string> user_value(simdjson::ondemand::value value) {
  simdjson::ondemand::json_type type{};
  if (value.type().get(type)) return std::nullopt;
  switch (type) {
    case simdjson::ondemand::json_type::string: {
      std::string_view text;
      if (value.get_string().get(text)) return std::nullopt;
      return std::string(text);
    }
    case simdjson::ondemand::json_type::number:
    case simdjson::ondemand::json_type::boolean: {
      std::string_view token = value.raw_json_token();
      while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                                token.back() == '\t')) {
        token.remove_suffix(1);
      }
      return std::string(token);
    }
    default: return std::nullopt;
  }
}

std::optional<std::string> rows_user_of(std::string_view origin, std::string_view headers_json,
                                        std::string_view body) {
  if (origin == "fetch") return delivery_user_of(origin, headers_json, body);
  // As delivery_parser.cpp reads an envelope: the last top-level user_id wins (null clears
  // it), only the first "data" member is read, and within it the last user_id wins.
  simdjson::ondemand::document doc;
  simdjson::ondemand::object object;
  if (!parse_object(body, doc, object)) return std::nullopt;
  std::optional<std::string> top, in_data;
  bool saw_data = false;
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return std::nullopt;
    simdjson::ondemand::value value;
    if (field.value().get(value)) return std::nullopt;
    if (key == "user_id") {
      top = user_value(value);
    } else if (key == "data" && !saw_data) {
      saw_data = true;
      simdjson::ondemand::object data;
      if (value.get_object().get(data)) continue;  // a list: the envelope's user
      for (auto inner : data) {
        std::string_view inner_key;
        if (inner.unescaped_key().get(inner_key)) return std::nullopt;
        if (inner_key != "user_id") continue;
        simdjson::ondemand::value inner_value;
        if (inner.value().get(inner_value)) return std::nullopt;
        in_data = user_value(inner_value);
      }
    }
  }
  if (in_data && !in_data->empty()) return in_data;
  if (top && !top->empty()) return top;
  return std::nullopt;
}

bool delivery_names_user(std::string_view origin, std::string_view headers_json, std::string_view body,
                         std::string_view user_id) {
  if (user_id.empty()) return false;
  if (origin == "fetch") return object_names_user(headers_json, user_id, false);
  return object_names_user(body, user_id, true);
}

}  // namespace hh::rows
