#pragma once
// The tables with one row per key, each described once (store/schema/record_fields.h says
// how to read a description): summaries, connections, devices, lab_orders,
// lab_appointments, lab_results, lab_parsing_jobs, backfills, users, providers. What each
// column means: store/sqlite/migrations/002-derived.sql and 005-identity.sql.
//
// Each description is a struct with
//   name        the table
//   Written     the parsed row its latest-wins write takes (void: written otherwise)
//   Stored      the read row (store/read_rows.h) its listings hand out
//   fields      the columns, key first, in bind and read order
//   from        the FROM clause of its reads; the table is `t` (joins for joined fields)
//   filters     the RecordFilter members its listings take, and the column each compares
//   user        the column that names the user ("" for none)
//
// A new column of one of these tables: a line here and a migration per backend
// (store/sqlite/migrations/, store/postgres/migrations/); schema_check_test fails until
// all three agree.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "rows/delivery_rows.h"
#include "store/read_rows.h"
#include "store/schema/record_fields.h"
#include "store/schema/record_rows.h"
#include "store/schema/tables.h"

namespace hh::store::schema {

// A listing's filter: a RecordFilter member compared with a column for equality.
struct RecordFilterColumn {
  std::optional<std::string> RecordFilter::*filter;
  std::string_view column;
};

struct Summaries {
  static constexpr std::string_view name = "summaries";
  using Written = rows::SummaryRow;
  using Stored = StoredSummary;
  static constexpr auto fields = std::tuple{
      key("resource", &Written::resource, &Stored::resource),
      key("id", &Written::id, &Stored::id),
      indexed(column("user_id", &Written::user_id, &Stored::user_id)),
      column("provider", &Written::provider, &Stored::provider),
      column("source_type", &Written::source_type, &Stored::source_type),
      indexed(column("calendar_date", &Written::calendar_date, no_member)),
      column("start_ms", &Written::start_ms, &Stored::start_ms),
      column("end_ms", &Written::end_ms, no_member),
      column("app_id", &Written::app_id, no_member),
      seq(&Stored::seq),
      as_json(column("data", &Written::data_json, &Stored::data)),
      joined("u.client_user_id", "client_user_id", &Stored::client_user_id),
      joined("p.name", "provider_name", &Stored::provider_name)};
  // The identity columns: one primary-key lookup in users and providers per row.
  static constexpr std::string_view from =
      "summaries AS t LEFT JOIN users AS u ON u.user_id = t.user_id LEFT JOIN providers AS p ON p.slug = t.provider";
  static constexpr std::array<RecordFilterColumn, 0> filters{};  // its listings are store/queries/summary_query.h's
  static constexpr std::string_view user = "user_id";
  static constexpr Erasure erasure{ErasedBy::user, 1};
};

struct Connections {
  static constexpr std::string_view name = "connections";
  using Written = rows::ConnectionRow;
  using Stored = StoredConnection;
  static constexpr auto fields = std::tuple{
      key("user_id", &Written::user_id, &Stored::user_id),
      key("provider", &Written::provider, &Stored::provider),
      column("status", &Written::status, &Stored::status),
      // Set by `user deregister` (Deregistrations below); a connection event reconnects.
      as_time(cleared("deregistered_at", &Stored::deregistered_at_ms)),
      // An error event carries neither of these two: the connection's are kept. A created
      // event's (null included: the provider gave none) replace them.
      kept_when_null_and(column("external_user_id", &Written::external_user_id, &Stored::external_user_id), "status",
                         "'error'"),
      column("error_type", &Written::error_type, &Stored::error_type),
      column("error_message", &Written::error_message, &Stored::error_message),
      kept_when_null_and(
          as_json(column("resource_availability", &Written::resource_availability_json, &Stored::resource_availability)),
          "status", "'error'"),
      column("event_type", &Written::event_type, &Stored::event_type),
      seq(&Stored::seq),
      as_json(column("data", &Written::data_json, &Stored::data))};
  static constexpr std::string_view from = "connections AS t";
  static constexpr std::array filters{RecordFilterColumn{&RecordFilter::user_id, "user_id"},
                                      RecordFilterColumn{&RecordFilter::provider, "provider"}};
  static constexpr std::string_view user = "user_id";
  static constexpr Erasure erasure{ErasedBy::user, 3};
};

struct Devices {
  static constexpr std::string_view name = "devices";
  using Written = rows::DeviceRow;
  using Stored = StoredDevice;
  static constexpr auto fields = std::tuple{
      key("id", &Written::id, &Stored::id),
      column("user_id", &Written::user_id, &Stored::user_id),
      column("provider", &Written::provider, &Stored::provider),
      column("source_type", &Written::source_type, &Stored::source_type),
      column("app_id", &Written::app_id, &Stored::app_id),
      column("device_manufacturer", &Written::device_manufacturer, &Stored::device_manufacturer),
      column("device_model", &Written::device_model, &Stored::device_model),
      column("device_version", &Written::device_version, &Stored::device_version),
      column("device_id", &Written::device_id, &Stored::device_id),
      seq(&Stored::seq),
      as_json(column("data", &Written::data_json, &Stored::data))};
  static constexpr std::string_view from = "devices AS t";
  static constexpr std::array filters{RecordFilterColumn{&RecordFilter::user_id, "user_id"},
                                      RecordFilterColumn{&RecordFilter::provider, "provider"}};
  static constexpr std::string_view user = "user_id";
  static constexpr Erasure erasure{ErasedBy::user, 3};
};

struct LabOrders {
  static constexpr std::string_view name = "lab_orders";
  using Written = rows::LabOrderRow;
  using Stored = StoredLabOrder;
  static constexpr auto fields = std::tuple{
      key("id", &Written::id, &Stored::id),
      column("user_id", &Written::user_id, &Stored::user_id),
      column("team_id", &Written::team_id, &Stored::team_id),
      column("status", &Written::status, &Stored::status),
      column("last_event_status", &Written::last_event_status, &Stored::last_event_status),
      column("status_detail", &Written::status_detail, &Stored::status_detail),
      column("interpretation", &Written::interpretation, &Stored::interpretation),
      seq(&Stored::seq),
      as_json(column("data", &Written::data_json, &Stored::data))};
  static constexpr std::string_view from = "lab_orders AS t";
  static constexpr std::array filters{RecordFilterColumn{&RecordFilter::user_id, "user_id"},
                                      RecordFilterColumn{&RecordFilter::status, "status"},
                                      RecordFilterColumn{&RecordFilter::order_id, "id"}};
  static constexpr std::string_view user = "user_id";
  static constexpr Erasure erasure{ErasedBy::user, 3};
};

struct LabAppointments {
  static constexpr std::string_view name = "lab_appointments";
  using Written = rows::LabAppointmentRow;
  using Stored = StoredLabAppointment;
  static constexpr auto fields = std::tuple{
      key("id", &Written::id, &Stored::id),
      column("order_id", &Written::order_id, &Stored::order_id),
      column("user_id", &Written::user_id, &Stored::user_id),
      column("status", &Written::status, &Stored::status),
      column("event_status", &Written::event_status, &Stored::event_status),
      column("start_at", &Written::start_at, &Stored::start_at),
      column("end_at", &Written::end_at, &Stored::end_at),
      seq(&Stored::seq),
      as_json(column("data", &Written::data_json, &Stored::data))};
  static constexpr std::string_view from = "lab_appointments AS t";
  static constexpr std::array filters{RecordFilterColumn{&RecordFilter::user_id, "user_id"},
                                      RecordFilterColumn{&RecordFilter::status, "status"},
                                      RecordFilterColumn{&RecordFilter::order_id, "order_id"}};
  static constexpr std::string_view user = "user_id";
  static constexpr Erasure erasure{ErasedBy::user, 3};
};

struct LabResults {
  static constexpr std::string_view name = "lab_results";
  using Written = rows::LabResultRow;
  using Stored = StoredLabResult;
  static constexpr auto fields = std::tuple{
      key("order_id", &Written::order_id, &Stored::order_id),
      column("user_id", &Written::user_id, &Stored::user_id),
      column("sample_id", &Written::sample_id, &Stored::sample_id),
      column("status", &Written::status, &Stored::status),
      column("interpretation", &Written::interpretation, &Stored::interpretation),
      seq(&Stored::seq),
      as_json(column("data", &Written::data_json, &Stored::data))};
  static constexpr std::string_view from = "lab_results AS t";
  static constexpr std::array filters{RecordFilterColumn{&RecordFilter::user_id, "user_id"},
                                      RecordFilterColumn{&RecordFilter::status, "status"},
                                      RecordFilterColumn{&RecordFilter::order_id, "order_id"}};
  static constexpr std::string_view user = "user_id";
  static constexpr Erasure erasure{ErasedBy::user, 3};
};

// A parsing job's data names nobody; its user is the envelope's (kept for erasure, not
// listed): only the status filter. The results follow-up's key is the job's id
// (store/jobs/: kind parsing_job).
struct LabParsingJobs {
  static constexpr std::string_view name = "lab_parsing_jobs";
  using Written = rows::LabParsingJobRow;
  using Stored = StoredParsingJob;
  static constexpr auto fields = std::tuple{
      key("id", &Written::id, &Stored::id),
      indexed(column("user_id", &Written::user_id, no_member)),
      column("status", &Written::status, &Stored::status),
      column("failure_reason", &Written::failure_reason, &Stored::failure_reason),
      column("needs_human_review", &Written::needs_human_review, &Stored::needs_human_review),
      column("is_reviewed", &Written::is_reviewed, &Stored::is_reviewed),
      as_json(column("results", &Written::results_json, &Stored::results)),
      seq(&Stored::seq),
      as_json(column("data", &Written::data_json, &Stored::data)),
      joined("j.state", "job_state", &Stored::job_state),
      joined("j.attempts", "job_attempts", &Stored::job_attempts),
      joined("j.last_error", "job_error", &Stored::job_error)};
  static constexpr std::string_view from =
      "lab_parsing_jobs AS t LEFT JOIN jobs AS j ON j.kind = 'parsing_job' AND j.job_key = t.id";
  static constexpr std::array filters{RecordFilterColumn{&RecordFilter::status, "status"}};
  static constexpr std::string_view user = "user_id";
  static constexpr Erasure erasure{ErasedBy::user, 3};
};

// A window's fetch job has the backfill's key (store/jobs/backfill_job.h): one lookup in
// the jobs (kind, job_key) index per window.
struct Backfills {
  static constexpr std::string_view name = "backfills";
  using Written = rows::BackfillNotice;
  using Stored = StoredBackfill;
  static constexpr auto fields = std::tuple{
      key("user_id", &Written::user_id, &Stored::user_id),
      key("resource", &Written::resource, &Stored::resource),
      key("provider", &Written::provider, &Stored::provider),
      as_time(key("start_ms", &Written::start_ms, &Stored::start_ms)),
      as_time(key("end_ms", &Written::end_ms, &Stored::end_ms)),
      column("is_final", &Written::is_final, &Stored::is_final),
      seq(&Stored::seq),
      joined("j.state", "job_state", &Stored::job_state),
      joined("j.attempts", "job_attempts", &Stored::job_attempts),
      joined("j.last_error", "job_error", &Stored::job_error)};
  static constexpr std::string_view from =
      "backfills AS t LEFT JOIN jobs AS j ON j.kind = 'backfill' AND "
      "j.job_key = t.user_id || '/' || t.resource || '/' || t.provider || '/' || t.start_ms || '/' || t.end_ms";
  static constexpr std::array filters{RecordFilterColumn{&RecordFilter::user_id, "user_id"},
                                      RecordFilterColumn{&RecordFilter::provider, "provider"},
                                      RecordFilterColumn{&RecordFilter::resource, "resource"}};
  static constexpr std::string_view user = "user_id";
  static constexpr Erasure erasure{ErasedBy::user, 3};
};

// Written by the users part of each backend's derived writer (its rules: store/derived/user_table.h).
struct Users {
  static constexpr std::string_view name = "users";
  using Written = void;
  using Stored = StoredUser;
  static constexpr auto fields = std::tuple{
      key("user_id", no_member, &Stored::user_id),
      column("client_user_id", no_member, &Stored::client_user_id),
      column("team_id", no_member, &Stored::team_id),
      as_time(column("first_seen_ms", no_member, &Stored::first_seen_ms)),
      as_time(column("last_seen_ms", no_member, &Stored::last_seen_ms)),
      column("seq", no_member, &Stored::seq)};
  static constexpr std::string_view from = "users AS t";
  static constexpr std::array filters{RecordFilterColumn{&RecordFilter::user_id, "user_id"},
                                      RecordFilterColumn{&RecordFilter::client_user_id, "client_user_id"}};
  static constexpr std::string_view user = "user_id";
  static constexpr Erasure erasure{ErasedBy::user, 6};
};

struct Providers {
  static constexpr std::string_view name = "providers";
  using Written = rows::ProviderRow;
  using Stored = StoredProvider;
  static constexpr auto fields = std::tuple{
      key("slug", &Written::slug, &Stored::slug),
      column("name", &Written::name, &Stored::name),
      column("description", &Written::description, &Stored::description),
      column("logo", &Written::logo, &Stored::logo),
      column("auth_type", &Written::auth_type, &Stored::auth_type),
      as_json(column("supported_resources", &Written::supported_resources_json, &Stored::supported_resources)),
      seq(&Stored::seq),
      as_json(column("data", &Written::data_json, no_member))};
  static constexpr std::string_view from = "providers AS t";
  static constexpr std::array filters{RecordFilterColumn{&RecordFilter::provider, "slug"}};
  static constexpr std::string_view user = "";
  static constexpr Erasure erasure{};
};

// `healthhook user deregister`'s record (fetch.deregistration), a second write of
// connections: the connection marked deregistered (status, deregistered_at, event_type,
// seq), its other fields kept; a connection not seen yet gets a row with data '{}'. Not a
// table of its own: written only, never listed.
struct Deregistrations {
  static constexpr std::string_view name = "connections";
  static constexpr std::string_view write = "deregistration";
  using Written = rows::DeregistrationRow;
  static constexpr auto fields = std::tuple{key("user_id", &Written::user_id, no_member),
                                            key("provider", &Written::provider, no_member),
                                            column("deregistered_at", &Written::deregistered_at_ms, no_member),
                                            column("event_type", &Written::event_type, no_member),
                                            seq(no_member)};
  static constexpr std::array fixed{FixedValue{"status", "'deregistered'"}};
  static constexpr std::array insert_only{FixedValue{"data", "'{}'"}};
};

// The descriptions of the tables written by latest wins (and Deregistrations, a second
// write of connections), and those read by RecordQuery.
using LatestWinsTables =
    std::tuple<Summaries, Connections, Devices, LabOrders, LabAppointments, LabResults, LabParsingJobs, Backfills,
               Providers, Deregistrations>;

}  // namespace hh::store::schema
