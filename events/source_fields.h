#pragma once
// Where a summary or a sample batch came from (spec §3, reference notes §2.2, §5):
// provider from source.provider, else the deprecated source.slug, else the flat
// `source_provider` (sleep_cycle, menstrual_cycle, electrocardiogram); source type from
// source.type, else the flat `source_type`, else "unknown"; the optional App ID from
// source.app_id, else the flat `source_app_id`. Both the new source form
// ({provider, type, app_id, …}) and the old one ({name, slug, logo}) are read.
#include <optional>
#include <string_view>

#include "events/json_reader.h"

namespace hh::events {

struct SourceFields {
  std::optional<std::string_view> provider;       // source.provider
  std::optional<std::string_view> slug;           // source.slug (deprecated until 14 Sep 2026)
  std::optional<std::string_view> type;           // source.type
  std::optional<std::string_view> flat_provider;  // source_provider
  std::optional<std::string_view> flat_type;      // source_type
  std::optional<std::string_view> app_id;         // source.app_id (optional; null for most sources)
  std::optional<std::string_view> flat_app_id;    // source_app_id (meal, sleep_cycle, …)

  std::optional<std::string_view> resolved_provider() const {
    if (provider && !provider->empty()) return provider;
    if (slug && !slug->empty()) return slug;
    if (flat_provider && !flat_provider->empty()) return flat_provider;
    return std::nullopt;
  }
  std::optional<std::string_view> resolved_app_id() const {
    if (app_id && !app_id->empty()) return app_id;
    if (flat_app_id && !flat_app_id->empty()) return flat_app_id;
    return std::nullopt;
  }
  std::string_view resolved_type() const {
    if (type && !type->empty()) return *type;
    if (flat_type && !flat_type->empty()) return *flat_type;
    return "unknown";
  }
};

// Reads the member `name` of the object at `parent`, at `depth`: an object (new or old
// form), a bare string (a very old slug), or null. Other members (name, logo, device_id,
// sport, workout_id) are validated and left in the stored JSON. On failure
// the parse error is set ("data.source.type: expected a string, got an object").
bool read_source(JsonReader& json, od::value v, size_t depth, const JsonPath& parent, std::string_view name,
                 SourceFields& out);

// Reads a provider given as a slug string or as an object with `slug` (or `provider`),
// as in provider.connection.* (`provider`, legacy `source`). Null gives nullopt.
bool read_provider_slug(JsonReader& json, od::value v, size_t depth, const JsonPath& parent,
                        std::string_view name, std::optional<std::string_view>& out);

}  // namespace hh::events
