#include "store/postgres/pg_erasure.h"

#include <string>
#include <vector>

#include "rows/delivery_user.h"
#include "store/delivery_users.h"
#include "store/erasure_plan.h"
#include "store/postgres/connection.h"
#include "store/postgres/database.h"
#include "store/postgres/jobs/pg_job_admin.h"

namespace hh::store {
namespace {

// As sqlite_erasure.cpp: the sets that are not one table's user column go into temporary
// tables of this transaction (dropped at its end), then each table's rows are those its
// WHERE picks; `$1` is the user id.
constexpr std::string_view kPgeraseSelectionTables =
    "CREATE TEMP TABLE erase_seqs (seq bigint PRIMARY KEY) ON COMMIT DROP;"
    "CREATE TEMP TABLE erase_series (series_id bigint PRIMARY KEY) ON COMMIT DROP;"
    "CREATE TEMP TABLE erase_workouts (workout_id text PRIMARY KEY) ON COMMIT DROP;";

// Their series and workouts (their deliveries: kDeliveryUserRecords, in select()).
constexpr std::string_view kPgeraseSelections[] = {
    "INSERT INTO pg_temp.erase_series SELECT series_id FROM series WHERE user_id = $1::text",
    "INSERT INTO pg_temp.erase_workouts SELECT workout_id FROM workout_streams WHERE user_id = $1::text "
    "ON CONFLICT DO NOTHING",
    "INSERT INTO pg_temp.erase_workouts SELECT job_key FROM jobs WHERE kind = 'workout_stream' AND user_id = $1::text "
    "ON CONFLICT DO NOTHING",
};


// Runs `sql` with the user id as $1 when it uses it.
Result<pg::Rows> pgerase_run(pg::Connection& db, const std::string& sql, std::string_view user_id) {
  if (sql.find("$1") == std::string::npos) return db.query(sql);
  return db.query(sql, pg::Params().add(user_id));
}

// Inbox rows no column names the user of (no outcome, or an invalid one with no user; no
// removed-body record), read to find the user's among them (sqlite_erasure.cpp says why
// these and only these). The server sends only rows that can name them: those holding
// the user id's bytes, or a backslash (a JSON escape could spell the id otherwise); a few
// at a time with bodies in binary (no hex text), so memory stays bounded whatever the
// backlog: kPgerasePendingBatch rows of at most max_body_bytes each.
constexpr std::string_view kPgerasePendingSql =
    "SELECT seq, origin, headers, body FROM inbox AS i WHERE seq > $2 "
    "AND NOT EXISTS (SELECT 1 FROM delivery_outcomes AS o WHERE o.seq = i.seq AND o.status <> 'invalid') "
    "AND NOT EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = i.seq) AND (strpos(headers, $1) > 0 "
    "OR strpos(headers, '\\') > 0 OR position(convert_to($1, 'UTF8') IN body) > 0 "
    "OR position('\\x5c'::bytea IN body) > 0) ORDER BY seq LIMIT $3";
constexpr int64_t kPgerasePendingBatch = 16;

class PgErasure final : public Erasure {
 public:
  explicit PgErasure(pg::Connection db) : db_(std::move(db)) {}

  Result<void> check_free() override {
    auto txn = pg::Transaction::begin(db_);  // rolled back: the lock goes with it
    if (!txn) return fail(txn);
    return lock_processing();
  }

  Result<ErasureReport> count(std::string_view user_id) override {
    // One snapshot for every count; rolled back (the selection tables are its only writes).
    if (auto begun = db_.exec("BEGIN ISOLATION LEVEL REPEATABLE READ"); !begun) {
      return fail(begun);
    }
    auto report = count_in_transaction(user_id);
    (void)db_.exec("ROLLBACK");
    return report;
  }

  Result<ErasureReport> erase(std::string_view user_id, int64_t now_ms, const OnceLocked& once_locked) override {
    // No transaction is held open while once_locked waits on the network (a server's
    // idle_in_transaction_session_timeout would end it).
    if (once_locked) {
      if (auto free = check_free(); !free) return fail(free);
      if (auto done = once_locked(); !done) return fail(done);
    }
    auto txn = pg::Transaction::begin(db_);
    if (!txn) return fail(txn);
    // The processor must not apply one of the user's deliveries meanwhile (it would bring
    // rows back): refused while an instance applies the inbox.
    if (auto locked = lock_processing(); !locked) return fail(locked);
    // A `serve` standing by still removes bodies: its batch could record one of the user's
    // after the delete below. Waits for a batch under way (a short one), then holds them
    // off until the commit.
    if (auto held = db_.query("SELECT pg_advisory_xact_lock($1)", pg::Params().add(kBodyRetentionLock)); !held) {
      return fail(held);
    }
    if (auto selected = select(user_id); !selected) return fail(selected);
    ErasureReport report;
    for (const schema::Table* erased : schema::erased_tables()) {
      auto deleted = pgerase_run(db_, "DELETE FROM " + std::string(erased->name) + " WHERE " +
                                          erased_where(erased->erasure.by, schema::Dialect::postgres), user_id);
      if (!deleted) return fail(deleted);
      report.tables.push_back({std::string(erased->name), deleted->affected()});
    }
    const std::string counts = erasure_row_counts(report);
    auto recorded = db_.query("INSERT INTO erasures (user_id, erased_at_ms, row_counts) VALUES ($1, $2, $3)",
                              pg::Params().add(user_id).add(now_ms).add(std::string_view(counts)));
    if (!recorded) return fail(recorded);
    auto unattributed = unattributed_rows();
    if (!unattributed) return fail(unattributed);
    report.unattributed = std::move(*unattributed);
    if (auto committed = txn->commit(); !committed) return fail(committed);
    report.space = "freed space reused by later rows once autovacuum has passed (PostgreSQL keeps it in its files)";
    return report;
  }

