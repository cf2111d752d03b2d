#include "store/postgres/pg_processing_store.h"

#include <optional>
#include <string>

#include "store/postgres/database.h"
#include "store/postgres/derived/pg_derived_tables.h"
#include "store/postgres/derived/pg_derived_writer.h"
#include "store/postgres/inbox_horizon.h"
#include "store/postgres/outbox/pg_outbox_writer.h"
#include "store/postgres/pg_delivery_cursor.h"

namespace hh::store {
namespace {

constexpr const char* kRecordOutcome =
    "INSERT INTO delivery_outcomes (seq, status, family, error, user_id) VALUES ($1, $2, $3, $4, $5) "
    "ON CONFLICT (seq) DO UPDATE SET status = excluded.status, family = excluded.family, error = excluded.error, "
    "user_id = excluded.user_id";

constexpr const char* kLeadTaken =
    "the store is being processed by another healthhook instance or command (a `serve`, `rebuild` or `replay`)";

// The session lock of the processing leader; released by unlock or the session's end.
class LeaderLock {
 public:
  // nullopt while another session holds it.
  static Result<std::optional<LeaderLock>> try_acquire(pg::Connection& db) {
    auto locked = db.query("SELECT pg_try_advisory_lock($1)", pg::Params().add(kProcessingLock));
    if (!locked) return fail(locked);
    if (!locked->boolean(0, 0)) return std::optional<LeaderLock>();
    return std::optional<LeaderLock>(LeaderLock(&db));
  }
  LeaderLock(LeaderLock&& other) noexcept : db_(other.db_), generation_(other.generation_) { other.db_ = nullptr; }
  LeaderLock& operator=(LeaderLock&&) = delete;
  ~LeaderLock() {
    if (db_ != nullptr && held()) {
      (void)db_->query("SELECT pg_advisory_unlock($1)", pg::Params().add(kProcessingLock));
    }
  }
  // False once the connection was opened again: the session that held the lock is gone,
  // and another instance may have taken it.
  bool held() const { return db_->generation() == generation_; }

 private:
  explicit LeaderLock(pg::Connection* db) : db_(db), generation_(db->generation()) {}
  pg::Connection* db_;
  uint64_t generation_;
};

class PgProcessingStore final : public ProcessingStore {
 public:
  PgProcessingStore(std::unique_ptr<pg::Connection> own_session, pg::Connection& db, Database database,
                    std::optional<LeaderLock> lock, std::unique_ptr<PgDerivedWriter> writer, PgOutboxWriter outbox)
      : own_session_(std::move(own_session)), db_(db), database_(std::move(database)), lock_(std::move(lock)),
        horizon_(db), cursor_(db), writer_(std::move(writer)), outbox_(std::move(outbox)) {}

  Result<bool> take_lead() override {
    if (auto open = db_.reconnect_if_broken(); !open) return fail(open);
    if (lock_ && !lock_->held()) {
      // Lost with the old connection: ask again next time (the processor first stands by,
      // then re-reads the applied position another leader may have moved).
      lock_.reset();
      return false;
    }
    if (lock_) return true;
    auto taken = LeaderLock::try_acquire(db_);
    if (!taken) return fail(taken);
    if (!*taken) return false;
    lock_.emplace(std::move(**taken));
    // What the last leader cached (series ids of its own) was never ours; ours may be stale.
    writer_->forget_cached_ids();
    return true;
  }

  Result<int64_t> applied_seq() override {
    if (auto open = db_.reconnect_if_broken(); !open) return fail(open);
    auto seq = db_.query_int("SELECT applied_seq FROM processor_state WHERE id = 1");
    if (!seq) return fail(seq);
    if (!*seq) return fail("processor_state has no row (database not migrated?)");
    return **seq;
  }
  // The horizon, not the newest row: see inbox_horizon.h.
  Result<int64_t> newest_seq() override {
    if (auto open = db_.reconnect_if_broken(); !open) return fail(open);
    return horizon_.advance();
  }

  Result<void> begin_step() override {
    if (!lock_ || !lock_->held()) return fail(ErrorKind::busy, kLeadTaken);
    // Relaxed steps commit without waiting for the server's WAL flush: the next
    // synchronous commit on the server (any instance's ingest) flushes them too, in order,
    // and a step lost in a server crash is applied again from the position that was lost
    // with it (store/sqlite/step_durability.h: the same reasoning for SQLite).
    // READ COMMITTED whatever the database's default_transaction_isolation: new ids are
    // max(id) + 1 read after the lock on new ids (lock_new_ids, pg_statements.h), which
    // sees what another session committed only if each statement takes a new snapshot.
    auto begun = db_.exec(relaxed_ ? "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL synchronous_commit = off"
                                   : "BEGIN ISOLATION LEVEL READ COMMITTED");
    if (!begun) return begun;
    in_step_ = true;
    writer_->discard_changes();  // left over from a step that rolled back; the count starts again
    return {};
  }
  Result<void> commit_step() override {
    auto committed = db_.query("COMMIT");
    if (!committed) return fail(committed);
    in_step_ = false;
    if (std::string_view(PQcmdStatus(committed->get())) != "COMMIT") {
      return fail(ErrorKind::other, "the step was rolled back after an earlier error");
    }
    return {};
  }
  void rollback_step() override {
    if (!in_step_) return;
    (void)db_.exec("ROLLBACK");
    in_step_ = false;
  }

