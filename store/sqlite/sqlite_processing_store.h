#pragma once
// The ProcessingStore (store/processing_store.h) on the SQLite write connection: the
// processor's position in processor_state, outcomes in delivery_outcomes, derived rows
// through DerivedWriter, steps as BEGIN IMMEDIATE transactions.
//
// Lifetime: `write_db` must outlive this object; used on the thread that owns it.
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/result.h"
#include "store/processing_store.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/delivery_cursor.h"
#include "store/sqlite/derived/sqlite_derived_writer.h"
#include "store/sqlite/outbox/outbox_entries.h"
#include "store/sqlite/processing_lock.h"
#include "store/sqlite/step_durability.h"

namespace hh::store {

// Takes the processing lock of the database file behind `write_db` (processing_lock.h).
// Each step makes the changes-mode outbox entries of `forward_rules` for its changes
// (while the writer makes them: store/outbox.h).
Result<std::unique_ptr<ProcessingStore>> open_sqlite_processing(sqlite::Connection& write_db,
                                                                std::span<const ForwardRule> forward_rules = {});

// Empties the derived tables, resets the processor's position and marks the rebuild
// unfinished, in one transaction on `write_db` (ProcessingStore::reset_derived). A lock held elsewhere: ErrorKind::busy.
Result<void> reset_derived(sqlite::Connection& write_db, ResetOptions options);

class SqliteProcessingStore final : public ProcessingStore {
 public:
  Result<bool> take_lead() override { return true; }  // the lock was taken on open
  Result<int64_t> applied_seq() override;
  Result<int64_t> newest_seq() override;

  Result<void> begin_step() override;
  Result<void> commit_step() override;
  void rollback_step() override;

  DeliveryCursor& deliveries() override { return cursor_; }
  Result<ApplyCounts> apply(const rows::DeliveryRows& rows, int64_t seq, int64_t received_at_ms) override {
    return writer_->apply(rows, seq, received_at_ms);
  }
  // Steps run on the writer thread, and an ack waits for the step in front of its commit:
  // a slice of 20,000 points took 0.1-0.25 s on a busy 2-core VM, where a 3.3 million point
  // stream applied at once held the inbox for 22 s (docs/decisions/094-long-streams-applied-in-slices.md).
  static constexpr size_t kStreamSlicePoints = 20000;
  size_t stream_slice_points() const override { return kStreamSlicePoints; }
  Result<void> write_changes() override;
  Result<void> record_outcomes(std::span<const OutcomeUpdate> outcomes) override;
  Result<void> set_applied_seq(int64_t seq) override;
  void forget_cached_ids() override { writer_->forget_cached_ids(); }

  Result<void> relax_step_sync() override { return durability_.relax(); }
  Result<void> restore_step_sync() override { return durability_.restore(); }

  bool has_helpers() const override { return !path_.empty(); }
  Result<std::unique_ptr<DeliveryCursor>> open_reader(ReaderUse use) override;
  Result<std::unique_ptr<Checkpointer>> start_catch_up_checkpointer() override;

  Result<void> reset_derived(ResetOptions options) override { return store::reset_derived(db_, options); }
  Result<std::optional<int64_t>> unfinished_rebuild() override;

 private:
  friend Result<std::unique_ptr<ProcessingStore>> open_sqlite_processing(sqlite::Connection& write_db,
                                                                         std::span<const ForwardRule> forward_rules);
  SqliteProcessingStore(sqlite::Connection& db, std::string path, ProcessingLock lock, StepDurability durability,
                        SqliteDeliveryCursor cursor, std::unique_ptr<DerivedWriter> writer, WriterEntries entries,
                        sqlite::Statement applied, sqlite::Statement newest, sqlite::Statement outcome,
                        sqlite::Statement advance);

  sqlite::Connection& db_;
  const std::string path_;  // the database file ("" for an in-memory or temporary one)
  ProcessingLock lock_;
  StepDurability durability_;
  SqliteDeliveryCursor cursor_;
  std::unique_ptr<DerivedWriter> writer_;
  WriterEntries entries_;  // changes-mode forwarding entries, made when a step sets applied_seq
  sqlite::Statement applied_, newest_;
  sqlite::Statement outcome_;  // upsert of one delivery_outcomes row
  sqlite::Statement advance_;
};

}  // namespace hh::store
