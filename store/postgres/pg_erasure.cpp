#include "store/postgres/pg_erasure.h"

#include <string>
#include <vector>

#include "rows/delivery_user.h"
#include "store/erasure_plan.h"
#include "store/postgres/connection.h"
#include "store/postgres/database.h"
#include "store/postgres/jobs/pg_job_admin.h"

namespace hh::store {
namespace {

// As sqlite_erasure.cpp: the selections go into temporary tables of this transaction
// (dropped at its end), then each table's rows are those its WHERE picks; `$1` is the
// user id.
constexpr std::string_view kPgeraseSelectionTables =
    "CREATE TEMP TABLE erase_seqs (seq bigint PRIMARY KEY) ON COMMIT DROP;"
    "CREATE TEMP TABLE erase_series (series_id bigint PRIMARY KEY) ON COMMIT DROP;"
    "CREATE TEMP TABLE erase_workouts (workout_id text PRIMARY KEY) ON COMMIT DROP;"
    "CREATE TEMP TABLE erase_jobs (job_id bigint PRIMARY KEY) ON COMMIT DROP;"
    "CREATE TEMP TABLE erase_changes (change_id bigint PRIMARY KEY) ON COMMIT DROP;";

std::string_view pgerase_where_by(ErasedBy by) {
  switch (by) {
    case ErasedBy::user_or_their_delivery: return "user_id = $1::text OR seq IN (SELECT seq FROM pg_temp.erase_seqs)";
    case ErasedBy::their_delivery: return "seq IN (SELECT seq FROM pg_temp.erase_seqs)";
    case ErasedBy::their_series: return "series_id IN (SELECT series_id FROM pg_temp.erase_series)";
    case ErasedBy::their_workouts: return "workout_id IN (SELECT workout_id FROM pg_temp.erase_workouts)";
    case ErasedBy::their_jobs: return "job_id IN (SELECT job_id FROM pg_temp.erase_jobs)";
    case ErasedBy::their_changes: return "change_id IN (SELECT change_id FROM pg_temp.erase_changes)";
    case ErasedBy::user: return "user_id = $1::text";
  }
  return "false";
}

std::string pgerase_where_of(std::string_view table) {
  for (const auto& erased : kErasedTables) {
    if (erased.table == table) return std::string(pgerase_where_by(erased.by));
  }
  return "false";
}

// Runs `sql` with the user id as $1 when it uses it.
Result<pg::Rows> pgerase_run(pg::Connection& db, const std::string& sql, std::string_view user_id) {
  if (sql.find("$1") == std::string::npos) return db.query(sql);
  return db.query(sql, pg::Params().add(user_id));
}

// A bytea column's text form ("\x" and hex digits, bytea_output = hex) as its bytes.
std::string pgerase_bytes(std::string_view text) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 0;
  };
  std::string bytes;
  if (text.size() < 2 || text.substr(0, 2) != "\\x") return bytes;
  bytes.reserve((text.size() - 2) / 2);
  for (size_t i = 2; i + 1 < text.size(); i += 2) {
    bytes.push_back(static_cast<char>(nibble(text[i]) * 16 + nibble(text[i + 1])));
  }
  return bytes;
}

// The inbox rows read per round trip while looking for the user's.
constexpr int64_t kPgeraseScanBatch = 500;

class PgErasure final : public Erasure {
 public:
  explicit PgErasure(pg::Connection db) : db_(std::move(db)) {}

  Result<ErasureReport> count(std::string_view user_id) override {
    // One snapshot for every count; rolled back (the selection tables are its only writes).
    if (auto begun = db_.exec("BEGIN ISOLATION LEVEL REPEATABLE READ"); !begun) {
      return fail(begun.error_kind(), begun.error());
    }
    auto report = count_in_transaction(user_id);
    (void)db_.exec("ROLLBACK");
    return report;
  }

