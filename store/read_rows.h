#pragma once
// What the store's read side takes and hands out (store/read_store.h): the filters of each
// listing, the positions pages resume after, and the rows. Plain structs, the same for
// every backend; their output fields are in store/row_format.h.
//
// Rows view the store's buffers (std::string_view members) and are valid until the next
// call on the query that filled them; the few rows a lookup copies say so.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hh::store {

// ---- Samples: timeseries, one row per sample, with the series it belongs to.

struct SampleFilter {
  std::optional<std::string> user_id;
  std::optional<std::string> resource;
  std::optional<std::string> provider;
  std::optional<std::string> source_type;
  std::optional<int64_t> since_ms;  // inclusive, on the sample's instant (t_ms)
  std::optional<int64_t> until_ms;  // exclusive
};

// Where a time-ordered page ended: the next page starts after this sample.
struct SamplePosition {
  int64_t t_ms = 0;
  int64_t series_id = 0;
};

enum class ValueType { null, integer, real, text };

struct StoredSample {
  int64_t series_id = 0;
  std::string_view user_id, resource, provider, source_type;
  int64_t t_ms = 0;
  std::optional<int64_t> timezone_offset;
  ValueType value_type = ValueType::null;  // `value` keeps what was sent: integer, float or text
  int64_t value_integer = 0;
  double value_real = 0;
  std::string_view value_text;
  std::optional<std::string_view> unit, type;
  std::optional<int64_t> start_ms, end_ms;
  std::optional<double> systolic, diastolic;  // blood_pressure
  std::optional<std::string_view> extra;      // JSON object text
  int64_t seq = 0;
  // Identity columns (NULL when unknown): $.data.source_id of the series (an integer as
  // the service sends it, else its text), users.client_user_id, providers.name.
  std::optional<int64_t> source_id;
  std::optional<std::string_view> source_id_text;
  std::optional<std::string_view> client_user_id, provider_name;
  bool with_identity = false;  // set by the caller: output adds source_id, client_user_id, provider_name
};

// ---- Charts (the console): what a user has, and one resource's samples downsampled.

// One of a user's series, with the instants of its first and last sample (none: empty).
struct StoredSeries {
  std::string_view resource, provider, source_type;
  std::optional<int64_t> first_ms, last_ms;
};

// A user's summaries of one resource from one source: how many, and the first and last
// start of their periods.
struct StoredSummaryKind {
  std::string_view resource;
  std::optional<std::string_view> provider;
  std::string_view source_type;
  int64_t count = 0;
  std::optional<int64_t> first_start_ms, last_start_ms;
};

// The numeric samples of one series in one bucket of a chart: [since + n × width, +width).
struct SampleBucket {
  std::string_view provider, source_type;
  int64_t bucket = 0;                   // n
  int64_t first_ms = 0, last_ms = 0;    // the instants of its first and last sample
  int64_t count = 0;
  double min = 0, max = 0, mean = 0;
};

// ---- Summaries: one row per summary (sleep, activity, workout…).

// The time range applies to the start of the period (bedtime_start, time_start,
// calendar_date…); with a range, summaries without a start are left out.
struct SummaryFilter {
  std::optional<std::string> resource;
  std::optional<std::string> user_id;
  std::optional<std::string> provider;
  std::optional<std::string> source_type;
  std::optional<int64_t> since_ms;  // inclusive, on the start of the period
  std::optional<int64_t> until_ms;  // exclusive
};

// A page ends after this summary: (start of the period, none sorting first, then id).
struct SummaryPosition {
  std::optional<int64_t> start_ms;
  std::string id;
};

struct StoredSummary {
  std::string_view resource, id;
  std::optional<std::string_view> user_id, provider;
  std::string_view source_type;
  std::optional<int64_t> start_ms;
  int64_t seq = 0;
  std::string_view data;  // the summary object as received (JSON)
  // Identity (NULL when unknown): the user's client_user_id, the provider's name.
  std::optional<std::string_view> client_user_id, provider_name;
  bool with_identity = false;  // set by the caller: output adds client_user_id, provider_name
};

// ---- Workout streams: the points of a stream, and the stream itself.

struct StreamFilter {
  std::optional<std::string> workout_id;
  std::optional<std::string> user_id;   // the stream's user
  std::optional<std::string> provider;  // the stream's provider
  std::optional<int64_t> since_ms;      // inclusive, on the point's time
  std::optional<int64_t> until_ms;      // exclusive
};

struct StoredStreamPoint {
  std::string_view workout_id;
  int64_t idx = 0;                     // position in the stream (the page cursor)
  std::optional<int64_t> time;         // Unix seconds, as sent
  std::optional<double> distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, resistance,
      temperature;
};

// Owned copies: a lookup, valid after the query moved on.
struct StoredWorkoutStream {
  std::string workout_id;
  std::optional<std::string> user_id, provider, provider_id, sport;
  std::optional<int64_t> point_count;  // none until the stream was fetched
  int64_t seq = 0;
  // The fetch the points are from (none before the first): a stream page's cursor names
  // it, so that a walk is not continued into a later fetch. Not one of the row's fields
  // (row_format.h).
  std::optional<int64_t> fetched_seq;
};

// ---- The change feed: what each applied delivery changed, in (seq, change_id) order.

struct StoredChange {
  int64_t change_id = 0;
  int64_t seq = 0;
  std::string_view table_name, row_key, op;
  int64_t row_count = 0;
  std::optional<int64_t> from_ms, to_ms;
  std::optional<std::string_view> user_id;  // whom the changed row is about (none: a provider)
};

