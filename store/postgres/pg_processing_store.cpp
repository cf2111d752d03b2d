#include "store/postgres/pg_processing_store.h"

#include <chrono>
#include <optional>
#include <string>

#include "store/postgres/database.h"
#include "store/postgres/derived/pg_derived_tables.h"
#include "store/postgres/derived/pg_derived_writer.h"
#include "store/postgres/inbox_horizon.h"
#include "store/postgres/outbox/pg_outbox_writer.h"
#include "store/postgres/pg_delivery_cursor.h"
#include "store/postgres/processing_locks.h"
#include "store/unfinished_rebuild_sql.h"

namespace hh::store {
namespace {

constexpr const char* kRecordOutcome =
    "INSERT INTO delivery_outcomes (seq, status, family, error, user_id) VALUES ($1, $2, $3, $4, $5) "
    "ON CONFLICT (seq) DO UPDATE SET status = excluded.status, family = excluded.family, error = excluded.error, "
    "user_id = excluded.user_id";

constexpr const char* kLeadTaken =
    "the store is being processed by another healthhook instance or command (a `serve`, `rebuild` or `replay`)";

// Each shard's position (the greater of its own and processor_state's, which instances of
// the version before shards move: migration 008).
constexpr const char* kShardPositions =
    "SELECT p.shard, greatest(p.applied_seq, s.applied_seq) FROM processor_shards AS p "
    "CROSS JOIN processor_state AS s WHERE s.id = 1";
// $1 the new position, $2 the owned shards; then processor_state to the lowest shard
// position, as this statement sees the others' (committed ones, never ahead of them):
// what an instance of the previous version would start from, and what a tool that reads
// processor_state sees. An unfinished rebuild's mark goes once that position reaches it
// (store/unfinished_rebuild.h), in the step that moves it there. Written last in a step:
// the row lock it takes is held only until the commit that follows.
constexpr const char* kSetPositions =
    "WITH moved AS (UPDATE processor_shards SET applied_seq = greatest(applied_seq, $1) "
    "WHERE shard = ANY ($2::bigint[]) RETURNING applied_seq) "
    "UPDATE processor_state SET applied_seq = greatest(processor_state.applied_seq, m.lowest), "
    "rebuild_through = CASE WHEN processor_state.rebuild_through <= m.lowest THEN NULL "
    "ELSE processor_state.rebuild_through END FROM (SELECT min(p.applied_seq) AS lowest FROM "
    "(SELECT applied_seq FROM moved UNION ALL "
    "SELECT applied_seq FROM processor_shards WHERE shard <> ALL ($2::bigint[])) AS p) AS m "
    "WHERE id = 1 AND (processor_state.applied_seq < m.lowest OR processor_state.rebuild_through <= m.lowest)";

// The same, between steps: two steps committing at once each see the other's old position,
// and an idle store would keep the lower one (and an unfinished rebuild's mark).
constexpr const char* kCatchUpState =
    "UPDATE processor_state SET applied_seq = greatest(applied_seq, hh_processed_seq()), "
    "rebuild_through = CASE WHEN rebuild_through <= hh_processed_seq() THEN NULL ELSE rebuild_through END "
    "WHERE id = 1 AND (applied_seq < hh_processed_seq() OR rebuild_through <= hh_processed_seq())";
constexpr auto kCatchUpStateEvery = std::chrono::seconds(1);

class PgProcessingStore final : public ProcessingStore {
 public:
  PgProcessingStore(std::unique_ptr<pg::Connection> own_session, pg::Connection& db, Database database,
                    std::unique_ptr<ProcessingLocks> locks, std::unique_ptr<PgDerivedWriter> writer,
                    PgOutboxWriter outbox)
      : own_session_(std::move(own_session)), db_(db), database_(std::move(database)), locks_(std::move(locks)),
        horizon_(db), cursor_(db, &locks_->shards()), writer_(std::move(writer)), outbox_(std::move(outbox)) {}

  Result<bool> take_lead() override {
    if (auto open = db_.reconnect_if_broken(); !open) return fail(open);
    if (locks_->shards().count() > 0 && !locks_->held()) {
      // Lost with the old connection: ask again next time (the processor first stands by,
      // then re-reads the applied position others may have moved).
      locks_->forget();
      return false;
    }
    const uint64_t before = locks_->version();
    auto taken = locks_->acquire();
    // Series ids and newest sample times cached while other sessions applied some shards
    // may be stale; a rebalance that failed half-way may have moved shards too.
    if (locks_->version() != before) writer_->forget_cached_ids();
    if (!taken) return fail(taken);
    if (*taken && !locks_->shards().all()) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= next_state_catch_up_) {
        next_state_catch_up_ = now + kCatchUpStateEvery;
        if (auto caught_up = db_.exec(kCatchUpState); !caught_up) return fail(caught_up);
      }
    }
    return *taken;
  }
  uint64_t lead_version() const override { return locks_->version(); }
  int owned_shards() const override { return locks_->held() ? locks_->shards().count() : 0; }

