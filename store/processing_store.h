#pragma once
// What the event processor (processor/processor.h) asks of the store: the inbox in seq
// order after the applied position, the derived rows of each delivery, each delivery's
// outcome, and the applied position itself, all inside one transaction per step; a
// reader of its own for a parse thread running ahead; the reset that starts a rebuild.
//
// Holding a ProcessingStore is holding the store's processing lock: at most one exists
// per store, across processes, so a rebuild cannot empty the tables under a running
// server (opening a second one fails and says so).
//
// Hot path: one next() per delivery read (its views point into the store's buffers, no
// copy of the body), one apply() per delivery with all of its rows, one
// record_outcomes() per step.
//
// Lifetime: the Store that opened it must outlive it; used on one thread (the writer
// thread in `serve`).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/durability.h"

namespace hh::store {

// What the store says about a delivery before this step: a status that would not change
// is not written again (each write of a delivery may rewrite its whole row, body included).
struct StoredOutcome {
  std::string_view status;
  std::optional<std::string_view> family;
  std::optional<std::string_view> error;
  std::optional<std::string_view> user_id;
};

// One inbox row as the processor reads it.
struct PendingDelivery {
  rows::InboxRow row;  // views valid until the cursor's next next() or finish()
  int64_t received_at_ms = 0;
  StoredOutcome stored;
  // Retention removed its body and headers (store/body_retention.h): there is nothing to
  // apply, and the stored outcome stands.
  bool body_removed = false;
};

// A delivery's new status, family, error and user ("" = none), for record_outcomes(). The
// user (whom the delivery names) is what `purge-user` finds the inbox row by (spec §11).
struct OutcomeUpdate {
  int64_t seq = 0;
  std::string_view status;
  std::string_view family;
  std::string_view error;
  std::string_view user_id;
};

// What applying one delivery wrote.
struct ApplyCounts {
  int64_t rows_seen = 0;        // derived rows the delivery carried (samples, points, records): bounds a step
  int64_t rows_written = 0;     // of those, inserted or replaced (stale versions excluded)
  int64_t samples_written = 0;  // samples inserted or replaced
  int64_t jobs_queued = 0;      // jobs queued or re-queued
  // The delivery was a slice of a fetched stream before its last (rows::StreamSlice): it is
  // not applied until its last slice is.
  bool unfinished = false;
};

// Reads inbox rows in seq order.
class DeliveryCursor {
 public:
  virtual ~DeliveryCursor() = default;
  // Reads the rows with `after` < seq <= `last` in seq order, at most `limit` of them.
  virtual void start(int64_t after, int64_t last, int64_t limit) = 0;
  // False when there are no more rows.
  virtual Result<bool> next(PendingDelivery& pending) = 0;
  // Ends the read: required before the step writes, and to let a reader's snapshot go.
  virtual void finish() = 0;
};

// What a reader of its own is for: `catch_up` reads most of the inbox (the backend may
// read in bulk), `follow` reads the newest rows as they are committed.
enum class ReaderUse { catch_up, follow };

struct ResetOptions {
  // false: every delivery goes back to 'pending' (its outcome forgotten), so the inbox
  // says nothing is applied. true: each delivery keeps its outcome until it is applied
  // again, and the step writes only those that change (what `rebuild` does: far fewer
  // writes when little changes). The applied position says what is applied either way.
  bool keep_statuses = false;
};

class ProcessingStore {
 public:
  virtual ~ProcessingStore() = default;

  // Whether this process may apply the inbox now. Opened with Leadership::now, always; with
  // Leadership::when_free, once it has taken the processing lock, which it tries to here
  // (cheap; call again later when false: another instance applies the inbox meanwhile).
  virtual Result<bool> take_lead() = 0;
  // Changes whenever what this store applies changes (PostgreSQL: the shards of users this
  // session owns, store/postgres/processing_locks.h): the caller then reads applied_seq()
  // again and restarts what it read ahead. Constant where one process applies everything.
  virtual uint64_t lead_version() const { return 0; }
  // How many of PostgreSQL's 16 shards of users this session applies; -1 where one process
  // applies everything (SQLite).
  virtual int owned_shards() const { return -1; }

