// Pages the follow-up fetcher stored as inbox rows (spec §5, reference notes §3.1):
//   GET /v2/summary/{resource}/{user_id}            {"<resource>": [summary, …]}, but
//                                                    {"meals": [summary, …]} for meal
//   GET /v2/summary/profile/{user_id}               one profile object (no list)
//   GET /v2/summary/workouts/{user_id} (for streams) {"workouts": [workout, …]}
//   GET /v2/timeseries/{user_id}/{resource}/grouped  {"groups": {"<provider>": [{"source": {…},
//                                                     "data": [sample, …]}, …]}, "next_cursor": …}
//   GET /v2/providers                               [{"slug", "name", "logo", …}, …]
// Summaries go through the same reader as webhook summaries; grouped samples through the
// same sample reader, so a fetched row and a webhook row for the same thing are equal.
#include <string>

#include "events/family_parsers.h"
#include "events/source_fields.h"

namespace hh::events {

namespace {

// A page is for one user and provider; summaries that lack them inherit the request's.
void inherit_context(SummaryRow& row, const FetchContext& context) {
  if (!row.user_id && !context.user_id.empty()) row.user_id = context.user_id;
  if (!row.provider && !context.provider.empty()) row.provider = context.provider;
}

}  // namespace

bool parse_summaries_page(JsonReader& json, od::object root, std::string_view resource, std::string_view items_key,
                          bool collect_ids, const FetchContext& context, std::vector<SampleRow>& spare_samples,
                          DeliveryRows& out) {
  if (items_key.empty()) items_key = resource;
  bool found = false;
  for (auto field : root) {
    std::string_view key;
    if (!json.key(field, key)) return json.fail(JsonPath{}, "body");
    od::value value;
    if (auto code = field.value().get(value)) return json.fail(code, JsonPath{}, key);
    if (key != items_key || found) {
      if (!json.skip(value, 2)) return json.fail(JsonPath{}, key);
      continue;
    }
    found = true;
    od::array items;
    if (!json.array(value, 2, items)) return json.fail(JsonPath{}, key);
    ResourceDataRequest request;
    request.resource = resource;
    request.summary_only = true;
    request.path.base = items_key;
    size_t index = 0;
    for (auto element : items) {
      request.path.index = index;
      od::value item;
      if (auto code = element.get(item)) return json.fail(code, request.path, {});
      if (!parse_resource_data(json, item, 3, request, spare_samples, out)) return false;
      SummaryRow& row = out.summaries.back();
      inherit_context(row, context);
      if (collect_ids) out.workout_ids_to_fetch.push_back(row.id);
      ++index;
    }
  }
  if (!found) return json.fail(JsonPath{}, items_key, "missing (the page has no array for its resource)");
  out.family = Family::fetched_summaries;
  return true;
}

bool parse_summary_object(JsonReader& json, od::value root, const FetchContext& context,
                          std::vector<SampleRow>& spare_samples, DeliveryRows& out) {
  ResourceDataRequest request;
  request.resource = context.resource;
  request.summary_only = true;
  request.path.base = "body";
  if (!parse_resource_data(json, root, 1, request, spare_samples, out)) return false;
  inherit_context(out.summaries.back(), context);
  out.family = Family::fetched_summaries;
  return true;
}

bool parse_providers_page(JsonReader& json, od::array root, DeliveryRows& out) {
  size_t index = 0;
  for (auto element : root) {
    const JsonPath path{"providers", index};
    od::value item;
    if (auto code = element.get(item)) return json.fail(code, path, {});
    ProviderRow& row = out.providers.emplace_back();
    std::optional<std::string_view> slug;
    const bool read = json.members(item, 2, path, [&](std::string_view key, od::value value) {
      if (key == "slug") return json.text(value, slug);
      if (key == "name") return json.text(value, row.name);
      if (key == "description") return json.text(value, row.description);
      if (key == "logo") return json.text(value, row.logo);
      if (key == "auth_type") return json.text(value, row.auth_type);
      if (key == "supported_resources") {
        std::string_view raw;
        if (!json.raw(value, 3, raw)) return false;
        if (raw != "null") row.supported_resources_json = raw;
        return true;
      }
      return json.skip(value, 3);
    }, &row.data_json);
    if (!read) return false;
    if (!slug || slug->empty()) return json.fail(path, "slug", "missing");
    row.slug = *slug;
    ++index;
  }
  out.family = Family::fetched_providers;
  return true;
}

namespace {

// One {"source": {…}, "data": [sample, …]} of provider `group_key`.
bool parse_group(JsonReader& json, od::value v, const std::string& where, std::string_view group_key,
                 const FetchContext& context, std::vector<SampleRow>& spare_samples, DeliveryRows& out) {
  SourceFields source;
  std::vector<SampleRow> samples;
  samples.swap(spare_samples);
  samples.clear();
  std::string array_path;
  const JsonPath path{where};
  const bool read = json.members(v, 4, path, [&](std::string_view key, od::value value) {
    if (key == "source") return read_source(json, value, 5, path, key, source);
    if (key == "data") {
      od::array array;
      if (!json.array(value, 5, array)) return false;
      array_path = path.render("data");
      return parse_samples(json, array, 5, array_path, samples);
    }
    return json.skip(value, 5);
  });
  if (!read) return false;
  if (samples.empty()) {
    samples.swap(spare_samples);  // a group without samples adds no batch
    return true;
  }
  SampleBatch& batch = out.sample_batches.emplace_back();
  batch.user_id = context.user_id;
  batch.resource = context.resource;
  // The group key is the provider; source.provider, when given, is more precise.
  batch.provider = source.provider && !source.provider->empty() ? *source.provider : group_key;
  batch.source_type = source.resolved_type();
  batch.app_id = source.resolved_app_id();
  batch.samples = std::move(samples);
  return true;
}

}  // namespace

bool parse_timeseries_page(JsonReader& json, od::object root, const FetchContext& context,
                           std::vector<SampleRow>& spare_samples, DeliveryRows& out) {
  bool found = false;
  for (auto field : root) {
    std::string_view key;
    if (!json.key(field, key)) return json.fail(JsonPath{}, "body");
    od::value value;
    if (auto code = field.value().get(value)) return json.fail(code, JsonPath{}, key);
    if (key != "groups" || found) {
      if (!json.skip(value, 2)) return json.fail(JsonPath{}, key);  // next_cursor, …
      continue;
    }
    found = true;
    const bool read = json.members(value, 2, JsonPath{"groups"}, [&](std::string_view provider, od::value list) {
      od::array groups;
      if (!json.array(list, 3, groups)) return false;
      std::string where;
      size_t index = 0;
      for (auto element : groups) {
        where = JsonPath{"groups", std::nullopt}.render(provider);
        where = JsonPath{where, index}.render();
        od::value group;
        if (auto code = element.get(group)) return json.fail(code, JsonPath{where}, {});
        if (!parse_group(json, group, where, provider, context, spare_samples, out)) return false;
        ++index;
      }
      return true;
    });
    if (!read) return false;
  }
  if (!found) return json.fail(JsonPath{}, "groups", "missing");
  out.family = Family::fetched_timeseries;
  return true;
}

}  // namespace hh::events