// Where a page starts: after every change of seq `after_seq`, or, inside that seq, after
// change `after_change_id` (a page that ended inside a seq).
struct ChangePosition {
  int64_t after_seq = 0;
  std::optional<int64_t> after_change_id;
};

// ---- Inbox rows (deliveries and fetched rows) with their processing outcome.

struct DeliveryFilter {
  std::optional<int64_t> since_ms;             // inclusive, on received_at
  std::optional<int64_t> until_ms;             // exclusive
  std::optional<std::string> event_type_glob;  // a glob: * ? [...], case-sensitive
  std::optional<std::string> status;           // pending | processed | invalid | ignored | unknown
  bool webhooks_only = true;                   // false: fetched rows too
  // The search by user (DeliveryQuery::start_newest_first only): each row read says whether
  // it is one of these users' (StoredDelivery::of_searched_users), found as `purge-user`
  // finds a user's deliveries (store/delivery_users.h: the user columns, a body only where
  // none can say). Every row of the window is still read: the caller bounds its pages.
  std::vector<std::string> user_ids = {};
};

// Why an event-type glob can select nothing ("" when it can): a set `[` never closed.
// Commands refuse such a pattern instead of silently selecting nothing.
std::string event_type_glob_problem(std::string_view glob);

struct StoredDelivery {
  int64_t seq = 0;
  std::string_view message_id, origin;
  int64_t received_at_ms = 0;
  std::optional<int64_t> webhook_timestamp;  // Unix seconds
  std::optional<std::string_view> event_type, status, family, error;
  std::string_view headers;  // JSON object as stored
  std::string_view body;     // raw bytes
  // Set when retention removed the body (then headers is {} and body empty).
  std::optional<int64_t> body_removed_at_ms;
  std::string_view body_sha256;  // of the removed body
  // A search by user (DeliveryFilter::user_ids): whether the row is one of theirs. True
  // for every row read otherwise.
  bool of_searched_users = true;
};

// ---- Records: the tables with one row per key.

// Filters, each optional (absent = any). A listing uses those its table has: user_id
// (all but providers), provider (connections, devices, backfills), resource (backfills),
// status (lab orders, appointments, results and parsing jobs: their status as stored),
// order_id (orders: their id; appointments, results), client_user_id (users).
struct RecordFilter {
  std::optional<std::string> user_id;
  std::optional<std::string> provider;
  std::optional<std::string> resource;
  std::optional<std::string> status;
  std::optional<std::string> order_id;
  std::optional<std::string> client_user_id = std::nullopt;  // last, with an initialiser: callers give the others by position
};

struct StoredConnection {
  std::string_view user_id, provider, status;  // status: connected | error | deregistered
  std::optional<int64_t> deregistered_at_ms;    // when `user deregister` recorded it
  std::optional<std::string_view> external_user_id, error_type, error_message;
  std::optional<std::string_view> resource_availability;  // JSON object
  std::string_view event_type;
  int64_t seq = 0;
  std::string_view data;  // JSON object
};

struct StoredDevice {
  std::string_view id;
  std::optional<std::string_view> user_id, provider, source_type, app_id, device_manufacturer, device_model,
      device_version, device_id;
  int64_t seq = 0;
  std::string_view data;
};

struct StoredLabOrder {
  std::string_view id;
  std::optional<std::string_view> user_id, team_id, status, last_event_status, status_detail, interpretation;
  int64_t seq = 0;
  std::string_view data;  // JSON object
};

struct StoredLabAppointment {
  std::string_view id;
  std::optional<std::string_view> order_id, user_id, status, event_status, start_at, end_at;
  int64_t seq = 0;
  std::string_view data;
};

struct StoredLabResult {
  std::string_view order_id;
  std::optional<std::string_view> user_id, sample_id, status, interpretation;
  int64_t seq = 0;
  std::string_view data;
};

struct StoredParsingJob {
  std::string_view id;
  std::optional<std::string_view> status, failure_reason;
  std::optional<bool> needs_human_review, is_reviewed;
  std::optional<std::string_view> results;  // JSON, once completed
  int64_t seq = 0;
  std::string_view data;
  // The follow-up that fetches a completed job's results (kind parsing_job): queued |
  // running | done | dead, none when the job needed none.
  std::optional<std::string_view> job_state, job_error;
  std::optional<int64_t> job_attempts;
};

// A backfill window and how its fetch job stands: queued | running | done | dead, none
// when no job exists (never for windows the processor recorded).
struct StoredBackfill {
  std::string_view user_id, resource, provider;
  int64_t start_ms = 0, end_ms = 0;
  std::optional<bool> is_final;
  int64_t seq = 0;
  std::optional<std::string_view> job_state, job_error;
  std::optional<int64_t> job_attempts;
};

struct StoredUser {
  std::string_view user_id;
  std::optional<std::string_view> client_user_id, team_id;
  int64_t first_seen_ms = 0, last_seen_ms = 0;
  int64_t seq = 0;
};

// A row of the record of erasures (`erasures`: migration 006); its row counts are left out.
struct StoredErasure {
  int64_t erasure_id = 0;
  std::string_view user_id;
  int64_t erased_at_ms = 0;  // when the erasure committed (Unix ms, UTC)
};

struct StoredProvider {
  std::string_view slug;
  std::optional<std::string_view> name, description, logo, auth_type;
  std::optional<std::string_view> supported_resources;  // JSON array
  int64_t seq = 0;
};

}  // namespace hh::store
