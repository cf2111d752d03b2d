#include "store/sqlite/queries/record_queries.h"

#include <string>

namespace hh::store {
namespace {

// What each row type reads: `sql` with its filters as parameters ?1…, `bind` binding
// every one of them, `read` turning the columns into the row; `key_where` picks the one row
// of a change-feed key (store/sqlite/migrations/002-derived.sql: composite keys joined with
// '/'), by the table's primary key.
template <typename Row>
struct RecordTable;

template <>
struct RecordTable<StoredConnection> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "user_id = ?1 AND provider = ?2";
  static constexpr size_t key_parts = 2;
  static constexpr std::string_view sql =
      "SELECT user_id, provider, status, external_user_id, error_type, error_message, resource_availability, "
      "event_type, seq, data FROM connections "
      "WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR provider = ?2) ORDER BY user_id, provider";
  static void bind(sqlite::Statement& s, const RecordFilter& f) { s.bind(1, f.user_id).bind(2, f.provider); }
  static void read(const sqlite::Statement& s, StoredConnection& row) {
    row.user_id = s.column_text(0);
    row.provider = s.column_text(1);
    row.status = s.column_text(2);
    row.external_user_id = s.column_optional_text(3);
    row.error_type = s.column_optional_text(4);
    row.error_message = s.column_optional_text(5);
    row.resource_availability = s.column_optional_text(6);
    row.event_type = s.column_text(7);
    row.seq = s.column_int(8);
    row.data = s.column_text(9);
  }
};

template <>
struct RecordTable<StoredDevice> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "id = ?1";
  static constexpr size_t key_parts = 1;
  static constexpr std::string_view sql =
      "SELECT id, user_id, provider, source_type, app_id, device_manufacturer, device_model, device_version, "
      "device_id, seq, data FROM devices "
      "WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR provider = ?2) ORDER BY id";
  static void bind(sqlite::Statement& s, const RecordFilter& f) { s.bind(1, f.user_id).bind(2, f.provider); }
  static void read(const sqlite::Statement& s, StoredDevice& row) {
    row.id = s.column_text(0);
    row.user_id = s.column_optional_text(1);
    row.provider = s.column_optional_text(2);
    row.source_type = s.column_optional_text(3);
    row.app_id = s.column_optional_text(4);
    row.device_manufacturer = s.column_optional_text(5);
    row.device_model = s.column_optional_text(6);
    row.device_version = s.column_optional_text(7);
    row.device_id = s.column_optional_text(8);
    row.seq = s.column_int(9);
    row.data = s.column_text(10);
  }
};

template <>
struct RecordTable<StoredLabOrder> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "id = ?1";
  static constexpr size_t key_parts = 1;
  static constexpr std::string_view sql =
      "SELECT id, user_id, team_id, status, last_event_status, status_detail, interpretation, seq, data "
      "FROM lab_orders WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR status = ?2) "
      "AND (?3 IS NULL OR id = ?3) ORDER BY id";
  static void bind(sqlite::Statement& s, const RecordFilter& f) {
    s.bind(1, f.user_id).bind(2, f.status).bind(3, f.order_id);
  }
  static void read(const sqlite::Statement& s, StoredLabOrder& row) {
    row.id = s.column_text(0);
    row.user_id = s.column_optional_text(1);
    row.team_id = s.column_optional_text(2);
    row.status = s.column_optional_text(3);
    row.last_event_status = s.column_optional_text(4);
    row.status_detail = s.column_optional_text(5);
    row.interpretation = s.column_optional_text(6);
    row.seq = s.column_int(7);
    row.data = s.column_text(8);
  }
};

template <>
struct RecordTable<StoredLabAppointment> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "id = ?1";
  static constexpr size_t key_parts = 1;
  static constexpr std::string_view sql =
      "SELECT id, order_id, user_id, status, event_status, start_at, end_at, seq, data FROM lab_appointments "
      "WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR order_id = ?3) "
      "ORDER BY id";
  static void bind(sqlite::Statement& s, const RecordFilter& f) {
    s.bind(1, f.user_id).bind(2, f.status).bind(3, f.order_id);
  }
  static void read(const sqlite::Statement& s, StoredLabAppointment& row) {
    row.id = s.column_text(0);
    row.order_id = s.column_optional_text(1);
    row.user_id = s.column_optional_text(2);
    row.status = s.column_optional_text(3);
    row.event_status = s.column_optional_text(4);
    row.start_at = s.column_optional_text(5);
    row.end_at = s.column_optional_text(6);
    row.seq = s.column_int(7);
    row.data = s.column_text(8);
  }
};

template <>
struct RecordTable<StoredLabResult> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "order_id = ?1";
  static constexpr size_t key_parts = 1;
  static constexpr std::string_view sql =
      "SELECT order_id, user_id, sample_id, status, interpretation, seq, data FROM lab_results "
      "WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR order_id = ?3) "
      "ORDER BY order_id";
  static void bind(sqlite::Statement& s, const RecordFilter& f) {
    s.bind(1, f.user_id).bind(2, f.status).bind(3, f.order_id);
  }
  static void read(const sqlite::Statement& s, StoredLabResult& row) {
    row.order_id = s.column_text(0);
    row.user_id = s.column_optional_text(1);
    row.sample_id = s.column_optional_text(2);
    row.status = s.column_optional_text(3);
    row.interpretation = s.column_optional_text(4);
    row.seq = s.column_int(5);
    row.data = s.column_text(6);
  }
};

