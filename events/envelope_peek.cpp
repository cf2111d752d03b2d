#include "events/envelope_peek.h"

#include <simdjson.h>

namespace hh::events {
namespace {

// Identifiers only: longer values are not ids (and are not copied).
constexpr size_t kMaxPeekedBytes = 200;

}  // namespace

EnvelopePeek peek_envelope(std::string_view body, bool with_team) {
  EnvelopePeek peek;
  // Reused per thread (style.md: one parser per thread). The body is copied into a padded
  // buffer because the HTTP body string has no simdjson padding (simdjson 3.0.1 does not pad).
  thread_local simdjson::ondemand::parser parser;
  thread_local std::string padded;
  padded.assign(body);
  padded.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  simdjson::ondemand::document doc;
  if (parser.iterate(padded.data(), padded.size(), padded.capacity()).get(doc)) return peek;
  simdjson::ondemand::object object;
  if (doc.get_object().get(object)) return peek;
  // Fields in order; the first of each key decides. Stops once what was asked for is seen
  // (event_type is usually first).
  bool event_type_seen = false, team_seen = !with_team;
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return peek;
    std::optional<std::string>* target = nullptr;
    if (key == "event_type" && !event_type_seen) {
      event_type_seen = true;
      target = &peek.event_type;
    } else if (key == "team_id" && !team_seen) {
      team_seen = true;
      target = &peek.team_id;
    } else {
      continue;
    }
    std::string_view value;
    if (field.value().get_string().get(value)) return peek;
    // A value holding U+0000 is not kept: PostgreSQL's text cannot hold it, and the
    // parser refuses such a delivery on both backends (delivery_parser.cpp).
    if (!value.empty() && value.size() <= kMaxPeekedBytes && value.find('\0') == std::string_view::npos) {
      *target = std::string(value);
    }
    if (event_type_seen && team_seen) return peek;
  }
  return peek;
}

}  // namespace hh::events
