#include "events/envelope_peek.h"

#include <simdjson.h>

namespace hh::events {

std::optional<std::string> peek_event_type(std::string_view body) {
  // Reused per thread (style.md: one parser per thread). The body is copied into a padded
  // buffer because the HTTP body string has no simdjson padding (simdjson 3.0.1 does not pad).
  thread_local simdjson::ondemand::parser parser;
  thread_local std::string padded;
  padded.assign(body);
  padded.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  simdjson::ondemand::document doc;
  if (parser.iterate(padded.data(), padded.size(), padded.capacity()).get(doc)) return std::nullopt;
  simdjson::ondemand::object object;
  if (doc.get_object().get(object)) return std::nullopt;
  // Fields in order; stop at the first "event_type" (usually the first key).
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return std::nullopt;
    if (key != "event_type") continue;
    std::string_view value;
    if (field.value().get_string().get(value)) return std::nullopt;
    if (value.empty() || value.size() > 200) return std::nullopt;
    return std::string(value);
  }
  return std::nullopt;
}

}  // namespace hh::events