// Parsing jobs carry no user (lab_report.parsing_job.* has none): only the status filter.
template <>
struct RecordTable<StoredParsingJob> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "id = ?1";
  static constexpr size_t key_parts = 1;
  static constexpr std::string_view sql =
      "SELECT id, status, failure_reason, needs_human_review, is_reviewed, results, seq, data FROM lab_parsing_jobs "
      "WHERE (?1 IS NULL OR status = ?1) ORDER BY id";
  static void bind(sqlite::Statement& s, const RecordFilter& f) { s.bind(1, f.status); }
  static void read(const sqlite::Statement& s, StoredParsingJob& row) {
    row.id = s.column_text(0);
    row.status = s.column_optional_text(1);
    row.failure_reason = s.column_optional_text(2);
    row.needs_human_review = s.column_optional_bool(3);
    row.is_reviewed = s.column_optional_bool(4);
    row.results = s.column_optional_text(5);
    row.seq = s.column_int(6);
    row.data = s.column_text(7);
  }
};

// The job's key is the backfill's (store/sqlite/derived/follow_up_jobs.h): one lookup in the
// jobs (kind, job_key) index per window.
template <>
struct RecordTable<StoredBackfill> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "b.user_id = ?1 AND b.resource = ?2 AND b.provider = ?3 AND b.start_ms = ?4 AND b.end_ms = ?5";
  static constexpr size_t key_parts = 5;
  static constexpr std::string_view sql =
      "SELECT b.user_id, b.resource, b.provider, b.start_ms, b.end_ms, b.is_final, b.seq, j.state, j.last_error, "
      "j.attempts FROM backfills AS b LEFT JOIN jobs AS j ON j.kind = 'backfill' AND "
      "j.job_key = b.user_id || '/' || b.resource || '/' || b.provider || '/' || b.start_ms || '/' || b.end_ms "
      "WHERE (?1 IS NULL OR b.user_id = ?1) AND (?2 IS NULL OR b.provider = ?2) AND (?3 IS NULL OR b.resource = ?3) "
      "ORDER BY b.user_id, b.resource, b.provider, b.start_ms, b.end_ms";
  static void bind(sqlite::Statement& s, const RecordFilter& f) {
    s.bind(1, f.user_id).bind(2, f.provider).bind(3, f.resource);
  }
  static void read(const sqlite::Statement& s, StoredBackfill& row) {
    row.user_id = s.column_text(0);
    row.resource = s.column_text(1);
    row.provider = s.column_text(2);
    row.start_ms = s.column_int(3);
    row.end_ms = s.column_int(4);
    row.is_final = s.column_optional_bool(5);
    row.seq = s.column_int(6);
    row.job_state = s.column_optional_text(7);
    row.job_error = s.column_optional_text(8);
    row.job_attempts = s.column_optional_int(9);
  }
};

template <>
struct RecordTable<StoredUser> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "user_id = ?1";
  static constexpr size_t key_parts = 1;
  static constexpr std::string_view sql =
      "SELECT user_id, client_user_id, team_id, first_seen_ms, last_seen_ms, seq FROM users "
      "WHERE (?1 IS NULL OR user_id = ?1) ORDER BY user_id";
  static void bind(sqlite::Statement& s, const RecordFilter& f) { s.bind(1, f.user_id); }
  static void read(const sqlite::Statement& s, StoredUser& row) {
    row.user_id = s.column_text(0);
    row.client_user_id = s.column_optional_text(1);
    row.team_id = s.column_optional_text(2);
    row.first_seen_ms = s.column_int(3);
    row.last_seen_ms = s.column_int(4);
    row.seq = s.column_int(5);
  }
};

template <>
struct RecordTable<StoredProvider> {
  // The row of one change-feed key (its parts, split at '/', are ?1…).
  static constexpr std::string_view key_where = "slug = ?1";
  static constexpr size_t key_parts = 1;
  static constexpr std::string_view sql =
      "SELECT slug, name, description, logo, auth_type, supported_resources, seq FROM providers "
      "WHERE (?1 IS NULL OR slug = ?1) ORDER BY slug";
  static void bind(sqlite::Statement& s, const RecordFilter& f) { s.bind(1, f.provider); }
  static void read(const sqlite::Statement& s, StoredProvider& row) {
    row.slug = s.column_text(0);
    row.name = s.column_optional_text(1);
    row.description = s.column_optional_text(2);
    row.logo = s.column_optional_text(3);
    row.auth_type = s.column_optional_text(4);
    row.supported_resources = s.column_optional_text(5);
    row.seq = s.column_int(6);
  }
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
  // The last part takes the rest: a key part may itself hold a '/' only there.
  size_t start = 0;
  for (size_t part = 1; part <= RecordTable<Row>::key_parts; ++part) {
    const size_t slash = part == RecordTable<Row>::key_parts ? std::string_view::npos : change_key.find('/', start);
    if (slash == std::string_view::npos && part < RecordTable<Row>::key_parts) {
      statements_.finish();
      return fail("not a key of this table: " + std::string(change_key));
    }
    (*statement)->bind(static_cast<int>(part), change_key.substr(start, slash - start));
    start = slash + 1;
  }
  return {};
}

template <typename Row>
Result<void> SqliteRecordQuery<Row>::start(const RecordFilter& filter) {
  auto statement = statements_.start(record_listing);
  if (!statement) return fail(statement.error());
  RecordTable<Row>::bind(**statement, filter);
  return {};
}

template <typename Row>
Result<bool> SqliteRecordQuery<Row>::next(Row& row) {
  return statements_.next_row([&row](const sqlite::Statement& s) { RecordTable<Row>::read(s, row); });
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
