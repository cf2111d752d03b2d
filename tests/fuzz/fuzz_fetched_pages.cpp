// Fuzzes a body fetched from the service along its real path, for each kind of page the
// fetcher asks for (a plan from fetcher::plan_next_page, as the job runner makes it):
//   fetcher: check_json → progress_after (top_level_member, decode_string)
//   processor: DeliveryParser::parse of the stored row (origin "fetch", the plan's context)
// Every page kind sees every body (each run is cheap), so the fuzzer needs no selector
// byte and the seeds are the plain bodies of schemas/examples/fetched-*.body.json.
//
// Properties besides "no crash":
//  - common/json_scan agrees with simdjson's DOM parser on what is JSON (outside the cases the
//    scanner leaves to the processor on purpose: UTF-8, number ranges, surrogates), and a
//    member it cuts out is the member simdjson finds, decoded strings included;
//  - a cursor progress_after accepts is a new, non-empty one;
//  - a stored page the processor accepts was JSON throughout (the job runner only stores
//    bodies that pass check_json) and its rows hold (delivery_rows_checks.h).
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "delivery_rows_checks.h"
#include "fetcher/fetch_plan.h"

using namespace hh;

namespace {

struct PageKind {
  store::ClaimedJob job;
  fetcher::PagePlan plan;
  bool has_job = true;  // false: the provider list (providers_sync.h), fetched outside the job queue
};

store::ClaimedJob backfill_job(std::string resource) {
  store::ClaimedJob job;
  job.kind = std::string(store::kKindBackfill);
  job.payload_valid = true;
  job.user_id = "e9e072e8-0b39-4e5a-a3b2-9a1c0f6b2d44";
  job.provider = "garmin";
  job.resource = std::move(resource);
  job.start = "2024-08-04T00:00:00+00:00";
  job.end = "2024-11-02T00:00:00+00:00";
  return job;
}

std::vector<PageKind> page_kinds() {
  const auto base = fetcher::BaseUrl::parse("https://api.sandbox.example").value();
  std::vector<store::ClaimedJob> jobs;
  store::ClaimedJob stream;
  stream.kind = std::string(store::kKindWorkoutStream);
  stream.payload_valid = true;
  stream.workout_id = "fdc70dd0-8cc8-4ec8-8b80-121fd9a3302a";
  stream.user_id = "bf6222fb-5a3c-4d1e-9f2b-7c8d9e0f1a2b";
  stream.provider = "fitbit";
  jobs.push_back(stream);
  for (const char* resource : {"sleep", "activity", "workouts", "body", "meal", "profile", "workout_stream"}) {
    jobs.push_back(backfill_job(resource));
  }
  for (const char* resource : {"heartrate", "blood_pressure"}) jobs.push_back(backfill_job(resource));
  jobs.back().cursor = "c0";  // a later page of a cursor chain: the next cursor must differ
  std::vector<PageKind> kinds;
  for (auto& job : jobs) {
    auto plan = fetcher::plan_next_page(job, base);
    if (!plan) fuzz::broken("plan_next_page", plan.error());
    kinds.push_back({std::move(job), std::move(*plan), true});
  }
  PageKind providers;
  providers.has_job = false;
  providers.plan.event_type = "fetch.providers";
  providers.plan.context_json = R"({"kind":"providers","url":"https://api.sandbox.example/v2/providers"})";
  kinds.push_back(std::move(providers));
  return kinds;
}

// simdjson rejects these where check_json, a syntax check only, accepts on purpose: the
// processor's own parse reports them with the field's name.
bool scanner_may_accept(simdjson::error_code code) {
  return code == simdjson::DEPTH_ERROR || code == simdjson::NUMBER_ERROR ||
         code == simdjson::UTF8_ERROR || code == simdjson::STRING_ERROR || code == simdjson::NUMBER_OUT_OF_RANGE;
}

void check_json_scan(std::string_view body) {
  static simdjson::dom::parser dom;
  const simdjson::padded_string padded(body);
  simdjson::dom::element root;
  const simdjson::error_code code = dom.parse(padded).get(root);
  const auto scanned = json::check_json(body, 4096);
  if (code == simdjson::SUCCESS && !scanned) fuzz::broken("check_json rejects JSON", scanned.error());
  if (code != simdjson::SUCCESS && scanned && !scanner_may_accept(code)) {
    fuzz::broken("check_json accepts what simdjson rejects", simdjson::error_message(code));
  }
  if (code != simdjson::SUCCESS) return;

  simdjson::dom::object object;
  if (root.get_object().get(object)) {
    if (json::top_level_member(body, "x")) fuzz::broken("top_level_member of a non-object");
    return;
  }
  const bool escapes = body.find('\\') != std::string_view::npos;
  for (auto [key, value] : object) {
    const auto member = json::top_level_member(body, key);
    if (!escapes && !member) fuzz::broken("top_level_member misses a member", key);
    if (!member) continue;
    if (auto valid = json::check_json(*member, 4096); !valid) fuzz::broken("member is not JSON", valid.error());
    const simdjson::padded_string member_text(*member);
    simdjson::dom::parser member_parser;
    simdjson::dom::element cut;
    if (member_parser.parse(member_text).get(cut)) fuzz::broken("member does not parse alone", *member);
    std::string_view text;
    if (!cut.get_string().get(text)) {
      const auto decoded = json::decode_string(*member);
      if (!decoded || *decoded != text) fuzz::broken("decode_string differs from simdjson", *member);
    }
    if (escapes) continue;  // a key may then be written two ways; the first raw match need not be this one
    simdjson::dom::element first;
    if (object.at_key(key).get(first)) fuzz::broken("at_key");
    if (simdjson::minify(cut) != simdjson::minify(first)) fuzz::broken("top_level_member cut another value", key);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<PageKind> kinds = page_kinds();
  static events::DeliveryParser parser;
  static rows::DeliveryRows rows;
  const std::string body(reinterpret_cast<const char*>(data), size);

  check_json_scan(body);
  const bool fetcher_would_store = json::check_json(body).ok();
  for (const PageKind& kind : kinds) {
    if (fetcher_would_store && kind.has_job) {
      const auto progress = fetcher::progress_after(kind.job, kind.plan, body);
      if (progress && progress->cursor) {
        if (progress->cursor->empty()) fuzz::broken("empty cursor accepted");
      }
    }
    const rows::InboxRow row{1, "fetch", kind.plan.event_type, kind.plan.context_json, body};
    const events::ParseResult result = parser.parse(row, rows);
    fuzz::check_parse(result, rows);
    // Streams too: StreamPointReader checks what it reads with the same scanner
    // (fuzz_stream_points covers that reader).
    if (result.status != rows::Status::invalid && !json::check_json(body, json::kSimdjsonMaxDepth)) {
      fuzz::broken("processor accepted a page that is not JSON", kind.plan.event_type);
    }
  }
  return 0;
}
