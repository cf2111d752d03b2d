#include "rows/delivery_user.h"

#include <simdjson.h>

#include <string>

namespace hh::rows {
namespace {

// Whether the JSON object `text` has "user_id": `user_id` at its top level, or (when
// `look_in_data`) inside its "data" object.
bool object_names_user(std::string_view text, std::string_view user_id, bool look_in_data) {
  // Reused per thread (style.md: one parser per thread); simdjson 3.0.1 does not pad.
  thread_local simdjson::ondemand::parser user_parser;
  thread_local std::string padded_text;
  padded_text.assign(text);
  padded_text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  simdjson::ondemand::document doc;
  if (user_parser.iterate(padded_text.data(), padded_text.size(), padded_text.capacity()).get(doc)) return false;
  simdjson::ondemand::object object;
  if (doc.get_object().get(object)) return false;
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "user_id") {
      std::string_view value;
      if (!field.value().get_string().get(value) && value == user_id) return true;
    } else if (look_in_data && key == "data") {
      simdjson::ondemand::object data;
      if (field.value().get_object().get(data)) continue;  // a fetched list or a malformed body
      for (auto inner : data) {
        std::string_view inner_key;
        if (inner.unescaped_key().get(inner_key)) return false;
        if (inner_key != "user_id") continue;
        std::string_view value;
        if (!inner.value().get_string().get(value) && value == user_id) return true;
      }
    }
  }
  return false;
}

}  // namespace

bool delivery_names_user(std::string_view origin, std::string_view headers_json, std::string_view body,
                         std::string_view user_id) {
  if (user_id.empty()) return false;
  if (origin == "fetch") return object_names_user(headers_json, user_id, false);
  return object_names_user(body, user_id, true);
}

}  // namespace hh::rows
