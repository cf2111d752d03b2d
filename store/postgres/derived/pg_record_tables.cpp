#include "store/postgres/derived/pg_record_tables.h"

namespace hh::store {
namespace {

using namespace columns;

Result<PgLatestWins> pg_record_table(pg::Connection& db, std::string_view name, std::span<const Names> keys,
                                     std::span<const Names> values) {
  return PgLatestWins::create(db, "hh_derived_" + std::string(name), LatestWinsSpec{name, keys, values, {}});
}

// A flag as the tables keep it: 0/1 (bigint, as in SQLite), NULL when absent.
pg::Params& pg_flag(pg::Params& p, std::optional<bool> value) {
  return value ? p.add(int64_t{*value ? 1 : 0}) : p.add_null();
}

}  // namespace

Result<PgRecordTables> PgRecordTables::create(pg::Connection& db) {
  auto summaries = pg_record_table(db, "summaries", kSummaryKeys, kSummaryValues);
  if (!summaries) return fail(summaries.error_kind(), summaries.error());
  auto connections = pg_record_table(db, "connections", kConnectionKeys, kConnectionValues);
  if (!connections) return fail(connections.error_kind(), connections.error());
  auto devices = pg_record_table(db, "devices", kIdKey, kDeviceValues);
  if (!devices) return fail(devices.error_kind(), devices.error());
  auto lab_orders = pg_record_table(db, "lab_orders", kIdKey, kLabOrderValues);
  if (!lab_orders) return fail(lab_orders.error_kind(), lab_orders.error());
  auto lab_appointments = pg_record_table(db, "lab_appointments", kIdKey, kLabAppointmentValues);
  if (!lab_appointments) return fail(lab_appointments.error_kind(), lab_appointments.error());
  auto lab_results = pg_record_table(db, "lab_results", kOrderIdKey, kLabResultValues);
  if (!lab_results) return fail(lab_results.error_kind(), lab_results.error());
  auto lab_parsing_jobs = pg_record_table(db, "lab_parsing_jobs", kIdKey, kLabParsingJobValues);
  if (!lab_parsing_jobs) return fail(lab_parsing_jobs.error_kind(), lab_parsing_jobs.error());
  auto backfills = pg_record_table(db, "backfills", kBackfillKeys, kBackfillValues);
  if (!backfills) return fail(backfills.error_kind(), backfills.error());
  auto providers = pg_record_table(db, "providers", kSlugKey, kProviderValues);
  if (!providers) return fail(providers.error_kind(), providers.error());
  // $1 user_id, $2 provider, $3 deregistered_at, $4 event_type, $5 seq.
  auto deregistrations = PgLatestWins::create(
      db, "hh_derived_deregistration",
      "INSERT INTO connections AS cur (user_id, provider, status, deregistered_at, event_type, seq, data) "
      "VALUES ($1, $2, 'deregistered', $3, $4, $5, '{}') ON CONFLICT (user_id, provider) DO UPDATE SET "
      "status = 'deregistered', deregistered_at = excluded.deregistered_at, event_type = excluded.event_type, "
      "seq = excluded.seq WHERE cur.seq < excluded.seq RETURNING (xmax = 0) AS inserted");
  if (!deregistrations) return fail(deregistrations.error_kind(), deregistrations.error());
  return PgRecordTables(std::move(*summaries), std::move(*connections), std::move(*devices), std::move(*lab_orders),
                        std::move(*lab_appointments), std::move(*lab_results), std::move(*lab_parsing_jobs),
                        std::move(*backfills), std::move(*providers), std::move(*deregistrations));
}

Result<WriteOutcome> PgRecordTables::write(const events::SummaryRow& row, int64_t seq) {
  pg::Params p;
  p.add(row.resource).add(row.id).add(row.user_id).add(row.provider).add(row.source_type).add(row.calendar_date);
  p.add(row.start_ms).add(row.end_ms).add(row.app_id).add(seq).add(row.data_json);
  return summaries_.write(p);
}

Result<WriteOutcome> PgRecordTables::write(const events::ConnectionRow& row, int64_t seq) {
  pg::Params p;
  p.add(row.user_id).add(row.provider).add(row.status).add(row.external_user_id).add(row.error_type);
  p.add(row.error_message).add(row.resource_availability_json);
  p.add_null();  // deregistered_at: a connection event (re)connects
  p.add(row.event_type).add(seq).add(row.data_json);
  return connections_.write(p);
}

Result<WriteOutcome> PgRecordTables::write(const events::DeregistrationRow& row, int64_t seq) {
  pg::Params p;
  p.add(row.user_id).add(row.provider).add(row.deregistered_at_ms).add(row.event_type).add(seq);
  return deregistrations_.write(p);
}

Result<WriteOutcome> PgRecordTables::write(const events::DeviceRow& row, int64_t seq) {
  pg::Params p;
  p.add(row.id).add(row.user_id).add(row.provider).add(row.source_type).add(row.app_id).add(row.device_manufacturer);
  p.add(row.device_model).add(row.device_version).add(row.device_id).add(seq).add(row.data_json);
  return devices_.write(p);
}

Result<WriteOutcome> PgRecordTables::write(const events::LabOrderRow& row, int64_t seq) {
  pg::Params p;
  p.add(row.id).add(row.user_id).add(row.team_id).add(row.status).add(row.last_event_status);
  p.add(row.status_detail).add(row.interpretation).add(seq).add(row.data_json);
  return lab_orders_.write(p);
}

Result<WriteOutcome> PgRecordTables::write(const events::LabAppointmentRow& row, int64_t seq) {
  pg::Params p;
  p.add(row.id).add(row.order_id).add(row.user_id).add(row.status).add(row.event_status).add(row.start_at);
  p.add(row.end_at).add(seq).add(row.data_json);
  return lab_appointments_.write(p);
}

Result<WriteOutcome> PgRecordTables::write(const events::LabResultRow& row, int64_t seq) {
  pg::Params p;
  p.add(row.order_id).add(row.user_id).add(row.sample_id).add(row.status).add(row.interpretation).add(seq);
  p.add(row.data_json);
  return lab_results_.write(p);
}

Result<WriteOutcome> PgRecordTables::write(const events::LabParsingJobRow& row, int64_t seq) {
  pg::Params p;
  p.add(row.id).add(row.user_id).add(row.status).add(row.failure_reason);
  pg_flag(p, row.needs_human_review);
  pg_flag(p, row.is_reviewed);
  p.add(row.results_json).add(seq).add(row.data_json);
  return lab_parsing_jobs_.write(p);
}

Result<WriteOutcome> PgRecordTables::write(const events::BackfillNotice& row, int64_t seq) {
  pg::Params p;
  p.add(row.user_id).add(row.resource).add(row.provider).add(row.start_ms).add(row.end_ms);
  pg_flag(p, row.is_final);
  p.add(seq);
  return backfills_.write(p);
}

Result<WriteOutcome> PgRecordTables::write(const events::ProviderRow& row, int64_t seq) {
  pg::Params p;
  p.add(row.slug).add(row.name).add(row.description).add(row.logo).add(row.auth_type);
  p.add(row.supported_resources_json).add(seq).add(row.data_json);
  return providers_.write(p);
}

}  // namespace hh::store
