#include "store/sqlite/sqlite_erasure.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "rows/delivery_user.h"
#include "store/delivery_users.h"
#include "store/erasure_plan.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/database.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "store/sqlite/processing_lock.h"

namespace hh::store {
namespace {

// How erase() finds a user's rows (store/erasure_plan.h), in two steps so that counting and
// erasing agree and the order of the deletes does not matter:
//  1. select: the sets that are not one table's user column (their deliveries' seqs, their
//     series ids and workout ids) go into TEMP tables of this connection;
//  2. each table's rows are those its WHERE below picks: `?1` is the user id.

constexpr std::string_view kSelectionTables =
    "CREATE TEMP TABLE IF NOT EXISTS erase_seqs (seq INTEGER PRIMARY KEY);"
    "CREATE TEMP TABLE IF NOT EXISTS erase_series (series_id INTEGER PRIMARY KEY);"
    "CREATE TEMP TABLE IF NOT EXISTS erase_workouts (workout_id TEXT PRIMARY KEY);"
    "DELETE FROM temp.erase_seqs; DELETE FROM temp.erase_series; DELETE FROM temp.erase_workouts;";

// The user's series and workouts (their deliveries: kDeliveryUserRecords, in select()).
constexpr std::string_view kSelections[] = {
    "INSERT INTO temp.erase_series SELECT series_id FROM series WHERE user_id = ?1",
    "INSERT OR IGNORE INTO temp.erase_workouts SELECT workout_id FROM workout_streams WHERE user_id = ?1",
    // A stream fetched for them whose row names nobody yet (written before migration 009).
    "INSERT OR IGNORE INTO temp.erase_workouts SELECT job_key FROM jobs WHERE kind = 'workout_stream' "
    "AND user_id = ?1",
};

// Inbox rows whose body is still there (no removed-body record) and whose outcome may not
// name every user they hold (store/delivery_users.h, body_tells_delivery_users): not
// applied yet (no outcome), or invalid (its outcome names at most one user, the first a
// body that is no JSON object names: an array of two users' deliveries is both users';
// rows/delivery_user.h). A delivery that parsed named its user in its outcome, or names
// nobody. Their seqs come from indexes (no body page read), then the bodies one at a time.
constexpr std::string_view kPendingDeliveries =
    "SELECT seq, origin, headers, body FROM inbox WHERE seq IN (SELECT seq FROM inbox INDEXED BY "
    "deliveries_received_at EXCEPT SELECT seq FROM delivery_outcomes WHERE status <> 'invalid' "
    "EXCEPT SELECT seq FROM removed_bodies) ORDER BY seq";

// What stays without rewrite_file(): purge-user --no-vacuum says so.
constexpr std::string_view kNotRewritten =
    "not rewritten (--no-vacuum): unused space in pages still in use may hold copies of the erased rows (ids, "
    "parts of bodies) until SQLite reuses it; `sqlite3 FILE VACUUM` removes them";

// SHA-256 of no bytes: the removed-body record of an erasure's placeholder row.
constexpr std::string_view kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

Result<void> run_bound(sqlite::Connection& db, const std::string& sql, std::string_view user_id) {
  auto stmt = db.prepare(sql);
  if (!stmt) return fail(stmt);
  if (sql.find("?1") != std::string::npos) stmt->bind(1, user_id);
  return stmt->run();
}

class SqliteErasure final : public Erasure {
 public:
  SqliteErasure(sqlite::Connection db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}

  Result<void> check_free() override {
    auto lock = ProcessingLock::acquire(db_);  // released at once
    if (!lock) return fail(lock);
    return {};
  }

  Result<ErasureReport> count(std::string_view user_id) override {
    // A database from before migration 009 has no user columns to count by: it gets them
    // now (the rows stay as they are).
    if (auto migrated = migrate(db_); !migrated) return fail(migrated);
    // One read transaction: the counts are of one moment.
    if (auto begun = db_.exec("BEGIN"); !begun) return fail(begun);
    auto report = count_in_transaction(user_id);
    (void)db_.exec("COMMIT");
    return report;
  }

