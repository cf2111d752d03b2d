#pragma once
// An inbox row as the processor reads it, and what it turns into: the contract between the
// parser (events/, simdjson On-Demand) and the latest-wins upserts
// (store::ProcessingStore::apply). A module of its own, which both sides include: the store
// consumes these rows without knowing how they were parsed, and the parser fills them
// without knowing how they are stored.
//
// Lifetime: every std::string_view below points into the body being parsed or into the
// parser's own buffers, and stays valid until that DeliveryParser parses the next row.
// The applier copies what it keeps (SQLite copies bound text).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hh::rows {

// How a row was classified; stored in deliveries.family.
enum class Family {
  summary,            // daily.data.<summary>.*, historical.data.<summary>.* carrying data
  timeseries,         // daily.data.<timeseries>.* ($.data.data[])
  workout_stream,     // daily.data.workout_stream.* (shallow notice)
  backfill,           // historical.data.<resource>.created without data (a window to fetch)
  connection,         // provider.connection.created / .error
  device,             // provider.device.*
  lab_order,          // labtest.order.*
  lab_appointment,    // labtest.appointment.*
  lab_result,         // labtest.result.critical
  lab_parsing_job,    // lab_report.parsing_job.*
  hypnogram,          // *.timeseries.hypnogram.* / daily.data.hypnogram.*: superseded, status 'ignored'
  // Resources the interface lists whose payload it does not show (known_resources.h):
  // stored, classified, counted, status 'unknown'; never parsed by their shape.
  match_review,       // labtest.match_review.*, daily.data.match_review.*
  sleep_stream,       // daily|historical.data.sleep_stream.*
  device_legacy,      // daily|historical.data.device_legacy.*, provider.device_legacy.*
  other,              // anything else: status 'unknown'
  fetched_stream,     // origin 'fetch': GET /v2/timeseries/workouts/{id}/stream response
  fetched_summaries,  // origin 'fetch': GET /v2/summary/{resource}/{user} page
  fetched_timeseries, // origin 'fetch': GET /v2/timeseries/{user}/{resource}/grouped page
  fetched_providers,  // origin 'fetch': GET /v2/providers (the service's provider list)
  fetched_parsing_job,     // origin 'fetch': GET /lab_report/v1/parser/job/{job_id} (results of a completed job)
  fetched_deregistration,  // origin 'fetch': DELETE /v2/user/{user_id}/{provider} answered success (`user deregister`)
};
std::string_view family_name(Family family);

// deliveries.status after processing.
enum class Status { processed, invalid, ignored, unknown };
std::string_view status_name(Status status);

// The inbox row as the processor reads it (store::DeliveryCursor hands it out).
struct InboxRow {
  int64_t seq = 0;
  std::string_view origin;        // "webhook" or "fetch"
  std::string_view event_type;    // deliveries.event_type ("" when NULL)
  std::string_view headers_json;  // for fetched rows: the fetch context (events/delivery_parser.h)
  std::string_view body;
};

// summaries row. `data_json` is $.data exactly as received (raw_json()).
struct SummaryRow {
  std::string_view resource;
  std::string_view id;
  std::optional<std::string_view> user_id;
  std::optional<std::string_view> provider;     // source.provider, else source.slug, else flat source_provider
  std::string_view source_type = "unknown";     // source.type, else flat source_type, else "unknown"
  std::optional<std::string_view> app_id;       // source.app_id, else flat source_app_id; absent for most
  std::optional<std::string_view> calendar_date;
  std::optional<int64_t> start_ms;
  std::optional<int64_t> end_ms;
  std::string_view data_json;
  // A workout's, for the stream a workouts page of a backfill queues (its workout_streams row).
  std::optional<std::string_view> provider_id;
  std::optional<std::string_view> sport;  // sport.slug
};

// A sample's value as sent: JSON integer, JSON float, string, or absent/null. Also the
// type of other scalars kept as sent (a timeseries batch's source_id).
using SampleValue = std::variant<std::monostate, int64_t, double, std::string_view>;

struct SampleRow {
  int64_t t_ms = 0;                              // timestamp (interval samples: start) as UTC ms
  std::optional<int64_t> timezone_offset;
  SampleValue value;
  std::optional<std::string_view> unit;
  std::optional<std::string_view> type;
  std::optional<int64_t> start_ms;               // interval samples
  std::optional<int64_t> end_ms;
  std::optional<double> systolic;                // blood_pressure
  std::optional<double> diastolic;
  std::string extra_json;                        // other fields as a JSON object; empty = none
};

// Samples sharing one series key (user, resource, provider, source type).
struct SampleBatch {
  std::string_view user_id;
  std::string_view resource;
  std::string_view provider;
  std::string_view source_type = "unknown";
  SampleValue source_id;                         // $.data.source_id as sent (webhooks only); monostate when absent
  std::optional<std::string_view> app_id;        // source.app_id when the source names one
  std::vector<SampleRow> samples;
};

struct WorkoutStreamNotice {
  std::string_view workout_id;
  std::optional<std::string_view> user_id;
  std::optional<std::string_view> provider;
  std::optional<std::string_view> provider_id;
  std::optional<std::string_view> sport;         // sport.slug
};