  // Every delivery up to it has been applied (0: none): of the shards this session owns,
  // where sessions share the store (then later rows of a shard may be applied too, and
  // the cursor skips them).
  virtual Result<int64_t> applied_seq() = 0;
  // The newest inbox row (0 for an empty inbox).
  virtual Result<int64_t> newest_seq() = 0;

  // One step's transaction. begin_step() takes the write lock (busy: ErrorKind::busy) and
  // drops change-feed rows a rolled-back step left buffered. rollback_step() does nothing
  // when no step is open (so it is safe after any failure). A failed commit leaves the
  // step open: roll it back.
  virtual Result<void> begin_step() = 0;
  virtual Result<void> commit_step() = 0;
  virtual void rollback_step() = 0;

  // Inside a step: the inbox on the step's own transaction.
  virtual DeliveryCursor& deliveries() = 0;
  // Applies `rows` of the delivery `seq` (latest-wins upserts, change feed, follow-up
  // jobs: store/derived/derived_writer.h). A failure caused by the delivery
  // itself (a constraint, a stream that cannot be read) has ErrorKind::data: retrying
  // cannot succeed. On failure some rows may be written: roll back, then forget_cached_ids().
  virtual Result<ApplyCounts> apply(const rows::DeliveryRows& rows, int64_t seq, int64_t received_at_ms) = 0;
  // A fetched stream of more points than this is applied in slices of this many points,
  // one step each (rows::StreamSlice; the processor hands them to apply()); 0: every
  // stream in one step. SQLite's steps run on the writer thread, which commits the inbox
  // only between them; PostgreSQL's run on a thread of their own (processor/processing_thread.h).
  virtual size_t stream_slice_points() const { return 0; }
  // Writes the change-feed rows the step's apply() calls buffered; before commit_step().
  virtual Result<void> write_changes() = 0;
  virtual Result<void> record_outcomes(std::span<const OutcomeUpdate> outcomes) = 0;
  virtual Result<void> set_applied_seq(int64_t seq) = 0;
  // Ids remembered from rows that a rollback or a reset removed must not be used again.
  virtual void forget_cached_ids() = 0;

  // Around live steps: their commits need no sync of their own (the next synced commit
  // covers them; store/sqlite/step_durability.h says why that is safe). relax() before
  // the step, restore() after its commit or rollback.
  virtual Result<void> relax_step_sync() = 0;
  virtual Result<void> restore_step_sync() = 0;

  // Whether helpers with connections of their own (a reader, a checkpointer) can be
  // started at all (SQLite: not for a database without a file).
  virtual bool has_helpers() const = 0;
  // A reader with its own connection, for a thread: reads what is committed, alongside
  // the steps.
  virtual Result<std::unique_ptr<DeliveryCursor>> open_reader(ReaderUse use) = 0;
  // A checkpointer at CheckpointPace::catching_up, whose finishing the caller runs
  // between its steps. Create and destroy it between steps. Null when the backend needs
  // none (PostgreSQL checkpoints by itself).
  virtual Result<std::unique_ptr<Checkpointer>> start_catch_up_checkpointer() = 0;

  // `rebuild`: empties the derived tables (not the inbox, not jobs), resets outcomes (see
  // ResetOptions) and the applied position to 0, and records the rebuild as unfinished up
  // to the newest inbox row (store/unfinished_rebuild.h), in one transaction. The step
  // whose set_applied_seq() reaches that row clears the record in its own transaction
  // (on PostgreSQL, once the lowest shard position reaches it).
  virtual Result<void> reset_derived(ResetOptions options) = 0;
  // The inbox row an unfinished rebuild must still apply again before the derived tables
  // are whole; none when they are. The whole store's, whichever shards this session
  // applies. Outside a step; one short read.
  virtual Result<std::optional<int64_t>> unfinished_rebuild() = 0;
};

}  // namespace hh::store
