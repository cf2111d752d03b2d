// provider.device.created|updated (reference notes §2.6): {id, user_id, provider,
// source_type, app_id, device_manufacturer, device_model, device_version, device_id}.
#include "events/family_parsers.h"
#include "events/source_fields.h"

namespace hh::events {

bool parse_device(JsonReader& json, od::value v, size_t depth, DeliveryRows& out) {
  const JsonPath path{"data"};
  const size_t child_depth = depth + 1;
  DeviceRow& row = out.device.emplace();
  std::optional<std::string_view> id;
  const bool read = json.members(v, depth, path, [&](std::string_view key, od::value value) {
    if (key == "id") return json.id(value, id);
    if (key == "user_id") return json.id(value, row.user_id);
    if (key == "provider") return read_provider_slug(json, value, child_depth, path, key, row.provider);
    if (key == "source_type") return json.text(value, row.source_type);
    if (key == "app_id") return json.text(value, row.app_id);
    if (key == "device_manufacturer") return json.text(value, row.device_manufacturer);
    if (key == "device_model") return json.text(value, row.device_model);
    if (key == "device_version") return json.text(value, row.device_version);
    if (key == "device_id") return json.id(value, row.device_id);
    return json.skip(value, child_depth);
  }, &row.data_json);
  if (!read) return false;
  if (!id || id->empty()) return json.fail(path, "id", "missing");
  row.id = *id;
  out.family = Family::device;
  return true;
}

}  // namespace hh::events
