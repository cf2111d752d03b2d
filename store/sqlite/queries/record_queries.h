#pragma once
// Reads the tables with one row per key, for `healthhook query <table>` and the read
// API's per-user pages: connections, devices, lab orders, appointments and results,
// parsing jobs, backfills, users and providers. Every listing is in primary-key order
// (no sort, constant memory), filtered by the members of RecordFilter its table has
// (the others are ignored).
//
// One class template, RecordQuery<Row>, does the stepping; each row type says in
// record_queries.cpp which SQL it reads and how its columns become the row, and the
// template is instantiated there for the row types below (and only those).
//
// Lifetime: the connection must outlive the query; one thread at a time. Views are valid
// until the next next()/start call.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

// Filters, each optional (absent = any). A listing uses those its table has: user_id
// (all but providers), provider (connections, devices, backfills), resource (backfills),
// status (lab orders, appointments, results and parsing jobs: their status column as
// stored), order_id (orders: their id; appointments, results).
struct RecordFilter {
  std::optional<std::string> user_id;
  std::optional<std::string> provider;
  std::optional<std::string> resource;
  std::optional<std::string> status;
  std::optional<std::string> order_id;
};
using ConnectionFilter = RecordFilter;
using LabOrderFilter = RecordFilter;

struct StoredConnection {
  std::string_view user_id, provider, status;
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
};

// A backfill window and how its fetch job stands (jobs row of kind 'backfill', joined on
// its key): queued | running | done | dead, NULL when no job exists (never for windows
// the processor recorded).
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

struct StoredProvider {
  std::string_view slug;
  std::optional<std::string_view> name, description, logo, auth_type;
  std::optional<std::string_view> supported_resources;  // JSON array
  int64_t seq = 0;
};

template <typename Row>
class RecordQuery {
 public:
  static Result<RecordQuery> create(sqlite::Connection& db);
  void start(const RecordFilter& filter);
  // False when there are no more rows (the statement is then reset).
  Result<bool> next(Row& row);
  // Resets a listing stopped early (ends its read snapshot).
  void finish() { all_.reset(); }

 private:
  explicit RecordQuery(sqlite::Statement all) : all_(std::move(all)) {}
  sqlite::Statement all_;
};

using ConnectionQuery = RecordQuery<StoredConnection>;
using DeviceQuery = RecordQuery<StoredDevice>;
using LabOrderQuery = RecordQuery<StoredLabOrder>;
using LabAppointmentQuery = RecordQuery<StoredLabAppointment>;
using LabResultQuery = RecordQuery<StoredLabResult>;
using ParsingJobQuery = RecordQuery<StoredParsingJob>;
using BackfillQuery = RecordQuery<StoredBackfill>;
using UserQuery = RecordQuery<StoredUser>;
using ProviderQuery = RecordQuery<StoredProvider>;

extern template class RecordQuery<StoredConnection>;
extern template class RecordQuery<StoredDevice>;
extern template class RecordQuery<StoredLabOrder>;
extern template class RecordQuery<StoredLabAppointment>;
extern template class RecordQuery<StoredLabResult>;
extern template class RecordQuery<StoredParsingJob>;
extern template class RecordQuery<StoredBackfill>;
extern template class RecordQuery<StoredUser>;
extern template class RecordQuery<StoredProvider>;

}  // namespace hh::store
