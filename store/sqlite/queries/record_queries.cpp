#include "store/sqlite/queries/record_queries.h"

#include <string>

#include "store/read_query_common.h"

namespace hh::store {
namespace {

// What each row type reads: `sql` with its filters as parameters ?1… (in the order of
// RecordShape<Row>::filters, store/read_query_common.h, which also reads the columns);
// `key_where` picks the one row of a change-feed key (store/sqlite/migrations/002-derived.sql:
// composite keys joined with '/'), by the table's primary key.
template <typename Row>
struct RecordTable;

template <>
struct RecordTable<StoredConnection> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "user_id = ?1 AND provider = ?2";
  static constexpr std::string_view sql =
      "SELECT user_id, provider, status, external_user_id, error_type, error_message, resource_availability, "
      "event_type, seq, data, deregistered_at FROM connections "
      "WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR provider = ?2) ORDER BY user_id, provider";
};

template <>
struct RecordTable<StoredDevice> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "id = ?1";
  static constexpr std::string_view sql =
      "SELECT id, user_id, provider, source_type, app_id, device_manufacturer, device_model, device_version, "
      "device_id, seq, data FROM devices "
      "WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR provider = ?2) ORDER BY id";
};

template <>
struct RecordTable<StoredLabOrder> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "id = ?1";
  static constexpr std::string_view sql =
      "SELECT id, user_id, team_id, status, last_event_status, status_detail, interpretation, seq, data "
      "FROM lab_orders WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR status = ?2) "
      "AND (?3 IS NULL OR id = ?3) ORDER BY id";
};

template <>
struct RecordTable<StoredLabAppointment> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "id = ?1";
  static constexpr std::string_view sql =
      "SELECT id, order_id, user_id, status, event_status, start_at, end_at, seq, data FROM lab_appointments "
      "WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR order_id = ?3) "
      "ORDER BY id";
};

template <>
struct RecordTable<StoredLabResult> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "order_id = ?1";
  static constexpr std::string_view sql =
      "SELECT order_id, user_id, sample_id, status, interpretation, seq, data FROM lab_results "
      "WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR order_id = ?3) "
      "ORDER BY order_id";
};

// Parsing jobs carry no user (lab_report.parsing_job.* has none): only the status filter.
// The results follow-up's key is the job's id (store/sqlite/derived/follow_up_jobs.h).
template <>
struct RecordTable<StoredParsingJob> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "p.id = ?1";
  static constexpr std::string_view sql =
      "SELECT p.id, p.status, p.failure_reason, p.needs_human_review, p.is_reviewed, p.results, p.seq, p.data, "
      "j.state, j.last_error, j.attempts FROM lab_parsing_jobs AS p "
      "LEFT JOIN jobs AS j ON j.kind = 'parsing_job' AND j.job_key = p.id "
      "WHERE (?1 IS NULL OR p.status = ?1) ORDER BY p.id";
};

// The job's key is the backfill's (store/sqlite/derived/follow_up_jobs.h): one lookup in the
// jobs (kind, job_key) index per window.
template <>
struct RecordTable<StoredBackfill> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "b.user_id = ?1 AND b.resource = ?2 AND b.provider = ?3 AND b.start_ms = ?4 AND b.end_ms = ?5";
  static constexpr std::string_view sql =
      "SELECT b.user_id, b.resource, b.provider, b.start_ms, b.end_ms, b.is_final, b.seq, j.state, j.last_error, "
      "j.attempts FROM backfills AS b LEFT JOIN jobs AS j ON j.kind = 'backfill' AND "
      "j.job_key = b.user_id || '/' || b.resource || '/' || b.provider || '/' || b.start_ms || '/' || b.end_ms "
      "WHERE (?1 IS NULL OR b.user_id = ?1) AND (?2 IS NULL OR b.provider = ?2) AND (?3 IS NULL OR b.resource = ?3) "
      "ORDER BY b.user_id, b.resource, b.provider, b.start_ms, b.end_ms";
};

template <>
struct RecordTable<StoredUser> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "user_id = ?1";
  static constexpr std::string_view sql =
      "SELECT user_id, client_user_id, team_id, first_seen_ms, last_seen_ms, seq FROM users "
      "WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR client_user_id = ?2) ORDER BY user_id";
};

template <>
struct RecordTable<StoredProvider> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "slug = ?1";
  static constexpr std::string_view sql =
      "SELECT slug, name, description, logo, auth_type, supported_resources, seq FROM providers "
      "WHERE (?1 IS NULL OR slug = ?1) ORDER BY slug";
};

}  // namespace

// The row type's columns (its `sql` up to the WHERE) with `key_where`: built once.
template <typename Row>
std::string_view key_sql() {
  static const std::string sql = [] {
    const std::string_view listing = RecordTable<Row>::sql;
    return std::string(listing.substr(0, listing.rfind("WHERE "))) + "WHERE " +
           std::string(RecordTable<Row>::key_where);
  }();
  return sql;
}

enum RecordStatement : size_t { record_listing, record_by_key };

template <typename Row>
SqliteRecordQuery<Row>::SqliteRecordQuery(sqlite::Connection& db)
    : statements_(db, {RecordTable<Row>::sql, key_sql<Row>()}) {}

template <typename Row>
Result<void> SqliteRecordQuery<Row>::start_by_key(std::string_view change_key) {
  auto statement = statements_.start(record_by_key);
  if (!statement) return fail(statement.error());
  const auto key = split_change_key(change_key, RecordShape<Row>::key_parts);
  if (!key) {
    statements_.finish();
    return fail(not_a_record_key_error(change_key));
  }
  for (size_t part = 0; part < RecordShape<Row>::key_parts; ++part) {
    (*statement)->bind(static_cast<int>(part + 1), (*key)[part]);
  }
  return {};
}

template <typename Row>
Result<void> SqliteRecordQuery<Row>::start(const RecordFilter& filter) {
  auto statement = statements_.start(record_listing);
  if (!statement) return fail(statement.error());
  int index = 0;
  for (const std::optional<std::string>* value : RecordShape<Row>::filters(filter)) (*statement)->bind(++index, *value);
  return {};
}

template <typename Row>
Result<bool> SqliteRecordQuery<Row>::next(Row& row) {
  return statements_.next_row([&row](const sqlite::Statement& s) { RecordShape<Row>::read(s, row); });
}

template class SqliteRecordQuery<StoredConnection>;
template class SqliteRecordQuery<StoredDevice>;
template class SqliteRecordQuery<StoredLabOrder>;
template class SqliteRecordQuery<StoredLabAppointment>;
template class SqliteRecordQuery<StoredLabResult>;
template class SqliteRecordQuery<StoredParsingJob>;
template class SqliteRecordQuery<StoredBackfill>;
template class SqliteRecordQuery<StoredUser>;
template class SqliteRecordQuery<StoredProvider>;

}  // namespace hh::store
