#include "store/sqlite/sqlite_erasure.h"

#include "rows/delivery_user.h"
#include "store/erasure_plan.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/database.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "store/sqlite/processing_lock.h"

namespace hh::store {
namespace {

// How erase() finds a user's rows, in two steps so that counting and erasing agree and the
// order of the deletes does not matter:
//  1. select: the user's inbox rows (their seqs; rows/delivery_user.h decides, in C++,
//     so PostgreSQL can share it), and the keys that are not user columns (series ids,
//     workout ids, job ids, change ids) go into TEMP tables of this connection;
//  2. each table's rows are those its WHERE below picks: `?1` is the user id.
// A derived row is the user's when its user column names them or when one of their
// deliveries wrote it (lab_parsing_jobs have no user column; a fetched stream's
// workout_streams row has none until a notice comes).
constexpr std::string_view kUserOrTheirDelivery = "user_id = ?1 OR seq IN (SELECT seq FROM temp.erase_seqs)";
constexpr std::string_view kTheirDelivery = "seq IN (SELECT seq FROM temp.erase_seqs)";
constexpr std::string_view kTheirSeries = "series_id IN (SELECT series_id FROM temp.erase_series)";
constexpr std::string_view kTheirWorkouts = "workout_id IN (SELECT workout_id FROM temp.erase_workouts)";

// How a table's rows are picked (store/erasure_plan.h), in SQL: `?1` is the user id.
std::string_view where_by(ErasedBy by) {
  switch (by) {
    case ErasedBy::user_or_their_delivery: return kUserOrTheirDelivery;
    case ErasedBy::their_delivery: return kTheirDelivery;
    case ErasedBy::their_series: return kTheirSeries;
    case ErasedBy::their_workouts: return kTheirWorkouts;
    case ErasedBy::their_jobs: return "job_id IN (SELECT job_id FROM temp.erase_jobs)";
    case ErasedBy::their_changes: return "change_id IN (SELECT change_id FROM temp.erase_changes)";
    case ErasedBy::user: return "user_id = ?1";
  }
  return "0";
}

constexpr std::string_view kSelectionTables =
    "CREATE TEMP TABLE IF NOT EXISTS erase_seqs (seq INTEGER PRIMARY KEY);"
    "CREATE TEMP TABLE IF NOT EXISTS erase_series (series_id INTEGER PRIMARY KEY);"
    "CREATE TEMP TABLE IF NOT EXISTS erase_workouts (workout_id TEXT PRIMARY KEY);"
    "CREATE TEMP TABLE IF NOT EXISTS erase_jobs (job_id INTEGER PRIMARY KEY);"
    "CREATE TEMP TABLE IF NOT EXISTS erase_changes (change_id INTEGER PRIMARY KEY);"
    "DELETE FROM temp.erase_seqs; DELETE FROM temp.erase_series; DELETE FROM temp.erase_workouts;"
    "DELETE FROM temp.erase_jobs; DELETE FROM temp.erase_changes;";

// A job's payload names its user (store/sqlite/derived/follow_up_jobs.cpp); a payload that
// is not JSON names nobody.
constexpr std::string_view kPayloadUser = "CASE WHEN json_valid(payload) THEN json_extract(payload, '$.user_id') END";

std::string where_of(std::string_view table) {
  for (const auto& erased : kErasedTables) {
    if (erased.table == table) return std::string(where_by(erased.by));
  }
  return "0";
}

Result<void> run_bound(sqlite::Connection& db, const std::string& sql, std::string_view user_id) {
  auto stmt = db.prepare(sql);
  if (!stmt) return fail(stmt.error());
  if (sql.find("?1") != std::string::npos) stmt->bind(1, user_id);
  return stmt->run();
}

class SqliteErasure final : public Erasure {
 public:
  explicit SqliteErasure(sqlite::Connection db) : db_(std::move(db)) {}

  Result<ErasureReport> count(std::string_view user_id) override {
    // One read transaction: the counts are of one moment.
    if (auto begun = db_.exec("BEGIN"); !begun) return fail(begun.error_kind(), begun.error());
    auto report = count_in_transaction(user_id);
    (void)db_.exec("COMMIT");
    return report;
  }

