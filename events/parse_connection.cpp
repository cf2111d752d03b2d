// provider.connection.created / .error (reference notes §2.6):
//   created: {user_id, provider: {name, slug, logo} | "<slug>", source: (deprecated duplicate
//             of provider), external_user_id, resource_availability: {…}}
//   error:   {user_id, provider: "<slug>", message, error_type, error_details}
// Old created events carry only `source`, so the provider falls back to it.
#include "events/family_parsers.h"
#include "events/source_fields.h"

namespace hh::events {

bool parse_connection(JsonReader& json, od::value v, size_t depth, bool is_error, std::string_view event_type,
                      DeliveryRows& out) {
  const JsonPath path{"data"};
  const size_t child_depth = depth + 1;
  ConnectionRow& row = out.connection.emplace();
  std::optional<std::string_view> user_id, provider, legacy_source;
  const bool read = json.members(v, depth, path, [&](std::string_view key, od::value value) {
    if (key == "user_id") return json.id(value, user_id);
    if (key == "provider") return read_provider_slug(json, value, child_depth, path, key, provider);
    if (key == "source") return read_provider_slug(json, value, child_depth, path, key, legacy_source);
    if (key == "external_user_id") return json.id(value, row.external_user_id);
    if (key == "error_type") return json.text(value, row.error_type);
    if (key == "message") return json.text(value, row.error_message);
    if (key == "resource_availability") {
      std::string_view raw;
      if (!json.raw(value, child_depth, raw)) return false;
      if (raw != "null") row.resource_availability_json = raw;
      return true;
    }
    return json.skip(value, child_depth);
  }, &row.data_json);
  if (!read) return false;

  if (provider && provider->empty()) provider.reset();
  if (!provider) provider = legacy_source;
  if (!provider || provider->empty()) return json.fail(path, "provider", "missing (neither provider nor source)");
  row.provider = *provider;
  row.user_id = user_id.value_or(std::string_view{});
  row.status = is_error ? "error" : "connected";
  row.event_type = event_type;
  out.family = Family::connection;
  return true;
}

}  // namespace hh::events