  Result<ErasureReport> erase(std::string_view user_id, int64_t now_ms) override {
    auto txn = pg::Transaction::begin(db_);
    if (!txn) return fail(txn.error_kind(), txn.error());
    // The processor must not apply one of the user's deliveries meanwhile (it would bring
    // rows back): refused while an instance applies the inbox.
    auto locked = db_.query("SELECT pg_try_advisory_xact_lock($1)", pg::Params().add(kProcessingLock));
    if (!locked) return fail(locked.error_kind(), locked.error());
    if (!locked->boolean(0, 0)) {
      return fail(ErrorKind::busy, "another process applies the inbox (serve, rebuild or replay): stop it first");
    }
    if (auto selected = select(user_id); !selected) return fail(selected.error_kind(), selected.error());
    ErasureReport report;
    for (const auto& erased : kErasedTables) {
      auto deleted = pgerase_run(db_, "DELETE FROM " + std::string(erased.table) + " WHERE " +
                                          std::string(pgerase_where_by(erased.by)), user_id);
      if (!deleted) return fail(deleted.error_kind(), deleted.error());
      report.tables.push_back({std::string(erased.table), deleted->affected()});
    }
    const std::string counts = erasure_row_counts(report);
    auto recorded = db_.query("INSERT INTO erasures (user_id, erased_at_ms, row_counts) VALUES ($1, $2, $3)",
                              pg::Params().add(user_id).add(now_ms).add(std::string_view(counts)));
    if (!recorded) return fail(recorded.error_kind(), recorded.error());
    if (auto committed = txn->commit(); !committed) return fail(committed.error_kind(), committed.error());
    report.space = "freed space reused by later rows once autovacuum has passed (PostgreSQL keeps it in its files)";
    return report;
  }

 private:
  // Fills the selection tables for `user_id`, inside the caller's transaction.
  Result<void> select(std::string_view user_id) {
    if (auto made = db_.exec(kPgeraseSelectionTables); !made) return made;
    if (auto scanned = select_deliveries(user_id); !scanned) return scanned;
    const std::string payload_user = "hh_json_or_null(payload)->>'user_id'";
    const std::string statements[] = {
        "INSERT INTO pg_temp.erase_series SELECT series_id FROM series WHERE user_id = $1::text",
        "INSERT INTO pg_temp.erase_workouts SELECT workout_id FROM workout_streams WHERE user_id = $1::text "
        "OR notice_seq IN (SELECT seq FROM pg_temp.erase_seqs) OR fetched_seq IN (SELECT seq FROM pg_temp.erase_seqs) "
        "OR seq IN (SELECT seq FROM pg_temp.erase_seqs) ON CONFLICT DO NOTHING",
        "INSERT INTO pg_temp.erase_workouts SELECT job_key FROM jobs WHERE kind = 'workout_stream' AND (" +
            payload_user + " = $1::text OR trigger_seq IN (SELECT seq FROM pg_temp.erase_seqs)) ON CONFLICT DO NOTHING",
        "INSERT INTO pg_temp.erase_jobs SELECT job_id FROM jobs WHERE " + payload_user +
            " = $1::text OR trigger_seq IN (SELECT seq FROM pg_temp.erase_seqs) "
            "OR (kind = 'workout_stream' AND job_key IN (SELECT workout_id FROM pg_temp.erase_workouts)) "
            "OR (kind = 'backfill' AND substr(job_key, 1, length($1::text) + 1) = $1::text || '/')",
        "INSERT INTO pg_temp.erase_changes SELECT change_id FROM changes "
        "WHERE seq IN (SELECT seq FROM pg_temp.erase_seqs)"
        " OR (table_name = 'samples' AND row_key IN (SELECT user_id || '/' || resource || '/' || provider || '/' ||"
        " source_type FROM series WHERE " + pgerase_where_of("series") + "))"
        " OR (table_name = 'summaries' AND row_key IN (SELECT resource || '/' || id FROM summaries WHERE " +
            pgerase_where_of("summaries") + "))"
        " OR (table_name IN ('workout_streams', 'stream_points') AND row_key IN"
        " (SELECT workout_id FROM pg_temp.erase_workouts))"
        " OR (table_name = 'connections' AND row_key IN (SELECT user_id || '/' || provider FROM connections WHERE " +
            pgerase_where_of("connections") + "))"
        " OR (table_name = 'devices' AND row_key IN (SELECT id FROM devices WHERE " + pgerase_where_of("devices") + "))"
        " OR (table_name = 'lab_orders' AND row_key IN (SELECT id FROM lab_orders WHERE " +
            pgerase_where_of("lab_orders") + "))"
        " OR (table_name = 'lab_appointments' AND row_key IN (SELECT id FROM lab_appointments WHERE " +
            pgerase_where_of("lab_appointments") + "))"
        " OR (table_name = 'lab_results' AND row_key IN (SELECT order_id FROM lab_results WHERE " +
            pgerase_where_of("lab_results") + "))"
        " OR (table_name = 'lab_parsing_jobs' AND row_key IN (SELECT id FROM lab_parsing_jobs WHERE " +
            pgerase_where_of("lab_parsing_jobs") + "))"
        " OR (table_name = 'backfills' AND row_key IN (SELECT user_id || '/' || resource || '/' || provider || '/' ||"
        " start_ms || '/' || end_ms FROM backfills WHERE " + pgerase_where_of("backfills") + "))"
        " OR (table_name = 'users' AND row_key = $1::text)",
    };
    for (const auto& sql : statements) {
      if (auto ran = pgerase_run(db_, sql, user_id); !ran) return fail(ran.error_kind(), ran.error());
    }
    return {};
  }

