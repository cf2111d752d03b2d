#include "store/sqlite/sqlite_processing_store.h"

#include <string>

#include "store/sqlite/wal_checkpointer.h"
#include "store/unfinished_rebuild_sql.h"

namespace hh::store {
namespace {

// A catch-up checkpoints every 16,000 pages of WAL rather than every 1,000 as `serve` does
// (128 against 8 MiB with the 8 KiB pages of a new database, database.cpp): the pages it
// rewrites most (the newest leaf of each series, the change feed's last page) are copied
// once per checkpoint.
constexpr int kCatchUpCheckpointFrames = 16000;

std::string database_path(sqlite::Connection& db) {
  const char* path = sqlite3_db_filename(db.get(), "main");
  return path ? path : "";
}

}  // namespace

Result<std::unique_ptr<ProcessingStore>> open_sqlite_processing(sqlite::Connection& write_db,
                                                                std::span<const ForwardRule> forward_rules) {
  auto lock = ProcessingLock::acquire(write_db);
  if (!lock) return fail(lock);
  auto applied = write_db.prepare("SELECT applied_seq FROM processor_state WHERE id = 1");
  if (!applied) return fail(applied);
  auto newest = write_db.prepare("SELECT seq FROM inbox ORDER BY seq DESC LIMIT 1");
  if (!newest) return fail(newest);
  auto cursor = SqliteDeliveryCursor::create(write_db);
  if (!cursor) return fail(cursor);
  // One row per execution. The multi-row UPDATEs used before 004 only paid off because of
  // the IN (…) CHECK on deliveries.status (a temporary b-tree per execution); with the
  // OR-chain CHECK of delivery_outcomes a single-row insert is cheap
  // (docs/decisions/015-change-feed-batches-and-or-checks.md).
  auto outcome = write_db.prepare(
      "INSERT INTO delivery_outcomes (seq, status, family, error, user_id) VALUES (?1, ?2, ?3, ?4, ?5) "
      "ON CONFLICT (seq) DO UPDATE SET status = excluded.status, family = excluded.family, error = excluded.error, "
      "user_id = excluded.user_id");
  if (!outcome) return fail(outcome);
  // The step that applies an unfinished rebuild's last row clears its mark, in the same
  // transaction (store/unfinished_rebuild.h). (NULL >= ?1 is NULL: a NULL mark stays NULL.)
  auto advance = write_db.prepare(
      "UPDATE processor_state SET applied_seq = ?1, "
      "rebuild_through = CASE WHEN rebuild_through <= ?1 THEN NULL ELSE rebuild_through END WHERE id = 1");
  if (!advance) return fail(advance);
  auto durability = StepDurability::create(write_db);
  if (!durability) return fail(durability);
  auto writer = DerivedWriter::create(write_db);
  if (!writer) return fail(writer);
  (*writer)->defer_changes();  // written by write_changes() before each step commits
  auto entries = WriterEntries::create(write_db, forward_rules, ForwardMode::changes);
  if (!entries) return fail(entries);
  return std::unique_ptr<ProcessingStore>(new SqliteProcessingStore(
      write_db, database_path(write_db), std::move(*lock), *durability, std::move(*cursor), std::move(*writer),
      std::move(*entries), std::move(*applied), std::move(*newest), std::move(*outcome), std::move(*advance)));
}

SqliteProcessingStore::SqliteProcessingStore(sqlite::Connection& db, std::string path, ProcessingLock lock,
                                             StepDurability durability, SqliteDeliveryCursor cursor,
                                             std::unique_ptr<DerivedWriter> writer, WriterEntries entries,
                                             sqlite::Statement applied, sqlite::Statement newest,
                                             sqlite::Statement outcome, sqlite::Statement advance)
    : db_(db),
      path_(std::move(path)),
      lock_(std::move(lock)),
      durability_(durability),
      cursor_(std::move(cursor)),
      writer_(std::move(writer)),
      entries_(std::move(entries)),
      applied_(std::move(applied)),
      newest_(std::move(newest)),
      outcome_(std::move(outcome)),
      advance_(std::move(advance)) {}

Result<void> SqliteProcessingStore::write_changes() {
  return writer_->flush_changes();
}

Result<int64_t> SqliteProcessingStore::applied_seq() {
  auto row = applied_.step();
  if (!row) return fail(row);
  const int64_t seq = *row ? applied_.column_int(0) : 0;
  applied_.reset();
  if (!*row) return fail("processor_state has no row (database not migrated?)");
  return seq;
}

Result<std::optional<int64_t>> SqliteProcessingStore::unfinished_rebuild() {
  return db_.query_int(kUnfinishedRebuildSql);
}

Result<int64_t> SqliteProcessingStore::newest_seq() {
  auto row = newest_.step();
  if (!row) return fail(row);
  const int64_t seq = *row ? newest_.column_int(0) : 0;
  newest_.reset();
  return seq;
}

Result<void> SqliteProcessingStore::begin_step() {
  // BEGIN IMMEDIATE: takes the write lock now, so a busy database fails here, not later.
  if (auto begun = db_.exec("BEGIN IMMEDIATE"); !begun) return begun;
  writer_->discard_changes();  // left over from a step that rolled back
  return {};
}

// The step's changes are written (write_changes() comes first): their entries are made
// with the new position, while the writer makes them.
Result<void> SqliteProcessingStore::set_applied_seq(int64_t seq) {
  if (auto advanced = advance_.bind(1, seq).run(); !advanced) return advanced;
  return entries_.made_through(seq);
}

Result<void> SqliteProcessingStore::commit_step() { return db_.exec("COMMIT"); }

void SqliteProcessingStore::rollback_step() {
  // Should a ROLLBACK itself fail, the next BEGIN would fail for ever: only when one is open.
  if (sqlite3_get_autocommit(db_.get()) == 0) (void)db_.exec("ROLLBACK");
}

Result<void> SqliteProcessingStore::record_outcomes(std::span<const OutcomeUpdate> outcomes) {
  for (const OutcomeUpdate& outcome : outcomes) {
    outcome_.bind(1, outcome.seq).bind_static(2, outcome.status).bind_static(3, outcome.family);
    if (outcome.error.empty()) {
      outcome_.bind_null(4);
    } else {
      outcome_.bind_static(4, outcome.error);
    }
    if (outcome.user_id.empty()) {
      outcome_.bind_null(5);
    } else {
      outcome_.bind_static(5, outcome.user_id);
    }
    if (auto set = outcome_.run(); !set) {
      return fail(set.error_kind(),
                  "recording the outcome of delivery " + std::to_string(outcome.seq) + ": " + set.error());
    }
  }
  return {};
}

Result<std::unique_ptr<DeliveryCursor>> SqliteProcessingStore::open_reader(ReaderUse use) {
  if (path_.empty()) return fail(ErrorKind::unavailable, "no database file");
  return open_delivery_reader(path_, use);
}

Result<std::unique_ptr<Checkpointer>> SqliteProcessingStore::start_catch_up_checkpointer() {
  if (path_.empty()) return fail(ErrorKind::unavailable, "no database file");
  auto started = WalCheckpointer::start(db_, path_, kCatchUpCheckpointFrames);
  if (!started) return fail(started);
  return std::unique_ptr<Checkpointer>(std::move(*started));
}

}  // namespace hh::store
