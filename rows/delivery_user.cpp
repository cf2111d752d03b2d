#include "rows/delivery_user.h"

#include <simdjson.h>

#include <optional>
#include <string>

#include "common/json_scan.h"
#include "common/json_writer.h"

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

// The user ids of a body that is almost a JSON object (bytes that are not UTF-8, something
// after the object's closing brace: a signed delivery the parser marks invalid), read with
// the scanner that checks no UTF-8 (common/json_scan.h) over the first value only: its
// $.user_id and $.data.user_id, each when it is a string of valid UTF-8 (an id that is
// not names nobody). purge-user must find such a delivery while its body is kept (spec §11).
struct LenientUserIds {
  std::optional<std::string> top, in_data;
};

std::optional<std::string> lenient_user_id(std::string_view object) {
  const auto member = json::top_level_member(object, "user_id");
  if (!member) return std::nullopt;
  auto decoded = json::decode_string(*member);
  if (!decoded || !json::is_valid_utf8(*decoded)) return std::nullopt;
  return decoded;
}

// Calls `found(id)` for each `"user_id": "<string>"` anywhere in a text that is no JSON
// object (cut short, an array of deliveries, a document broken before its end), in order,
// until it returns true; returns whether it did. Ids whose string ends before the text
// does, in valid UTF-8.
template <typename Found>
bool each_user_id_member(std::string_view text, Found&& found) {
  constexpr std::string_view kKey = "\"user_id\"";
  for (size_t at = text.find(kKey); at != std::string_view::npos; at = text.find(kKey, at + 1)) {
    json::Scanner scanner(text.substr(at + kKey.size()));
    scanner.skip_space();
    if (!scanner.skip(':')) continue;
    scanner.skip_space();
    const size_t begin = scanner.offset();
    if (scanner.peek() != '"' || !scanner.string()) continue;
    auto decoded = json::decode_string(text.substr(at + kKey.size() + begin, scanner.offset() - begin));
    if (decoded && !decoded->empty() && json::is_valid_utf8(*decoded) && found(*decoded)) return true;
  }
  return false;
}

std::optional<std::string> first_user_id_member(std::string_view text) {
  std::optional<std::string> first;
  each_user_id_member(text, [&](const std::string& id) {
    first = id;
    return true;
  });
  return first;
}

// Whether `text` is a JSON object, as the strict and the lenient reads take it.
bool reads_as_object(std::string_view text) {
  json::Scanner scanner(text);
  scanner.skip_space();
  return scanner.peek() == '{' && scanner.value(json::kSimdjsonMaxDepth);
}

LenientUserIds lenient_user_ids(std::string_view text) {
  json::Scanner scanner(text);
  scanner.skip_space();
  const size_t begin = scanner.offset();
  if (scanner.peek() != '{' || !scanner.value(json::kSimdjsonMaxDepth)) return {first_user_id_member(text), {}};
  const std::string_view object = text.substr(begin, scanner.offset() - begin);
  LenientUserIds ids{lenient_user_id(object), std::nullopt};
  if (const auto data = json::top_level_member(object, "data"); data && json::first_byte(*data) == '{') {
    ids.in_data = lenient_user_id(*data);
  }
  return ids;
}

// Calls `found(user, inside_data)` for each string "user_id" of the JSON object `text`: the one at its
// top level, then (when `look_in_data`) the one inside its "data" object, in the order they
// come; stops when `found` returns true. Returns whether it did. A text that is not JSON is
// read as lenient_user_ids() reads it.
template <typename Found>
bool object_user_ids(std::string_view text, bool look_in_data, Found&& found) {
  simdjson::ondemand::document doc;
  simdjson::ondemand::object object;
  if (!parse_object(text, doc, object)) {
    const LenientUserIds ids = lenient_user_ids(text);
    if (ids.top && found(*ids.top, false)) return true;
    return look_in_data && ids.in_data && found(*ids.in_data, true);
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
  if (object_names_user(body, user_id, true)) return true;
  // A body that is no object (an array of two users' deliveries, an envelope cut short
  // after its data's user_id) is every user it names anywhere, not only its first.
  return !reads_as_object(body) && each_user_id_member(body, [&](const std::string& id) { return id == user_id; });
}

}  // namespace hh::rows
