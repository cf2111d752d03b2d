// $.data of daily.data.* / historical.data.* events (reference notes §2.3–2.5, §2.7), and
// the items of fetched summary pages. The shape decides the family, so every member is
// read in one pass into `ResourceFields` and the decision is made at the end:
//
//   daily.data.workout_stream.*   {workout_id, user_id, provider_id, sport{slug}, source, message}
//   timeseries                    {data: [sample…], source, user_id, source_id?}  (source_id kept with the series)
//   summary                       {id, user_id, calendar_date, source | source_provider/_type, …}
//   historical backfill notice    {user_id, start_date, end_date, provider, is_final?}
// Anything else is invalid for a resource of the catalog, and `unknown` for a new one
// (known_resources.h).
#include <string>

#include "common/timestamp.h"
#include "events/family_parsers.h"
#include "events/known_resources.h"
#include "events/source_fields.h"
#include "events/summary_times.h"

namespace hh::events {
namespace {

struct ResourceFields {
  std::optional<std::string_view> id, user_id, calendar_date;
  SourceFields source;
  SummaryTimes times;
  SampleBatch* batch = nullptr;  // set when `data` is an array
  SampleValue source_id;
  // historical notice
  std::optional<std::string_view> start_date, end_date, provider;
  std::optional<bool> is_final;
  // workout stream notice
  std::optional<std::string_view> workout_id, provider_id, sport_slug;
};

// sport: {id, name, slug}; `id` is unstable across environments, so only the slug is kept.
bool read_sport_slug(JsonReader& json, od::value v, size_t depth, std::optional<std::string_view>& out) {
  od::json_type type{};
  if (auto code = v.type().get(type)) return json.json_problem(code);
  if (type != od::json_type::object) return json.text(v, out);
  od::object sport;
  if (!json.object(v, depth, sport)) return false;
  for (auto field : sport) {
    std::string_view key;
    if (!json.key(field, key)) return false;
    od::value value;
    if (auto code = field.value().get(value)) return json.json_problem(code);
    if (!(key == "slug" ? json.text(value, out) : json.skip(value, depth + 1))) return false;
  }
  return true;
}

// source_id: an integer in the service's docs; a string or float is kept as sent, and a
// container (never seen) is validated and ignored rather than failing the batch.
bool read_source_id(JsonReader& json, od::value v, size_t depth, SampleValue& out) {
  od::json_type type{};
  if (auto code = v.type().get(type)) return json.json_problem(code);
  if (type == od::json_type::object || type == od::json_type::array) return json.skip(v, depth);
  if (type == od::json_type::number) {
    // An id past int64 (never seen) keeps its nearest double rather than failing the
    // batch it labels (a sample value past int64 does fail it: number_value()).
    od::number_type number_type{};
    if (auto code = v.get_number_type().get(number_type)) return json.json_problem(code);
    if (number_type == od::number_type::unsigned_integer) {
      double nearest = 0;
      if (auto code = v.get_double().get(nearest)) return json.json_problem(code);
      out = nearest;
      return true;
    }
    JsonReader::Number n;
    if (!json.number_value(v, n)) return false;
    if (n.is_integer) out = n.integer;
    else out = n.real;
    return true;
  }
  std::optional<std::string_view> text;
  if (!json.text(v, text)) return false;
  if (text && type == od::json_type::string) out = *text;
  return true;
}

// `end`: a date alone ("2024-01-31", as the service may send it) ends at the next midnight,
// not at the day's first millisecond (the fetch left that day out): the window a notice of
// full times names for the same days (the service's own example ends "2024-11-02T00:00:00")
// and `healthhook backfill --until 2024-01-31` queues, so the three share one job key.
bool read_window_time(JsonReader& json, const JsonPath& path, std::string_view field,
                      std::optional<std::string_view> text, int64_t& out, bool end = false) {
  if (!text) return json.fail(path, field, "missing");
  if (auto ms = parse_iso8601_ms(*text)) {
    constexpr size_t kDateOnly = 10;  // YYYY-MM-DD
    constexpr int64_t kDayMs = 86'400'000;
    const bool whole_day = end && text->size() == kDateOnly;
    if (whole_day && *ms + kDayMs > kLastRfc3339Ms) {
      // 9999-12-31 would end in year 10000, which no job can name (it was queued as year 0000).
      std::string what("a window through ");
      append_quoted_excerpt(what, *text);
      what += " would end at its next midnight, past " + format_rfc3339_ms(kLastRfc3339Ms) +
              ", the last time RFC 3339 writes";
      return json.fail(path, field, what);
    }
    out = *ms + (whole_day ? kDayMs : 0);
    return true;
  }
  std::string what("not an ISO 8601 time ");
  append_quoted_excerpt(what, *text);
  return json.fail(path, field, what);
}

}  // namespace

bool parse_resource_data(JsonReader& json, od::value v, size_t depth, const ResourceDataRequest& request,
                         std::vector<SampleRow>& spare_samples, DeliveryRows& out) {
  const JsonPath& path = request.path;
  const size_t child_depth = depth + 1;
  ResourceFields f;
  std::string array_path;
  std::string_view data_json;
  const bool read = json.members(v, depth, path, [&](std::string_view key, od::value value) {
    // A summary resource's `data` is a member of the summary (a meal's items), in a
    // historical event too (summary_only is false there: it may be a backfill notice).
    if (key == "data" && !request.summary_only && !is_summary_resource(request.resource)) {
      od::json_type type{};
      if (auto code = value.type().get(type)) return json.json_problem(code);
      if (type != od::json_type::array || f.batch != nullptr) return json.skip(value, child_depth);  // meal's `data` is an object
      od::array samples;
      if (!json.array(value, child_depth, samples)) return false;
      out.family = Family::timeseries;  // named in the error too, if a sample is bad
      f.batch = &out.sample_batches.emplace_back();
      f.batch->samples.swap(spare_samples);
      array_path = path.render("data");
      return parse_samples(json, samples, child_depth, array_path, f.batch->samples);
    }
    if (key == "id") return json.id(value, f.id);
    if (key == "user_id") return json.id(value, f.user_id);
    if (key == "source") return read_source(json, value, child_depth, path, key, f.source);
    if (key == "source_provider") return json.text(value, f.source.flat_provider);
    if (key == "source_type") return json.text(value, f.source.flat_type);
    if (key == "source_app_id") return json.text(value, f.source.flat_app_id);
    if (key == "start_date") return json.text(value, f.start_date);
    if (key == "end_date") return json.text(value, f.end_date);
    if (key == "provider") return read_provider_slug(json, value, child_depth, path, key, f.provider);
    if (key == "is_final") return json.boolean(value, f.is_final);
    if (key == "workout_id") return json.id(value, f.workout_id);
    if (key == "provider_id") return json.id(value, f.provider_id);
    if (key == "source_id") return read_source_id(json, value, child_depth, f.source_id);
    if (key == "sport") return read_sport_slug(json, value, child_depth, f.sport_slug);
    if (SummaryTimes::is_time_field(key)) {
      // Kept as text; an unparsable time only makes start_ms/end_ms null.
      std::optional<std::string_view> text;
      if (!json.text(value, text)) return false;
      f.times.offer(key, text);
      if (key == "calendar_date") f.calendar_date = text;
      return true;
    }
    return json.skip(value, child_depth);
  }, &data_json);
  if (!read) return false;

  const std::optional<std::string_view> provider = f.source.resolved_provider();

  if (!request.summary_only && !request.historical && request.resource == "workout_stream") {
    // Shallow notice: there is no `id`; the stream is keyed by workout_id.
    if (f.batch) out.sample_batches.pop_back();
    if (!f.workout_id || f.workout_id->empty()) return json.fail(path, "workout_id", "missing");
    out.family = Family::workout_stream;
    WorkoutStreamNotice& notice = out.workout_stream.emplace();
    notice.workout_id = *f.workout_id;
    notice.user_id = f.user_id;
    notice.provider = provider;
    notice.provider_id = f.provider_id;
    notice.sport = f.sport_slug;
    return true;
  }

  // A resource the catalog does not know, with an `id` and an empty `data` array: a new
  // summary whose items are empty (a timeseries batch has no `id`), not a batch of nothing
  // (it was "processed" with nothing stored).
  if (f.batch && f.batch->samples.empty() && f.id && !is_known_resource(request.resource)) {
    f.batch->samples.swap(spare_samples);
    out.sample_batches.pop_back();
    f.batch = nullptr;
  }

  if (f.batch) {
    if (!provider) return json.fail(path, "source.provider", "missing (neither source.provider nor source.slug)");
    out.family = Family::timeseries;
    f.batch->resource = request.resource;
    f.batch->provider = *provider;
    f.batch->source_type = f.source.resolved_type();
    f.batch->user_id = f.user_id.value_or(std::string_view{});
    f.batch->source_id = f.source_id;
    f.batch->app_id = f.source.resolved_app_id();
    return true;
  }

  if (f.id) {
    if (f.id->empty()) return json.fail(path, "id", "empty");
    out.family = Family::summary;
    SummaryRow& row = out.summaries.emplace_back();
    row.resource = request.resource;
    row.id = *f.id;
    row.user_id = f.user_id;
    row.provider = provider;
    row.source_type = f.source.resolved_type();
    row.app_id = f.source.resolved_app_id();
    row.calendar_date = f.calendar_date;
    row.start_ms = f.times.start_ms();
    row.end_ms = f.times.end_ms();
    row.data_json = data_json;
    row.provider_id = f.provider_id;
    row.sport = f.sport_slug;
    return true;
  }

  if (request.historical && !request.summary_only && (f.start_date || f.end_date)) {
    out.family = Family::backfill;
    BackfillNotice notice;
    if (!read_window_time(json, path, "start_date", f.start_date, notice.start_ms)) return false;
    if (!read_window_time(json, path, "end_date", f.end_date, notice.end_ms, true)) return false;
    // Never fetchable: invalid now, not a job that dies at its first page.
    if (notice.end_ms < notice.start_ms) return json.fail(path, "end_date", "before start_date");
    if (!f.provider || f.provider->empty()) return json.fail(path, "provider", "missing");
    notice.resource = request.resource;
    notice.provider = *f.provider;
    notice.user_id = f.user_id.value_or(std::string_view{});
    notice.is_final = f.is_final;
    out.backfill = notice;
    return true;
  }

  if (!request.summary_only && !is_known_resource(request.resource)) {
    out.family = Family::other;  // a resource the catalog did not have: status unknown
    return true;
  }
  if (request.historical && !request.summary_only) {
    return json.fail(path, "start_date", "missing (a historical event needs an id, data[] or start_date/end_date)");
  }
  // A summary resource's data can be nothing but a summary: only its id is missing.
  if (request.summary_only) return json.fail(path, "id", "missing");
  return json.fail(path, "id", "missing (a summary needs an id, a timeseries a data[] array)");
}

}  // namespace hh::events