  // The lowest position of the owned shards (of all of them while none is owned); the
  // cursor reads each shard's own.
  Result<int64_t> applied_seq() override {
    if (auto open = db_.reconnect_if_broken(); !open) return fail(open);
    auto rows = db_.query(kShardPositions);
    if (!rows) return fail(rows);
    if (rows->size() != pgshard::kShardCount) {
      return fail("processor_shards has not one row per shard (database not migrated?)");
    }
    pgshard::OwnedShards& shards = locks_->shards();
    const bool none = shards.count() == 0;
    std::optional<int64_t> lowest;
    for (int r = 0; r < rows->size(); ++r) {
      const auto shard = static_cast<size_t>(rows->integer(r, 0));
      if (shard >= shards.applied.size()) return fail("processor_shards holds an unknown shard");
      shards.applied[shard] = rows->integer(r, 1);
      if (none || shards.owned[shard]) {
        lowest = std::min(lowest.value_or(shards.applied[shard]), shards.applied[shard]);
      }
    }
    return lowest.value_or(0);
  }
  // The horizon, not the newest row: see inbox_horizon.h.
  Result<int64_t> newest_seq() override {
    if (auto open = db_.reconnect_if_broken(); !open) return fail(open);
    return horizon_.advance();
  }

  Result<void> begin_step() override {
    if (!locks_->held() || locks_->shards().count() == 0) return fail(ErrorKind::busy, kLeadTaken);
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
      writer_->forget_cached_ids();
      return fail(ErrorKind::other, "the step was rolled back after an earlier error");
    }
    return {};
  }
  void rollback_step() override {
    if (!in_step_) return;
    (void)db_.exec("ROLLBACK");
    in_step_ = false;
    // What the writer cached from the step (series ids, their newest sample times) went
    // with it; the processor forgets too, but a stale newest time must never outlive a
    // rollback, whoever rolls back.
    writer_->forget_cached_ids();
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
  // Every owned shard's rows up to `seq` were read by the step (those of a shard already
  // past it were skipped): each moves to it, or stays where it is ahead.
  Result<void> set_applied_seq(int64_t seq) override {
    const pgshard::OwnedShards& shards = locks_->shards();
    auto set = db_.query(kSetPositions, pg::Params().add(seq).add(shards.array_literal()));
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
    return open_postgres_delivery_reader(database_, locks_->shards());
  }
  // The server checkpoints by itself.
  Result<std::unique_ptr<Checkpointer>> start_catch_up_checkpointer() override {
    return std::unique_ptr<Checkpointer>();
  }

  Result<void> reset_derived(ResetOptions options) override { return reset_postgres_derived(db_, options); }
  Result<std::optional<int64_t>> unfinished_rebuild() override {
    if (auto open = db_.reconnect_if_broken(); !open) return fail(open);
    return db_.query_int(kUnfinishedRebuildSql);
  }

 private:
  std::unique_ptr<pg::Connection> own_session_;  // null on the store's write connection; destroyed last
  pg::Connection& db_;                           // *own_session_ or the store's
  const Database database_;
  std::unique_ptr<ProcessingLocks> locks_;  // owns no shard while others apply them all
  InboxHorizon horizon_;
  PgDeliveryCursor cursor_;
  std::unique_ptr<PgDerivedWriter> writer_;
  PgOutboxWriter outbox_;              // changes-mode entries, in each step's transaction
  std::chrono::steady_clock::time_point next_state_catch_up_{};
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
  // A command holds the store alone; `serve`s share it, a fair share of the shards each.
  auto locks = std::make_unique<ProcessingLocks>(
      db, leadership == Leadership::now ? ProcessingLocks::Kind::exclusive : ProcessingLocks::Kind::shared);
  auto taken = locks->acquire(true);
  if (!taken) return fail(taken);
  if (!*taken && leadership == Leadership::now) return fail(ErrorKind::in_use, kLeadTaken);
  auto writer = PgDerivedWriter::create(db);
  if (!writer) return fail(writer);
  (*writer)->defer_changes();  // written by write_changes() before each step commits
  auto outbox = PgOutboxWriter::create(db, {forward_rules.begin(), forward_rules.end()});
  if (!outbox) return fail(outbox);
  return std::unique_ptr<ProcessingStore>(
      new PgProcessingStore(std::move(own_session), db, database, std::move(locks), std::move(*writer),
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
  // Unfinished until the newest row is applied again (store/unfinished_rebuild.h).
  if (auto reset = db.exec("UPDATE processor_state SET applied_seq = 0, "
                           "rebuild_through = (SELECT max(seq) FROM inbox) WHERE id = 1");
      !reset) {
    return reset;
  }
  if (auto reset = db.exec("UPDATE processor_shards SET applied_seq = 0"); !reset) return reset;
  return txn->commit();
}

}  // namespace hh::store