  Result<ErasureReport> erase(std::string_view user_id, int64_t now_ms) override {
    // The processor must not apply one of the user's deliveries between two groups (it
    // would bring rows back): refused while `serve`, `rebuild` or `replay` applies the inbox.
    auto lock = ProcessingLock::acquire(db_);
    if (!lock) return fail(ErrorKind::busy, lock.error());
    // A database from before migration 006 gets its `erasures` table now (count() does not
    // need it, so a dry run changes nothing).
    if (auto migrated = migrate(db_); !migrated) return fail(migrated.error_kind(), migrated.error());
    if (auto selected = select(user_id); !selected) return fail(selected.error_kind(), selected.error());
    ErasureReport report;
    for (int group = 0; group <= kErasureInboxGroup; ++group) {
      auto txn = sqlite::Transaction::begin(db_);
      if (!txn) return fail(txn.error_kind(), txn.error());
      for (const auto& erased : kErasedTables) {
        if (erased.group != group) continue;
        if (auto ran = run_bound(db_, "DELETE FROM " + std::string(erased.table) + " WHERE " + where_of(erased.table),
                                 user_id);
            !ran) {
          return fail(ran.error_kind(), ran.error());
        }
        report.tables.push_back({std::string(erased.table), db_.changes()});
      }
      if (group == kErasureInboxGroup) {
        if (auto recorded = record(user_id, now_ms, report); !recorded) return fail(recorded.error());
      }
      if (auto committed = txn->commit(); !committed) return fail(committed.error_kind(), committed.error());
    }
    report.space = give_space_back();
    return report;
  }

 private:
  // Fills the TEMP selection tables for `user_id` (step 1 above). Call inside a read
  // transaction or with the processing lock held.
  Result<void> select(std::string_view user_id) {
    if (auto made = db_.exec(kSelectionTables); !made) return made;
    auto scan = db_.prepare("SELECT seq, origin, headers, body FROM inbox ORDER BY seq");
    if (!scan) return fail(scan.error());
    std::vector<int64_t> seqs;
    auto scanned = scan->for_each_row([&](const sqlite::Statement& row) {
      if (rows::delivery_names_user(row.column_text(1), row.column_text(2), row.column_blob(3), user_id)) {
        seqs.push_back(row.column_int(0));
      }
    });
    if (!scanned) return scanned;
    auto insert = db_.prepare("INSERT INTO temp.erase_seqs (seq) VALUES (?1)");
    if (!insert) return fail(insert.error());
    for (const int64_t seq : seqs) {
      insert->bind(1, seq);
      if (auto ran = insert->run(); !ran) return ran;
    }
    const std::string payload_user(kPayloadUser);
    const std::string statements[] = {
        "INSERT INTO temp.erase_series SELECT series_id FROM series WHERE user_id = ?1",
        // A fetched stream's row names no user: its notice or fetch was theirs, or a job of
        // theirs fetches it.
        "INSERT OR IGNORE INTO temp.erase_workouts SELECT workout_id FROM workout_streams WHERE user_id = ?1 "
        "OR notice_seq IN (SELECT seq FROM temp.erase_seqs) OR fetched_seq IN (SELECT seq FROM temp.erase_seqs) "
        "OR seq IN (SELECT seq FROM temp.erase_seqs)",
        "INSERT OR IGNORE INTO temp.erase_workouts SELECT job_key FROM jobs WHERE kind = 'workout_stream' AND (" +
            payload_user + " = ?1 OR trigger_seq IN (SELECT seq FROM temp.erase_seqs))",
        "INSERT INTO temp.erase_jobs SELECT job_id FROM jobs WHERE " + payload_user +
            " = ?1 OR trigger_seq IN (SELECT seq FROM temp.erase_seqs) "
            "OR (kind = 'workout_stream' AND job_key IN (SELECT workout_id FROM temp.erase_workouts)) "
            "OR (kind = 'backfill' AND substr(job_key, 1, length(?1) + 1) = ?1 || '/')",
        // The feed's rows caused by their deliveries, and those of their rows' keys (the
        // key formats of migration 002's comment on `changes`).
        "INSERT INTO temp.erase_changes SELECT change_id FROM changes WHERE seq IN (SELECT seq FROM temp.erase_seqs)"
        " OR (table_name = 'samples' AND row_key IN (SELECT user_id || '/' || resource || '/' || provider || '/' ||"
        " source_type FROM series WHERE " + where_of("series") + "))"
        " OR (table_name = 'summaries' AND row_key IN (SELECT resource || '/' || id FROM summaries WHERE " +
            where_of("summaries") + "))"
        " OR (table_name IN ('workout_streams', 'stream_points') AND row_key IN"
        " (SELECT workout_id FROM temp.erase_workouts))"
        " OR (table_name = 'connections' AND row_key IN (SELECT user_id || '/' || provider FROM connections WHERE " +
            where_of("connections") + "))"
        " OR (table_name = 'devices' AND row_key IN (SELECT id FROM devices WHERE " + where_of("devices") + "))"
        " OR (table_name = 'lab_orders' AND row_key IN (SELECT id FROM lab_orders WHERE " + where_of("lab_orders") +
            "))"
        " OR (table_name = 'lab_appointments' AND row_key IN (SELECT id FROM lab_appointments WHERE " +
            where_of("lab_appointments") + "))"
        " OR (table_name = 'lab_results' AND row_key IN (SELECT order_id FROM lab_results WHERE " +
            where_of("lab_results") + "))"
        " OR (table_name = 'lab_parsing_jobs' AND row_key IN (SELECT id FROM lab_parsing_jobs WHERE " +
            where_of("lab_parsing_jobs") + "))"
        " OR (table_name = 'backfills' AND row_key IN (SELECT user_id || '/' || resource || '/' || provider || '/' ||"
        " start_ms || '/' || end_ms FROM backfills WHERE " + where_of("backfills") + "))"
        " OR (table_name = 'users' AND row_key = ?1)",
    };
    for (const auto& sql : statements) {
      if (auto ran = run_bound(db_, sql, user_id); !ran) return ran;
    }
    return {};
  }