  DeliveryCursor& deliveries() override { return cursor_; }
  Result<ApplyCounts> apply(const rows::DeliveryRows& rows, int64_t seq, int64_t received_at_ms) override {
    return writer_->apply(rows, seq, received_at_ms);
  }
  Result<void> write_changes() override {
    if (auto flushed = writer_->flush_changes(); !flushed) return flushed;
    return outbox_.active() ? outbox_.changes(writer_->changes_inserted()) : Result<void>{};
  }
  Result<void> record_outcomes(std::span<const OutcomeUpdate> outcomes) override;
  Result<void> set_applied_seq(int64_t seq) override {
    auto set = db_.query("UPDATE processor_state SET applied_seq = $1 WHERE id = 1", pg::Params().add(seq));
    if (!set) return fail(set);
    return {};
  }
  void forget_cached_ids() override { writer_->forget_cached_ids(); }

  Result<void> relax_step_sync() override {
    relaxed_ = true;
    return {};
  }
  Result<void> restore_step_sync() override {
    relaxed_ = false;
    return {};
  }

  bool has_helpers() const override { return true; }
  Result<std::unique_ptr<DeliveryCursor>> open_reader(ReaderUse) override {
    return open_postgres_delivery_reader(database_);
  }
  // The server checkpoints by itself.
  Result<std::unique_ptr<Checkpointer>> start_catch_up_checkpointer() override {
    return std::unique_ptr<Checkpointer>();
  }

  Result<void> reset_derived(ResetOptions options) override { return reset_postgres_derived(db_, options); }

 private:
  std::unique_ptr<pg::Connection> own_session_;  // null on the store's write connection; destroyed last
  pg::Connection& db_;                           // *own_session_ or the store's
  const Database database_;
  std::optional<LeaderLock> lock_;  // none while another instance leads (Leadership::when_free)
  InboxHorizon horizon_;
  PgDeliveryCursor cursor_;
  std::unique_ptr<PgDerivedWriter> writer_;
  PgOutboxWriter outbox_;              // changes-mode entries, in each step's transaction
  bool relaxed_ = false;
  bool in_step_ = false;
  bool outcome_prepared_ = false;
};

Result<void> PgProcessingStore::record_outcomes(std::span<const OutcomeUpdate> outcomes) {
  if (outcomes.empty()) return {};
  if (!outcome_prepared_) {
    if (auto p = db_.prepare("hh_record_outcome", kRecordOutcome); !p) return p;
    outcome_prepared_ = true;
  }
  // One round trip for the step's outcomes.
  auto pipeline = pg::Pipeline::begin(db_);
  if (!pipeline) return fail(pipeline);
  for (const OutcomeUpdate& outcome : outcomes) {
    pg::Params params;
    params.add(outcome.seq).add(outcome.status).add(outcome.family);
    if (outcome.error.empty()) {
      params.add_null();
    } else {
      params.add(outcome.error);
    }
    if (outcome.user_id.empty()) {
      params.add_null();
    } else {
      params.add(outcome.user_id);
    }
    if (auto sent = pipeline->send_prepared("hh_record_outcome", params); !sent) return sent;
  }
  auto done = pipeline->finish();
  if (!done) return fail(done, "recording outcomes");
  return {};
}

// `own_session`: null, or the connection `db` is (then the store owns it).
Result<std::unique_ptr<ProcessingStore>> open_on(std::unique_ptr<pg::Connection> own_session, pg::Connection& db,
                                                 const Database& database, Leadership leadership,
                                                 std::span<const ForwardRule> forward_rules) {
  auto lock = LeaderLock::try_acquire(db);
  if (!lock) return fail(lock);
  if (!*lock && leadership == Leadership::now) return fail(ErrorKind::busy, kLeadTaken);
  auto writer = PgDerivedWriter::create(db);
  if (!writer) return fail(writer);
  (*writer)->defer_changes();  // written by write_changes() before each step commits
  auto outbox = PgOutboxWriter::create(db, {forward_rules.begin(), forward_rules.end()});
  if (!outbox) return fail(outbox);
  return std::unique_ptr<ProcessingStore>(
      new PgProcessingStore(std::move(own_session), db, database, std::move(*lock), std::move(*writer),
                            std::move(*outbox)));
}

}  // namespace

Result<std::unique_ptr<ProcessingStore>> open_postgres_processing(pg::Connection& db, const Database& database,
                                                                  Leadership leadership,
                                                                  std::span<const ForwardRule> forward_rules) {
  return open_on(nullptr, db, database, leadership, forward_rules);
}

Result<std::unique_ptr<ProcessingStore>> open_postgres_processing_session(pg::Connection session,
                                                                          const Database& database,
                                                                          Leadership leadership,
                                                                          std::span<const ForwardRule> forward_rules) {
  auto owned = std::make_unique<pg::Connection>(std::move(session));
  pg::Connection& db = *owned;
  return open_on(std::move(owned), db, database, leadership, forward_rules);
}

Result<void> reset_postgres_derived(pg::Connection& db, ResetOptions options) {
  auto txn = pg::Transaction::begin(db);
  if (!txn) return fail(txn);
  if (auto cleared = clear_derived_tables(db); !cleared) return cleared;
  if (!options.keep_statuses) {
    if (auto reset = db.exec("DELETE FROM delivery_outcomes"); !reset) return reset;
  }
  if (auto reset = db.exec("UPDATE processor_state SET applied_seq = 0 WHERE id = 1"); !reset) return reset;
  return txn->commit();
}

}  // namespace hh::store
