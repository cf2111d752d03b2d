#include "events/source_fields.h"

#include <string>

namespace hh::events {

bool read_source(JsonReader& json, od::value v, size_t depth, const JsonPath& parent, std::string_view name,
                 SourceFields& out) {
  od::json_type type{};
  if (auto code = v.type().get(type)) return json.fail(code, parent, name);
  if (type == od::json_type::string || type == od::json_type::null) {
    if (!json.text(v, out.slug)) return json.fail(parent, name);
    return true;
  }
  const std::string here = parent.render(name);
  return json.members(v, depth, JsonPath{here}, [&](std::string_view key, od::value value) {
    if (key == "provider") return json.text(value, out.provider);
    if (key == "type") return json.text(value, out.type);
    if (key == "slug") return json.text(value, out.slug);
    if (key == "app_id") return json.text(value, out.app_id);
    return json.skip(value, depth + 1);
  });
}

bool read_provider_slug(JsonReader& json, od::value v, size_t depth, const JsonPath& parent,
                        std::string_view name, std::optional<std::string_view>& out) {
  od::json_type type{};
  if (auto code = v.type().get(type)) return json.fail(code, parent, name);
  if (type != od::json_type::object) {
    if (!json.text(v, out)) return json.fail(parent, name);
    return true;
  }
  SourceFields fields;
  if (!read_source(json, v, depth, parent, name, fields)) return false;
  // An object here is the old ClientFacingProvider {name, slug, logo}; a `provider`
  // member would be the new source form.
  out = fields.provider ? fields.provider : fields.slug;
  return true;
}

}  // namespace hh::events
