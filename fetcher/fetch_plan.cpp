#include "fetcher/fetch_plan.h"

#include <algorithm>

#include "common/json_scan.h"
#include "common/json_writer.h"
#include "common/timestamp.h"
#include "fetcher/page_owner.h"
#include "fetcher/resource_kinds.h"

namespace hh::fetcher {
namespace {

constexpr int64_t kDayMs = 24 * 3600 * 1000;

std::string message_id(const store::ClaimedJob& job, int64_t page) {
  return "fetch:" + std::to_string(job.job_id) + ":" + std::to_string(job.trigger_seq) + ":" + std::to_string(page);
}

void optional_field(json::ObjectWriter& writer, std::string_view key, const std::string& value) {
  if (!value.empty()) writer.string(key, value);
}

Result<PagePlan> plan_stream(const store::ClaimedJob& job, const BaseUrl& base) {
  if (job.workout_id.empty()) return fail("payload: missing workout_id");
  auto path = build_path(base, {"v2", "timeseries", "workouts", job.workout_id, "stream"});
  if (!path) return fail(path, "payload: workout_id");
  PagePlan plan;
  plan.page = job.page;
  plan.target = std::move(*path);
  plan.url = base.full_url(plan.target);
  plan.message_id = message_id(job, plan.page);
  plan.event_type = "fetch.workout_stream";
  json::ObjectWriter context(plan.context_json);
  context.string("kind", "workout_stream").string("workout_id", job.workout_id);
  optional_field(context, "user_id", job.user_id);
  optional_field(context, "provider", job.provider);
  context.string("url", plan.url);
  context.close();
  return plan;
}

Result<PagePlan> plan_backfill(const store::ClaimedJob& job, const BaseUrl& base) {
  for (const auto& [name, value] : {std::pair{"user_id", &job.user_id}, std::pair{"resource", &job.resource},
                                    std::pair{"provider", &job.provider}, std::pair{"start", &job.start},
                                    std::pair{"end", &job.end}}) {
    if (value->empty()) return fail(std::string("payload: missing ") + name);
  }
  const auto start_ms = parse_iso8601_ms(job.start);
  const auto end_ms = parse_iso8601_ms(job.end);
  if (!start_ms) return fail("payload: start is not an ISO 8601 time: " + job.start);
  if (!end_ms) return fail("payload: end is not an ISO 8601 time: " + job.end);
  if (*end_ms < *start_ms) return fail("payload: the window ends before it starts");

  const BackfillSource source = backfill_source(job.resource);
  PagePlan plan;
  plan.page = job.page;
  plan.message_id = message_id(job, plan.page);
  std::string kind;
  std::string_view resource_in_path = job.resource;
  std::vector<std::pair<std::string_view, std::string_view>> query;
  std::string from, to;
  Result<std::string> path = std::string();
  if (source == BackfillSource::single_summary) {
    // No window and no list (reference notes §3.1): the profile as it is now.
    kind = "summary";
    path = build_path(base, {"v2", "summary", job.resource, job.user_id});
    if (!path) return fail(path, "payload");
    plan.target = with_query(std::move(*path), {{"provider", job.provider}});
    plan.url = base.full_url(plan.target);
    plan.event_type = "fetch.summary." + job.resource;
    json::ObjectWriter context(plan.context_json);
    context.string("kind", kind).string("resource", job.resource).string("user_id", job.user_id);
    context.string("provider", job.provider).string("url", plan.url);
    context.close();
    return plan;  // body_array "": one object, and the job is complete with it
  }
  if (source == BackfillSource::timeseries) {
    kind = "timeseries";
    path = build_path(base, {"v2", "timeseries", job.user_id, job.resource, "grouped"});
    from = format_rfc3339_ms(*start_ms);
    to = format_rfc3339_ms(*end_ms);
    plan.body_array = "groups";
  } else {
    kind = source == BackfillSource::summaries ? "summaries" : "workouts_for_streams";
    if (source == BackfillSource::workouts_for_streams) resource_in_path = "workouts";
    path = build_path(base, {"v2", "summary", resource_in_path, job.user_id});
    const int64_t slice_start = std::clamp(job.next_start_ms.value_or(*start_ms), *start_ms, *end_ms);
    const int64_t slice_end = std::min(*end_ms, slice_start + kSummarySliceDays * kDayMs);
    from = format_rfc3339_ms(slice_start);
    to = format_rfc3339_ms(slice_end);
    plan.slice_end_ms = slice_end;
    plan.body_array = std::string(summary_items_key(resource_in_path));
  }
  if (!path) return fail(path, "payload");
  query = {{"start_date", from}, {"end_date", to}, {"provider", job.provider}};
  if (source == BackfillSource::timeseries && job.cursor) query.emplace_back("cursor", *job.cursor);
  plan.target = with_query(std::move(*path), query);
  plan.url = base.full_url(plan.target);
  plan.event_type = "fetch." + kind;
  if (source != BackfillSource::workouts_for_streams) plan.event_type += "." + job.resource;
  json::ObjectWriter context(plan.context_json);
  context.string("kind", kind);
  if (source != BackfillSource::workouts_for_streams) context.string("resource", job.resource);
  if (source == BackfillSource::summaries && plan.body_array != job.resource) context.string("items_key", plan.body_array);
  context.string("user_id", job.user_id).string("provider", job.provider).string("url", plan.url);
  context.close();
  return plan;
}

// The results of a completed lab report parsing job whose webhook carried none.
Result<PagePlan> plan_parsing_job(const store::ClaimedJob& job, const BaseUrl& base) {
  if (job.job_key.empty()) return fail("job_key: missing (the parsing job's id)");
  auto path = build_path(base, {"lab_report", "v1", "parser", "job", job.job_key});
  if (!path) return fail(path, "job_key");
  PagePlan plan;
  plan.page = job.page;
  plan.target = std::move(*path);
  plan.url = base.full_url(plan.target);
  plan.message_id = message_id(job, plan.page);
  plan.event_type = "fetch.parsing_job";
  json::ObjectWriter context(plan.context_json);
  context.string("kind", "parsing_job").string("job_id", job.job_key);
  optional_field(context, "user_id", job.user_id);
  context.string("url", plan.url);
  context.close();
  return plan;  // body_array "": one object, and the job is complete with it
}

}  // namespace

Result<PagePlan> plan_next_page(const store::ClaimedJob& job, const BaseUrl& base) {
  if (!job.payload_valid) return fail("payload is not valid JSON");
  if (job.kind == store::kKindWorkoutStream) return plan_stream(job, base);
  if (job.kind == store::kKindBackfill) return plan_backfill(job, base);
  if (job.kind == store::kKindParsingJob) return plan_parsing_job(job, base);
  return fail("unknown job kind \"" + job.kind + "\"");
}

namespace {

// The progress a page of the right shape makes.
Result<store::JobProgress> progress_of_page(const store::ClaimedJob& job, const PagePlan& page, std::string_view body) {
  store::JobProgress progress;
  progress.page = page.page + 1;
  if (page.body_array.empty()) {  // one object: a workout stream (parallel arrays), a profile
    if (json::first_byte(body) != '{') return fail("unexpected body: expected one JSON object");
    // A parsing job's answer carries its results in data.results. `data` is null until the
    // job is completed (reference notes §2.8): not there yet, retried like a 404; but a job
    // the service says failed has none and never will: that answer is kept.
    if (job.kind == store::kKindParsingJob) {
      const auto data = json::top_level_member(body, "data");
      const bool no_data = !data || *data == "null";
      if (no_data && json::top_level_member(body, "status") == std::optional<std::string_view>("\"failed\"")) {
        progress.complete = true;
        return progress;
      }
      if (no_data) return fail("the parsing job's results are not there yet (data is null)");
      const auto results = data->starts_with('{') ? json::top_level_member(*data, "results") : std::nullopt;
      if (!results || !results->starts_with('[')) return fail("unexpected body: no \"data\".\"results\" array");
    }
    progress.complete = true;
    return progress;
  }
  const auto member = json::top_level_member(body, page.body_array);
  const char expected = page.body_array == "groups" ? '{' : '[';
  if (!member || !member->starts_with(expected)) {
    return fail("unexpected body: no \"" + page.body_array + "\" " + (expected == '{' ? "object" : "array"));
  }
  if (page.slice_end_ms) {  // summaries: the next slice, or done
    const auto end_ms = parse_iso8601_ms(job.end);
    progress.complete = !end_ms || *page.slice_end_ms >= *end_ms;
    if (!progress.complete) progress.next_start_ms = *page.slice_end_ms;
    return progress;
  }
  const auto next = json::top_level_member(body, "next_cursor");
  if (!next || *next == "null") {
    progress.complete = true;
    return progress;
  }
  auto cursor = json::decode_string(*next);
  if (!cursor) return fail("unexpected body: next_cursor is neither a string nor null");
  if (cursor->empty()) {
    progress.complete = true;  // some APIs end a chain with "" instead of null
    return progress;
  }
  progress.cursor = std::move(*cursor);
  return progress;
}

}  // namespace

Result<store::JobProgress> progress_after(const store::ClaimedJob& job, const PagePlan& page, std::string_view body) {
  auto progress = progress_of_page(job, page, body);
  if (!progress) return fail(progress);
  // Before anything is stored: a page about another user or provider would replace
  // their rows (page_owner.h).
  if (auto owned = check_page_owner(job, page, body); !owned) return fail(owned);
  return progress;
}

}  // namespace hh::fetcher
