#include "store/sqlite/derived/record_tables.h"

#include <array>

namespace hh::store {
namespace {

using namespace columns;

Result<LatestWins> table(sqlite::Connection& db, std::string_view name, std::span<const Names> keys,
                         std::span<const Names> values, std::span<const Names> indexed = {}) {
  return LatestWins::create(db, LatestWinsSpec{name, keys, values, indexed});
}

// Binds text that may be absent: the views stay live until the statement is reset.
void text(sqlite::Statement& s, int index, std::optional<std::string_view> value) {
  if (value) {
    s.bind_static(index, *value);
  } else {
    s.bind_null(index);
  }
}

void flag(sqlite::Statement& s, int index, std::optional<bool> value) {
  if (value) {
    s.bind(index, int64_t{*value ? 1 : 0});
  } else {
    s.bind_null(index);
  }
}

}  // namespace

Result<RecordTables> RecordTables::create(sqlite::Connection& db) {
  auto summaries = table(db, "summaries", kSummaryKeys, kSummaryValues, kSummaryIndexed);
  if (!summaries) return fail(summaries.error());
  auto connections = table(db, "connections", kConnectionKeys, kConnectionValues);
  if (!connections) return fail(connections.error());
  auto devices = table(db, "devices", kIdKey, kDeviceValues);
  if (!devices) return fail(devices.error());
  auto lab_orders = table(db, "lab_orders", kIdKey, kLabOrderValues);
  if (!lab_orders) return fail(lab_orders.error());
  auto lab_appointments = table(db, "lab_appointments", kIdKey, kLabAppointmentValues);
  if (!lab_appointments) return fail(lab_appointments.error());
  auto lab_results = table(db, "lab_results", kOrderIdKey, kLabResultValues);
  if (!lab_results) return fail(lab_results.error());
  auto lab_parsing_jobs = table(db, "lab_parsing_jobs", kIdKey, kLabParsingJobValues, kLabParsingJobIndexed);
  if (!lab_parsing_jobs) return fail(lab_parsing_jobs.error());
  auto backfills = table(db, "backfills", kBackfillKeys, kBackfillValues);
  if (!backfills) return fail(backfills.error());
  auto providers = table(db, "providers", kSlugKey, kProviderValues);
  if (!providers) return fail(providers.error());
  // ?1 user_id, ?2 provider, ?3 deregistered_at, ?4 event_type, ?5 seq.
  auto deregistrations = LatestWins::create(
      db,
      "INSERT INTO connections (user_id, provider, status, deregistered_at, event_type, seq, data) "
      "VALUES (?1, ?2, 'deregistered', ?3, ?4, ?5, '{}') ON CONFLICT DO NOTHING",
      "UPDATE connections SET status = 'deregistered', deregistered_at = ?3, event_type = ?4, seq = ?5 "
      "WHERE user_id = ?1 AND provider = ?2 AND seq < ?5");
  if (!deregistrations) return fail(deregistrations.error());
  return RecordTables(std::move(*summaries), std::move(*connections), std::move(*devices), std::move(*lab_orders),
                      std::move(*lab_appointments), std::move(*lab_results), std::move(*lab_parsing_jobs),
                      std::move(*backfills), std::move(*providers), std::move(*deregistrations));
}

Result<WriteOutcome> RecordTables::write(const events::SummaryRow& row, int64_t seq) {
  return summaries_.write([&](sqlite::Statement& s) {
    s.bind_static(1, row.resource).bind_static(2, row.id);
    text(s, 3, row.user_id);
    text(s, 4, row.provider);
    s.bind_static(5, row.source_type);
    text(s, 6, row.calendar_date);
    s.bind(7, row.start_ms).bind(8, row.end_ms);
    text(s, 9, row.app_id);
    s.bind(10, seq).bind_static(11, row.data_json);
  });
}

Result<WriteOutcome> RecordTables::write(const events::ConnectionRow& row, int64_t seq) {
  return connections_.write([&](sqlite::Statement& s) {
    s.bind_static(1, row.user_id).bind_static(2, row.provider).bind_static(3, row.status);
    text(s, 4, row.external_user_id);
    text(s, 5, row.error_type);
    text(s, 6, row.error_message);
    text(s, 7, row.resource_availability_json);
    s.bind_null(8);  // deregistered_at: a connection event (re)connects
    s.bind_static(9, row.event_type).bind(10, seq).bind_static(11, row.data_json);
  });
}

Result<WriteOutcome> RecordTables::write(const events::DeregistrationRow& row, int64_t seq) {
  return deregistrations_.write([&](sqlite::Statement& s) {
    s.bind_static(1, row.user_id).bind_static(2, row.provider).bind(3, row.deregistered_at_ms);
    s.bind_static(4, row.event_type).bind(5, seq);
  });
}

Result<WriteOutcome> RecordTables::write(const events::DeviceRow& row, int64_t seq) {
  return devices_.write([&](sqlite::Statement& s) {
    s.bind_static(1, row.id);
    text(s, 2, row.user_id);
    text(s, 3, row.provider);
    text(s, 4, row.source_type);
    text(s, 5, row.app_id);
    text(s, 6, row.device_manufacturer);
    text(s, 7, row.device_model);
    text(s, 8, row.device_version);
    text(s, 9, row.device_id);
    s.bind(10, seq).bind_static(11, row.data_json);
  });
}

Result<WriteOutcome> RecordTables::write(const events::LabOrderRow& row, int64_t seq) {
  return lab_orders_.write([&](sqlite::Statement& s) {
    s.bind_static(1, row.id);
    text(s, 2, row.user_id);
    text(s, 3, row.team_id);
    text(s, 4, row.status);
    text(s, 5, row.last_event_status);
    text(s, 6, row.status_detail);
    text(s, 7, row.interpretation);
    s.bind(8, seq).bind_static(9, row.data_json);
  });
}

Result<WriteOutcome> RecordTables::write(const events::LabAppointmentRow& row, int64_t seq) {
  return lab_appointments_.write([&](sqlite::Statement& s) {
    s.bind_static(1, row.id);
    text(s, 2, row.order_id);
    text(s, 3, row.user_id);
    text(s, 4, row.status);
    text(s, 5, row.event_status);
    text(s, 6, row.start_at);
    text(s, 7, row.end_at);
    s.bind(8, seq).bind_static(9, row.data_json);
  });
}

Result<WriteOutcome> RecordTables::write(const events::LabResultRow& row, int64_t seq) {
  return lab_results_.write([&](sqlite::Statement& s) {
    s.bind_static(1, row.order_id);
    text(s, 2, row.user_id);
    text(s, 3, row.sample_id);
    text(s, 4, row.status);
    text(s, 5, row.interpretation);
    s.bind(6, seq).bind_static(7, row.data_json);
  });
}

Result<WriteOutcome> RecordTables::write(const events::LabParsingJobRow& row, int64_t seq) {
  return lab_parsing_jobs_.write([&](sqlite::Statement& s) {
    s.bind_static(1, row.id);
    text(s, 2, row.user_id);
    text(s, 3, row.status);
    text(s, 4, row.failure_reason);
    flag(s, 5, row.needs_human_review);
    flag(s, 6, row.is_reviewed);
    text(s, 7, row.results_json);
    s.bind(8, seq).bind_static(9, row.data_json);
  });
}

Result<WriteOutcome> RecordTables::write(const events::BackfillNotice& row, int64_t seq) {
  return backfills_.write([&](sqlite::Statement& s) {
    s.bind_static(1, row.user_id).bind_static(2, row.resource).bind_static(3, row.provider);
    s.bind(4, row.start_ms).bind(5, row.end_ms);
    flag(s, 6, row.is_final);
    s.bind(7, seq);
  });
}

Result<WriteOutcome> RecordTables::write(const events::ProviderRow& row, int64_t seq) {
  return providers_.write([&](sqlite::Statement& s) {
    s.bind_static(1, row.slug);
    text(s, 2, row.name);
    text(s, 3, row.description);
    text(s, 4, row.logo);
    text(s, 5, row.auth_type);
    text(s, 6, row.supported_resources_json);
    s.bind(7, seq).bind_static(8, row.data_json);
  });
}

}  // namespace hh::store
