#pragma once
// Internal interface between delivery_parser.cpp (envelope, fetch context, dispatch) and
// the per-family readers of one JSON value each. Not used outside events/.
//
// Conventions shared by every function here:
// - `v` is the value to read and `depth` its nesting level (document root = 1).
// - Every value is read completely (JsonReader), so stored JSON text is valid JSON.
// - On failure the function returns false with json.error() set to "path.field: problem";
//   `out` may then hold partial rows, which the caller discards.
// - User ids missing from `data` are left empty/nullopt: the caller fills them from the
//   envelope (or the fetch context) and checks the required ones.
#include <string_view>
#include <vector>

#include "events/classify.h"
#include "events/json_reader.h"
#include "rows/delivery_rows.h"

namespace hh::events {

// The parser fills the rows the store consumes (rows/delivery_rows.h): named unqualified
// throughout the parser's own sources.
using namespace hh::rows;

// $.data.data[] (webhooks) or a grouped page's data[]: `samples` is the array at `depth`;
// `array_path` names it in errors ("data.data", "groups.oura[0].data"). Appends to `out`.
bool parse_samples(JsonReader& json, od::array samples, size_t depth, std::string_view array_path,
                   std::vector<SampleRow>& out);

struct ResourceDataRequest {
  std::string_view resource;
  bool historical = false;    // historical.data.*: a data-less body is a backfill notice
  bool summary_only = false;  // fetched summary pages, summary resources' events: `data` is just a member
  JsonPath path;              // where the object sits ("data", or {"sleep", 3} in a page)
};

// The $.data object of daily/historical data events, or one item of a fetched summaries
// page. Reads every member once and decides by shape (spec §3):
//   daily.data.workout_stream.*      → out.workout_stream       (Family::workout_stream)
//   an array at `data`               → one out.sample_batches   (Family::timeseries)
//   an `id`                          → one out.summaries        (Family::summary)
//   historical with start/end dates  → out.backfill             (Family::backfill)
//   none of these, for a resource outside the catalog (known_resources.h): nothing, and
//   out.family = Family::other (the caller marks the delivery `unknown`)
// `spare_samples` lends its capacity to a new batch (the parser reuses it across rows).
bool parse_resource_data(JsonReader& json, od::value v, size_t depth, const ResourceDataRequest& request,
                         std::vector<SampleRow>& spare_samples, DeliveryRows& out);

// provider.connection.created / .error → out.connection (user_id may be left empty).
bool parse_connection(JsonReader& json, od::value v, size_t depth, bool is_error, std::string_view event_type,
                      DeliveryRows& out);

// provider.device.* → out.device.
bool parse_device(JsonReader& json, od::value v, size_t depth, DeliveryRows& out);

// labtest.order.*, labtest.appointment.*, labtest.result.critical, lab_report.parsing_job.*
bool parse_lab_order(JsonReader& json, od::value v, size_t depth, DeliveryRows& out);
bool parse_lab_appointment(JsonReader& json, od::value v, size_t depth, DeliveryRows& out);
bool parse_lab_result(JsonReader& json, od::value v, size_t depth, DeliveryRows& out);
bool parse_lab_parsing_job(JsonReader& json, od::value v, size_t depth, DeliveryRows& out);

// Fetched pages (origin "fetch"); `root` is the document's top-level object.
struct FetchContext {
  std::string_view kind;        // workout_stream | summaries | summary | timeseries | workouts_for_streams | providers
                                // | parsing_job | deregistration
  std::string_view resource;    // summaries, timeseries
  std::string_view user_id;
  std::string_view provider;
  std::string_view workout_id;  // workout_stream
  std::string_view items_key;   // summaries: the member holding the list ("meals" for meal); "" = resource
  std::string_view job_id;      // parsing_job: the lab report parsing job fetched
  std::string_view deregistered_at;  // deregistration: RFC 3339, when the service answered
};

// {"<items_key>": [summary, …]} → out.summaries of `resource`; with `collect_ids` (the
// workouts page of a workout_stream backfill) each id also goes to out.workout_ids_to_fetch.
bool parse_summaries_page(JsonReader& json, od::object root, std::string_view resource, std::string_view items_key,
                          bool collect_ids, const FetchContext& context, std::vector<SampleRow>& spare_samples,
                          DeliveryRows& out);

// One summary object as the whole body (GET /v2/summary/profile/{user_id}): `root` is the
// document's value → one out.summaries row of context.resource.
bool parse_summary_object(JsonReader& json, od::value root, const FetchContext& context,
                          std::vector<SampleRow>& spare_samples, DeliveryRows& out);

// [provider, …] (GET /v2/providers) → out.providers; each needs a `slug`.
bool parse_providers_page(JsonReader& json, od::array root, DeliveryRows& out);

// {"groups": {"<provider>": [{"source": {…}, "data": [sample, …]}, …]}, "next_cursor": …}
// → one out.sample_batches entry per group that has samples.
bool parse_timeseries_page(JsonReader& json, od::object root, const FetchContext& context,
                           std::vector<SampleRow>& spare_samples, DeliveryRows& out);

}  // namespace hh::events