  Result<ErasureReport> erase(std::string_view user_id, int64_t now_ms, const OnceLocked& once_locked) override {
    // The processor must not apply one of the user's deliveries between choosing the rows
    // and removing them (it would bring rows back): refused while `serve`, `rebuild` or
    // `replay` applies the inbox.
    auto lock = ProcessingLock::acquire(db_);
    if (!lock) return fail(lock);
    // A database from before migration 009 gets its user columns now (006: `erasures`).
    if (auto migrated = migrate(db_); !migrated) return fail(migrated);
    if (once_locked) {
      // The write lock is free now (another process holding it past the busy timeout is
      // refused here, before once_locked), and is not held while once_locked waits.
      if (auto probe = sqlite::Transaction::begin(db_); !probe) return fail(probe);
      if (auto done = once_locked(); !done) return fail(done);
    }
    // After once_locked: rows another command wrote for the user meanwhile are chosen too.
    if (auto selected = select(user_id); !selected) return fail(selected);
    // One transaction, as on PostgreSQL: interrupted (kill -9, power loss), an erasure
    // leaves nothing erased and no record, and the next run erases and records it all.
    // (Splitting it by table group bounds nothing: the samples, its bulk, are one group.)
    ErasureReport report;
    auto txn = sqlite::Transaction::begin(db_);
    if (!txn) return fail(txn);
    auto newest = newest_of_theirs();  // the inbox's newest row, when it is the user's
    if (!newest) return fail(newest);
    for (const schema::Table* erased : schema::erased_tables()) {
      if (auto ran = run_bound(db_, "DELETE FROM " + std::string(erased->name) + " WHERE " +
                                         erased_where(erased->erasure.by, schema::Dialect::sqlite),
                               user_id);
          !ran) {
        return fail(ran);
      }
      report.tables.push_back({std::string(erased->name), db_.changes()});
    }
    if (*newest) {
      if (auto kept = keep_seq_taken(**newest, now_ms); !kept) return fail(kept);
    }
    if (auto recorded = record(user_id, now_ms, report); !recorded) return fail(recorded);
    if (auto committed = txn->commit(); !committed) return fail(committed);
    if (auto unattributed = unattributed_rows(); unattributed) report.unattributed = std::move(*unattributed);
    // Committed: the erasure is done whatever follows. What follows takes the erased rows'
    // last copies out of the files (docs/erasure-and-retention.md, "Space").
    report.space = rewrite_file_ ? rewrite_file() : give_space_back();
    report.left_in_files = checkpoint_wal();
    if (!rewrite_file_) {
      report.left_in_files += (report.left_in_files.empty() ? "" : "; ") + named(kNotRewritten);
    }
    return report;
  }

 private:
  // Fills the TEMP selection tables for `user_id` (step 1 above). Call inside a read
  // transaction or with the processing lock held.
  Result<void> select(std::string_view user_id) {
    if (auto made = db_.exec(kSelectionTables); !made) return made;
    // Their deliveries by the columns that record them (store/delivery_users.h). A
    // delivery whose data names them beside another user's envelope is theirs by its
    // changes: its body would give its rows back to `rebuild`.
    for (const DeliveryUserRecord& record : kDeliveryUserRecords) {
      const std::string sql = "INSERT OR IGNORE INTO temp.erase_seqs " + delivery_user_seqs(record, " = ?1");
      if (auto ran = run_bound(db_, sql, user_id); !ran) return ran;
    }
    for (const std::string_view sql : kSelections) {
      if (auto ran = run_bound(db_, std::string(sql), user_id); !ran) return ran;
    }
    auto scan = db_.prepare(kPendingDeliveries);
    if (!scan) return fail(scan);
    std::vector<int64_t> seqs;
    auto scanned = scan->for_each_row([&](const sqlite::Statement& row) {
      if (rows::delivery_names_user(row.column_text(1), row.column_text(2), row.column_blob(3), user_id)) {
        seqs.push_back(row.column_int(0));
      }
    });
    if (!scanned) return scanned;
    auto insert = db_.prepare("INSERT OR IGNORE INTO temp.erase_seqs (seq) VALUES (?1)");
    if (!insert) return fail(insert);
    for (const int64_t seq : seqs) {
      insert->bind(1, seq);
      if (auto ran = insert->run(); !ran) return ran;
    }
    return {};
  }