struct BackfillNotice {
  std::string_view user_id;
  std::string_view resource;
  std::string_view provider;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::optional<bool> is_final;
};

struct ConnectionRow {
  std::string_view user_id;
  std::string_view provider;
  std::string_view status;                       // "connected" or "error"
  std::optional<std::string_view> external_user_id;
  std::optional<std::string_view> error_type;
  std::optional<std::string_view> error_message;
  std::optional<std::string_view> resource_availability_json;
  std::string_view event_type;
  std::string_view data_json;
};

struct DeviceRow {
  std::string_view id;
  std::optional<std::string_view> user_id, provider, source_type, app_id, device_manufacturer, device_model,
      device_version, device_id;
  std::string_view data_json;
};

struct LabOrderRow {
  std::string_view id;
  std::optional<std::string_view> user_id, team_id, status, last_event_status, status_detail, interpretation;
  std::string_view data_json;
};

struct LabAppointmentRow {
  std::string_view id;
  std::optional<std::string_view> order_id, user_id, status, event_status, start_at, end_at;
  std::string_view data_json;
};

struct LabResultRow {
  std::string_view order_id;
  std::optional<std::string_view> user_id, sample_id, status, interpretation;
  std::string_view data_json;
};

struct LabParsingJobRow {
  std::string_view id;
  std::optional<std::string_view> status, failure_reason;
  std::optional<bool> needs_human_review, is_reviewed;
  std::optional<std::string_view> results_json;  // $.data.data when present
  std::string_view data_json;
  std::optional<std::string_view> user_id = std::nullopt;  // the envelope's user_id (the job's data names nobody)
};

// `healthhook user deregister` recorded that the service deregistered the user from the
// provider: the connection row is marked (status 'deregistered', deregistered_at), its
// other fields kept. `data_json` is the service's answer.
struct DeregistrationRow {
  std::string_view user_id;
  std::string_view provider;
  int64_t deregistered_at_ms = 0;
  std::string_view event_type;  // "fetch.deregistration"
  std::string_view data_json;
};

// One item of GET /v2/providers (service interface: Provider). `slug` keys the row.
struct ProviderRow {
  std::string_view slug;
  std::optional<std::string_view> name, description, logo, auth_type;
  std::optional<std::string_view> supported_resources_json;  // the array as sent
  std::string_view data_json;
};

// Who a webhook delivery is about (spec §4 "Identity"): the envelope's user_id (else the
// user of its rows, for envelopes before Mar 2024), client_user_id (the customer's own
// id for the user) and team_id (else a lab order's). Unset for fetched rows and for
// deliveries that name no user.
struct Identity {
  std::optional<std::string_view> user_id, client_user_id, team_id;
};

class StreamPointReader;

// Points [first, end) of a fetched stream, applied in a transaction of their own: a stream
// longer than the store's slice (store::ProcessingStore::stream_slice_points()) is applied
// one slice per processor step, so inbox commits wait for one slice, never for the whole
// stream (docs/decisions/094-long-streams-applied-in-slices.md).
struct StreamSlice {
  StreamPointReader* reader = nullptr;  // at point `first`; the slice reads up to `end`
  size_t first = 0;
  size_t end = 0;  // one past the slice's last point: the stream's point_count for its last slice
};

// A fetched workout stream: the points are read with StreamPointReader (rows/stream_points.h)
// straight from `body`, so a 100,000-point stream needs no per-point allocation.
struct FetchedStream {
  std::string_view workout_id;
  std::string_view body;
  size_t point_count = 0;                        // counted (and validated) by the parser
  std::optional<std::string_view> user_id = std::nullopt;  // the fetch context's user_id (the job's)
  const StreamSlice* slice = nullptr;  // null: every point at once (what the parser hands out)
};

// Everything one inbox row produced. Reused across rows (clear() keeps capacity).
struct DeliveryRows {
  Family family = Family::other;
  Identity identity;
  // Whom the inbox row is about, whatever its status (erasure finds the row by it, spec
  // §11): a webhook's envelope user_id, else the user its rows name (identity.user_id); a
  // fetched row's context user_id. Unset when the row names nobody (or the parse failed
  // before the envelope's user_id was read).
  std::optional<std::string_view> delivery_user;
  std::vector<SummaryRow> summaries;             // 1 for a webhook, many for a fetched page
  std::vector<SampleBatch> sample_batches;       // 1 for a webhook, one per source in a grouped page
  std::optional<WorkoutStreamNotice> workout_stream;
  std::optional<BackfillNotice> backfill;
  std::optional<ConnectionRow> connection;
  std::optional<DeviceRow> device;
  std::optional<LabOrderRow> lab_order;
  std::optional<LabAppointmentRow> lab_appointment;
  std::optional<LabResultRow> lab_result;
  std::optional<LabParsingJobRow> lab_parsing_job;  // a webhook's, or a fetched job's (fetched_parsing_job)
  std::optional<DeregistrationRow> deregistration;
  std::optional<FetchedStream> fetched_stream;
  std::vector<ProviderRow> providers;            // a fetched provider list
  std::vector<std::string_view> workout_ids_to_fetch;  // fetched workouts page of a workout_stream backfill

  void clear();
};

}  // namespace hh::rows