  Result<ErasureReport> count_in_transaction(std::string_view user_id) {
    if (auto selected = select(user_id); !selected) return fail(selected.error_kind(), selected.error());
    ErasureReport report;
    for (const auto& erased : kErasedTables) {
      const std::string where = where_of(erased.table);
      auto stmt = db_.prepare("SELECT count(*) FROM " + std::string(erased.table) + " WHERE " + where);
      if (!stmt) return fail(stmt.error());
      if (where.find("?1") != std::string::npos) stmt->bind(1, user_id);
      int64_t rows = 0;
      auto read = stmt->first_row([&](const sqlite::Statement& row) { rows = row.column_int(0); });
      if (!read) return fail(read.error_kind(), read.error());
      report.tables.push_back({std::string(erased.table), rows});
    }
    return report;
  }

  // The erasure record (migration 006): who, when, rows per table; nothing else.
  Result<void> record(std::string_view user_id, int64_t now_ms, const ErasureReport& report) {
    const std::string counts = erasure_row_counts(report);
    auto insert = db_.prepare("INSERT INTO erasures (user_id, erased_at_ms, row_counts) VALUES (?1, ?2, ?3)");
    if (!insert) return fail(insert.error());
    insert->bind(1, user_id).bind(2, now_ms).bind(3, std::string_view(counts));
    return insert->run();
  }

  // Databases created with auto_vacuum = INCREMENTAL (every new file: store/sqlite/
  // database.cpp) give the freed pages back to the file system now; older ones keep them
  // for reuse by later rows until converted (README, "Retention").
  std::string give_space_back() {
    auto mode = db_.query_int("PRAGMA auto_vacuum");
    if (!mode || mode->value_or(0) != 2) {
      return "freed pages kept in the file for reuse (auto_vacuum is not INCREMENTAL on this database)";
    }
    if (auto vacuumed = db_.exec("PRAGMA incremental_vacuum"); !vacuumed) {
      return "freed pages kept in the file: incremental_vacuum failed: " + vacuumed.error();
    }
    return "freed pages returned to the file system (incremental vacuum)";
  }

  sqlite::Connection db_;
};

}  // namespace

std::vector<std::string_view> sqlite_erasure_tables() {
  std::vector<std::string_view> tables;
  for (const auto& erased : kErasedTables) tables.push_back(erased.table);
  return tables;
}

Result<std::unique_ptr<Erasure>> open_sqlite_erasure(const std::string& path, int64_t busy_timeout_ms) {
  auto db = open_admin_connection(path, busy_timeout_ms);
  if (!db) return fail(db.error_kind(), db.error());
  return std::unique_ptr<Erasure>(new SqliteErasure(std::move(*db)));
}

}  // namespace hh::store
