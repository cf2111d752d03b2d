#include "store/postgres/read/pg_record_queries.h"

#include <string>

#include "store/read_query_common.h"

namespace hh::store::pgread {
namespace {

// Per row type: `columns` (RecordShape<Row>::read's, FROM …), `where` with its filters as
// $1… (RecordShape<Row>::filters' order), `order` (text keys bytewise), and `key_where`:
// the row of a change-feed key, its parts $1….
template <typename Row>
struct PgRecordTable;

template <>
struct PgRecordTable<StoredConnection> {
  static constexpr std::string_view columns =
      "SELECT user_id, provider, status, external_user_id, error_type, error_message, resource_availability, "
      "event_type, seq, data, deregistered_at FROM connections ";
  static constexpr std::string_view where =
      "($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR provider = $2)";
  static constexpr std::string_view order = "user_id COLLATE \"C\", provider COLLATE \"C\"";
  static constexpr std::string_view key_where = "user_id = $1 AND provider = $2";
};

template <>
struct PgRecordTable<StoredDevice> {
  static constexpr std::string_view columns =
      "SELECT id, user_id, provider, source_type, app_id, device_manufacturer, device_model, device_version, "
      "device_id, seq, data FROM devices ";
  static constexpr std::string_view where =
      "($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR provider = $2)";
  static constexpr std::string_view order = "id COLLATE \"C\"";
  static constexpr std::string_view key_where = "id = $1";
};

template <>
struct PgRecordTable<StoredLabOrder> {
  static constexpr std::string_view columns =
      "SELECT id, user_id, team_id, status, last_event_status, status_detail, interpretation, seq, data "
      "FROM lab_orders ";
  static constexpr std::string_view where =
      "($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR id = $3)";
  static constexpr std::string_view order = "id COLLATE \"C\"";
  static constexpr std::string_view key_where = "id = $1";
};

template <>
struct PgRecordTable<StoredLabAppointment> {
  static constexpr std::string_view columns =
      "SELECT id, order_id, user_id, status, event_status, start_at, end_at, seq, data FROM lab_appointments ";
  static constexpr std::string_view where =
      "($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR status = $2) "
      "AND ($3::text IS NULL OR order_id = $3)";
  static constexpr std::string_view order = "id COLLATE \"C\"";
  static constexpr std::string_view key_where = "id = $1";
};

template <>
struct PgRecordTable<StoredLabResult> {
  static constexpr std::string_view columns =
      "SELECT order_id, user_id, sample_id, status, interpretation, seq, data FROM lab_results ";
  static constexpr std::string_view where =
      "($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR status = $2) "
      "AND ($3::text IS NULL OR order_id = $3)";
  static constexpr std::string_view order = "order_id COLLATE \"C\"";
  static constexpr std::string_view key_where = "order_id = $1";
};

// The results follow-up's key is the job's id (store/sqlite/derived/follow_up_jobs.h).
template <>
struct PgRecordTable<StoredParsingJob> {
  static constexpr std::string_view columns =
      "SELECT p.id, p.status, p.failure_reason, p.needs_human_review, p.is_reviewed, p.results, p.seq, p.data, "
      "j.state, j.last_error, j.attempts FROM lab_parsing_jobs AS p "
      "LEFT JOIN jobs AS j ON j.kind = 'parsing_job' AND j.job_key = p.id ";
  static constexpr std::string_view where = "($1::text IS NULL OR p.status = $1)";
  static constexpr std::string_view order = "p.id COLLATE \"C\"";
  static constexpr std::string_view key_where = "p.id = $1";
};

// The job's key is the backfill's (store/sqlite/derived/follow_up_jobs.h): one lookup in the
// jobs (kind, job_key) index per window.
template <>
struct PgRecordTable<StoredBackfill> {
  static constexpr std::string_view columns =
      "SELECT b.user_id, b.resource, b.provider, b.start_ms, b.end_ms, b.is_final, b.seq, j.state, j.last_error, "
      "j.attempts FROM backfills AS b LEFT JOIN jobs AS j ON j.kind = 'backfill' AND "
      "j.job_key = b.user_id || '/' || b.resource || '/' || b.provider || '/' || b.start_ms || '/' || b.end_ms ";
  static constexpr std::string_view where =
      "($1::text IS NULL OR b.user_id = $1) AND ($2::text IS NULL OR b.provider = $2) "
      "AND ($3::text IS NULL OR b.resource = $3)";
  static constexpr std::string_view order =
      "b.user_id COLLATE \"C\", b.resource COLLATE \"C\", b.provider COLLATE \"C\", b.start_ms, b.end_ms";
  // The key's times compared as text (the change feed writes each as its number's text): a
  // malformed key finds no row, as in SQLite, instead of failing a cast.
  static constexpr std::string_view key_where =
      "b.user_id = $1 AND b.resource = $2 AND b.provider = $3 AND b.start_ms::text = $4 AND b.end_ms::text = $5";
};

template <>
struct PgRecordTable<StoredUser> {
  static constexpr std::string_view columns =
      "SELECT user_id, client_user_id, team_id, first_seen_ms, last_seen_ms, seq FROM users ";
  static constexpr std::string_view where = "($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR client_user_id = $2)";
  static constexpr std::string_view order = "user_id COLLATE \"C\"";
  static constexpr std::string_view key_where = "user_id = $1";
};

template <>
struct PgRecordTable<StoredProvider> {
  static constexpr std::string_view columns =
      "SELECT slug, name, description, logo, auth_type, supported_resources, seq FROM providers ";
  static constexpr std::string_view where = "($1::text IS NULL OR slug = $1)";
  static constexpr std::string_view order = "slug COLLATE \"C\"";
  static constexpr std::string_view key_where = "slug = $1";
};

// The listing and the lookup of a row type: built once.
template <typename Row>
const std::string& listing_sql() {
  static const std::string sql = std::string(PgRecordTable<Row>::columns) + "WHERE " +
                                 std::string(PgRecordTable<Row>::where) + " ORDER BY " +
                                 std::string(PgRecordTable<Row>::order);
  return sql;
}

template <typename Row>
const std::string& key_sql() {
  static const std::string sql =
      std::string(PgRecordTable<Row>::columns) + "WHERE " + std::string(PgRecordTable<Row>::key_where);
  return sql;
}

}  // namespace

template <typename Row>
Result<void> PgRecordQuery<Row>::start(const RecordFilter& filter) {
  pg::Params params;
  for (const std::optional<std::string>* value : RecordShape<Row>::filters(filter)) params.add(*value);
  return rows_.open_cursor(listing_sql<Row>(), params);
}

template <typename Row>
Result<void> PgRecordQuery<Row>::start_by_key(std::string_view change_key) {
  rows_.close();
  const auto key = split_change_key(change_key, RecordShape<Row>::key_parts);
  if (!key) return fail(not_a_record_key_error(change_key));
  pg::Params params;
  for (size_t part = 0; part < RecordShape<Row>::key_parts; ++part) params.add((*key)[part]);
  return rows_.open_listing(key_sql<Row>(), params);
}

template <typename Row>
Result<bool> PgRecordQuery<Row>::next(Row& row) {
  ResultRow s;
  auto has_row = rows_.next(s);
  if (has_row && *has_row) RecordShape<Row>::read(s, row);
  return has_row;
}

template class PgRecordQuery<StoredConnection>;
template class PgRecordQuery<StoredDevice>;
template class PgRecordQuery<StoredLabOrder>;
template class PgRecordQuery<StoredLabAppointment>;
template class PgRecordQuery<StoredLabResult>;
template class PgRecordQuery<StoredParsingJob>;
template class PgRecordQuery<StoredBackfill>;
template class PgRecordQuery<StoredUser>;
template class PgRecordQuery<StoredProvider>;

}  // namespace hh::store::pgread