  Result<ErasureReport> count_in_transaction(std::string_view user_id) {
    if (auto selected = select(user_id); !selected) return fail(selected);
    ErasureReport report;
    for (const schema::Table* erased : schema::erased_tables()) {
      const std::string where = erased_where(erased->erasure.by, schema::Dialect::sqlite);
      auto stmt = db_.prepare("SELECT count(*) FROM " + std::string(erased->name) + " WHERE " + where);
      if (!stmt) return fail(stmt);
      if (where.find("?1") != std::string::npos) stmt->bind(1, user_id);
      int64_t rows = 0;
      auto read = stmt->first_row([&](const sqlite::Statement& row) { rows = row.column_int(0); });
      if (!read) return fail(read);
      report.tables.push_back({std::string(erased->name), rows});
    }
    auto unattributed = unattributed_rows();
    if (!unattributed) return fail(unattributed);
    report.unattributed = std::move(*unattributed);
    return report;
  }

  Result<std::vector<TableRows>> unattributed_rows() {
    auto stmt = db_.prepare(kUnattributedRowsSql);
    if (!stmt) return fail(stmt);
    std::vector<TableRows> rows;
    auto read = stmt->for_each_row([&](const sqlite::Statement& row) {
      rows.push_back({std::string(row.column_text(0)), row.column_int(1)});
    });
    if (!read) return fail(read);
    return rows;
  }

  // The inbox's newest seq when the erasure removes its row, inside the erasure's
  // transaction.
  Result<std::optional<int64_t>> newest_of_theirs() {
    auto stmt = db_.prepare("SELECT seq FROM inbox WHERE seq = (SELECT max(seq) FROM inbox) "
                            "AND seq IN (SELECT seq FROM temp.erase_seqs)");
    if (!stmt) return fail(stmt);
    std::optional<int64_t> newest;
    auto read = stmt->first_row([&](const sqlite::Statement& row) { newest = row.column_int(0); });
    if (!read) return fail(read);
    return newest;
  }

  // SQLite gives a new inbox row max(seq) + 1: with the newest row gone, the next delivery
  // would get a seq the processor has applied already and never apply it. A placeholder
  // keeps that seq taken: no headers, no body, no user, and a message id no delivery can
  // carry (" erased:<seq>": HTTP trims a header value's edges, and replay refuses an id
  // starting with a space), so a delivery is never taken for its duplicate, nor a
  // delivery's id keeps a later erasure from inserting it (migration 019); an
  // 'ignored' delivery whose body is recorded as removed (processor and rebuild pass over
  // it). Its received_at is the newest of the rows left before it (0 without one): retention's
  // walk relies on received_at growing with seq, and the erased delivery's own time would
  // say when the user last sent something. (PostgreSQL's sequence never goes back.)
  Result<void> keep_seq_taken(int64_t seq, int64_t now_ms) {
    auto placeholder = db_.prepare(
        "INSERT INTO inbox (seq, message_id, origin, received_at, headers, body) "
        "VALUES (?1, ' erased:' || ?1, 'webhook', "
        "coalesce((SELECT max(received_at) FROM inbox WHERE seq < ?1), 0), '{}', x'')");
    if (!placeholder) return fail(placeholder);
    placeholder->bind(1, seq);
    if (auto ran = placeholder->run(); !ran) return ran;
    auto removed = db_.prepare(
        "INSERT INTO removed_bodies (seq, body_sha256, body_bytes, removed_at_ms) VALUES (?1, ?2, 0, ?3)");
    if (!removed) return fail(removed);
    removed->bind(1, seq).bind(2, kEmptySha256).bind(3, now_ms);
    if (auto ran = removed->run(); !ran) return ran;
    // Applied (there is nothing to apply): not counted as a delivery waiting.
    auto outcome = db_.prepare("INSERT INTO delivery_outcomes (seq, status) VALUES (?1, 'ignored')");
    if (!outcome) return fail(outcome);
    outcome->bind(1, seq);
    return outcome->run();
  }