  // The user's inbox rows, decided in C++ by rows/delivery_user.h as on SQLite. The
  // server sends only rows that can name them: those holding the user id's bytes, or a
  // backslash (a JSON escape could spell the id otherwise); a batch at a time.
  Result<void> select_deliveries(std::string_view user_id) {
    int64_t after = 0;
    std::vector<int64_t> seqs;
    for (;;) {
      auto rows = db_.query(
          "SELECT seq, origin, headers, body FROM inbox WHERE seq > $2 AND (strpos(headers, $1) > 0 "
          "OR strpos(headers, '\\') > 0 OR position(convert_to($1, 'UTF8') IN body) > 0 "
          "OR position('\\x5c'::bytea IN body) > 0) ORDER BY seq LIMIT $3",
          pg::Params().add(user_id).add(after).add(kPgeraseScanBatch));
      if (!rows) return fail(rows.error_kind(), rows.error());
      for (int r = 0; r < rows->size(); ++r) {
        after = rows->integer(r, 0);
        const std::string body = pgerase_bytes(rows->text(r, 3));
        if (rows::delivery_names_user(rows->text(r, 1), rows->text(r, 2), body, user_id)) seqs.push_back(after);
      }
      if (rows->size() < kPgeraseScanBatch) break;
    }
    std::string array = "{";
    for (size_t i = 0; i < seqs.size(); ++i) array += (i > 0 ? "," : "") + std::to_string(seqs[i]);
    array += "}";
    auto inserted = db_.query("INSERT INTO pg_temp.erase_seqs SELECT unnest($1::bigint[])",
                              pg::Params().add(std::string_view(array)));
    if (!inserted) return fail(inserted.error_kind(), inserted.error());
    return {};
  }

  Result<ErasureReport> count_in_transaction(std::string_view user_id) {
    if (auto selected = select(user_id); !selected) return fail(selected.error_kind(), selected.error());
    ErasureReport report;
    for (const auto& erased : kErasedTables) {
      auto counted = pgerase_run(db_, "SELECT count(*) FROM " + std::string(erased.table) + " WHERE " +
                                          std::string(pgerase_where_by(erased.by)), user_id);
      if (!counted) return fail(counted.error_kind(), counted.error());
      report.tables.push_back({std::string(erased.table), counted->integer(0, 0)});
    }
    return report;
  }

  pg::Connection db_;
};

}  // namespace

Result<std::unique_ptr<Erasure>> open_postgres_erasure(const Database& database, int64_t busy_timeout_ms) {
  auto db = open_postgres_admin_connection(database, kPgJobsSchemaVersion, busy_timeout_ms);
  if (!db) return fail(db.error_kind(), db.error());
  return std::unique_ptr<Erasure>(new PgErasure(std::move(*db)));
}

}  // namespace hh::store