 private:
  // The processing lock for the caller's transaction; ErrorKind::in_use while an instance
  // applies the inbox.
  Result<void> lock_processing() {
    auto locked = db_.query("SELECT pg_try_advisory_xact_lock($1)", pg::Params().add(kProcessingLock));
    if (!locked) return fail(locked);
    if (!locked->boolean(0, 0)) {
      return fail(ErrorKind::in_use, "another process applies the inbox (serve, rebuild, replay or purge-user): stop it or let it finish first");
    }
    return {};
  }

  // Fills the selection tables for `user_id`, inside the caller's transaction.
  Result<void> select(std::string_view user_id) {
    if (auto made = db_.exec(kPgeraseSelectionTables); !made) return made;
    // Their deliveries by the columns that record them (store/delivery_users.h).
    for (const DeliveryUserRecord& record : kDeliveryUserRecords) {
      const std::string sql =
          "INSERT INTO pg_temp.erase_seqs " + delivery_user_seqs(record, " = $1::text") + " ON CONFLICT DO NOTHING";
      if (auto ran = pgerase_run(db_, sql, user_id); !ran) return fail(ran);
    }
    for (const std::string_view sql : kPgeraseSelections) {
      if (auto ran = pgerase_run(db_, std::string(sql), user_id); !ran) return fail(ran);
    }
    return select_pending_deliveries(user_id);
  }

  // The pending rows that name the user, decided in C++ by events/delivery_names_user as
  // on SQLite.
  Result<void> select_pending_deliveries(std::string_view user_id) {
    int64_t after = 0;
    for (;;) {
      auto rows = db_.query(kPgerasePendingSql, pg::Params().add(user_id).add(after).add(kPgerasePendingBatch),
                            pg::Results::binary);
      if (!rows) return fail(rows);
      std::string seqs = "{";
      for (int r = 0; r < rows->size(); ++r) {
        after = rows->integer(r, 0);
        if (rows::delivery_names_user(rows->text(r, 1), rows->text(r, 2), rows->text(r, 3), user_id)) {
          seqs += (seqs.size() > 1 ? "," : "") + std::to_string(after);
        }
      }
      if (seqs.size() > 1) {
        auto inserted = db_.query("INSERT INTO pg_temp.erase_seqs SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING",
                                  pg::Params().add(seqs + "}"));
        if (!inserted) return fail(inserted);
      }
      if (rows->size() < kPgerasePendingBatch) return {};
    }
  }

  Result<ErasureReport> count_in_transaction(std::string_view user_id) {
    if (auto selected = select(user_id); !selected) return fail(selected);
    ErasureReport report;
    for (const schema::Table* erased : schema::erased_tables()) {
      auto counted = pgerase_run(db_, "SELECT count(*) FROM " + std::string(erased->name) + " WHERE " +
                                          erased_where(erased->erasure.by, schema::Dialect::postgres), user_id);
      if (!counted) return fail(counted);
      report.tables.push_back({std::string(erased->name), counted->integer(0, 0)});
    }
    auto unattributed = unattributed_rows();
    if (!unattributed) return fail(unattributed);
    report.unattributed = std::move(*unattributed);
    return report;
  }

  Result<std::vector<TableRows>> unattributed_rows() {
    auto rows = db_.query(kUnattributedRowsSql);
    if (!rows) return fail(rows);
    std::vector<TableRows> tables;
    for (int r = 0; r < rows->size(); ++r) tables.push_back({std::string(rows->text(r, 0)), rows->integer(r, 1)});
    return tables;
  }

  pg::Connection db_;
};

}  // namespace

Result<std::unique_ptr<Erasure>> open_postgres_erasure(const Database& database, int64_t busy_timeout_ms) {
  auto db = open_postgres_admin_connection(database, kPgJobsSchemaVersion, busy_timeout_ms);
  if (!db) return fail(db);
  return std::unique_ptr<Erasure>(new PgErasure(std::move(*db)));
}

}  // namespace hh::store