  // The erasure record (migration 006): who, when, rows per table; nothing else.
  Result<void> record(std::string_view user_id, int64_t now_ms, const ErasureReport& report) {
    const std::string counts = erasure_row_counts(report);
    auto insert = db_.prepare("INSERT INTO erasures (user_id, erased_at_ms, row_counts) VALUES (?1, ?2, ?3)");
    if (!insert) return fail(insert);
    insert->bind(1, user_id).bind(2, now_ms).bind(3, std::string_view(counts));
    return insert->run();
  }

  // VACUUM builds the database again from its rows: the unused space of pages in use, where
  // SQLite leaves copies of rows it deleted or moved (a cell moved between pages when one
  // splits or merges, an older version of a row updated since) even with secure_delete,
  // holds nothing of the erased user afterwards, and the freed pages go back to the file
  // system (auto_vacuum is kept). It needs free disk for a copy of the database in the
  // temp directory and for the new pages in the WAL. Failing (no space), it changes
  // nothing: the erasure stays done and the copies stay where they were.
  std::string rewrite_file() {
    if (auto vacuumed = db_.exec("VACUUM"); !vacuumed) {
      return "file not rewritten (VACUUM failed: " + vacuumed.error() +
             "): unused space in pages in use may still hold copies of the erased rows; with free disk twice "
             "the file's size, run purge-user again for the same user";
    }
    return "file rewritten (VACUUM): freed pages returned to the file system, no copy of the erased rows left in "
           "the pages in use";
  }

  // The erasure's and the VACUUM's pages are in the WAL: until a checkpoint copies them,
  // the database file holds the pages from before (the user's rows), and the WAL itself
  // may hold older frames of them. The last connection to close would checkpoint, but a
  // process reading the file (a backend, as the docs allow) keeps it open. A TRUNCATE
  // checkpoint copies every frame and empties the WAL; it waits (the busy timeout,
  // commit_deadline_ms) for readers still on an older snapshot. "" when done, else what
  // is left where, and what to do.
  std::string checkpoint_wal() {
    const int code = sqlite3_wal_checkpoint_v2(db_.get(), "main", SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
    if (code == SQLITE_OK) return {};
    const std::string reason = code == SQLITE_BUSY ? "another process kept reading it for " +
                                                         std::to_string(db_.busy_timeout().count()) + " ms"
                                                   : "the checkpoint failed: " + db_.last_error();
    return named("FILE still holds pages from before the erasure, and FILE-wal frames of them (" + reason +
                 "); a checkpoint that completes overwrites them: when no process is in the middle of a read, run "
                 "`sqlite3 FILE 'PRAGMA wal_checkpoint(TRUNCATE)'` (done when it prints 0|0|0)");
  }

  // Databases created with auto_vacuum = INCREMENTAL (every new file: store/sqlite/
  // database.cpp) give the freed pages back to the file system now; older ones keep them
  // for reuse by later rows until converted (docs/erasure-and-retention.md, "Retention").
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

  // `text` with each FILE the database's path.
  std::string named(std::string_view text) const {
    std::string out;
    for (size_t at = 0;;) {
      const size_t found = text.find("FILE", at);
      out.append(text.substr(at, found == std::string_view::npos ? std::string_view::npos : found - at));
      if (found == std::string_view::npos) return out;
      out.append(path_);
      at = found + 4;
    }
  }

  sqlite::Connection db_;
  std::string path_;
};

}  // namespace

std::vector<std::string_view> sqlite_erasure_tables() {
  std::vector<std::string_view> tables;
  for (const schema::Table* erased : schema::erased_tables()) tables.push_back(erased->name);
  return tables;
}

Result<std::unique_ptr<Erasure>> open_sqlite_erasure(const std::string& path, int64_t busy_timeout_ms) {
  auto db = open_admin_connection(path, busy_timeout_ms);
  if (!db) return fail(db);
  // What the erasure deletes is overwritten in the file, whatever the SQLite build's
  // default (`serve` runs with FAST, which leaves freed overflow pages as they were).
  if (auto secure = db->exec("PRAGMA secure_delete = ON"); !secure) return fail(secure, path);
  return std::unique_ptr<Erasure>(new SqliteErasure(std::move(*db), path));
}

}  // namespace hh::store
