#pragma once
// Applies one parsed delivery (events::DeliveryRows) to the derived tables of a PostgreSQL
// store: the PostgreSQL twin of store/sqlite/derived/derived_writer.h, with the same
// public API and the same rows, change feed, counts and jobs for the same calls. Which
// row goes where is shared (store/derived/apply_delivery.h); this class supplies the
// PostgreSQL parts (latest wins in one round trip per row, a batch of samples or a
// stream's points in one statement, the feed buffered into one insert per flush).
// Everything is written on the caller's open transaction: the caller commits, or rolls
// back on any failure.
//
// Lifetime: the connection must outlive this object and have the schema migrated. Used
// on the writer thread only. Not copyable (the series-id and user caches). Statements are
// prepared on the connection under fixed names ("hh_derived_…"), once per connection.
// apply() runs its own statements and pipelines: call it with the connection out of
// pipeline mode (not between a caller's Pipeline::begin and finish).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "events/event_rows.h"
#include "store/postgres/connection.h"
#include "store/postgres/derived/pg_change_feed.h"
#include "store/postgres/derived/pg_follow_up_jobs.h"
#include "store/postgres/derived/pg_record_tables.h"
#include "store/postgres/derived/pg_sample_writer.h"
#include "store/postgres/derived/pg_stream_writer.h"
#include "store/postgres/derived/pg_user_table.h"
#include "store/processing_store.h"

namespace hh::store {

class PgDerivedWriter {
 public:
  // Prepares the statements; call it outside a transaction or in one that may fail.
  static Result<std::unique_ptr<PgDerivedWriter>> create(pg::Connection& db);
  PgDerivedWriter(const PgDerivedWriter&) = delete;
  PgDerivedWriter& operator=(const PgDerivedWriter&) = delete;

  // Applies `rows` of the delivery `seq`, received at `received_at_ms`, on the caller's
  // open transaction. On failure some rows may be written and the transaction may be
  // aborted: roll back, then call discard_changes() and forget_cached_ids().
  // ErrorKind::data when the delivery itself is the cause (its values break a constraint,
  // its stream cannot be read); another kind for the store (busy, full, unavailable).
  Result<ApplyCounts> apply(const events::DeliveryRows& rows, int64_t seq, int64_t received_at_ms);

  // The processor's mode: change-feed rows are buffered and inserted by flush_changes(),
  // which must run before the transaction commits; after a rollback, discard_changes()
  // drops what the failed attempt buffered.
  void defer_changes() { feed_.set_deferred(true); }
  Result<void> flush_changes() { return feed_.flush(); }
  void discard_changes() { feed_.discard(); }

  // Series ids and user rows remembered from a rolled-back transaction, or from tables
  // that were emptied (rebuild), must not be used again.
  void forget_cached_ids() {
    samples_.forget_cached_ids();
    users_.forget_cached_rows();
  }

 private:
  PgDerivedWriter(PgRecordTables records, PgUserTable users, PgSampleWriter samples, PgStreamWriter streams,
                  PgFollowUpJobs jobs, PgChangeFeed feed)
      : records_(std::move(records)),
        users_(std::move(users)),
        samples_(std::move(samples)),
        streams_(std::move(streams)),
        jobs_(std::move(jobs)),
        feed_(std::move(feed)) {}

  PgRecordTables records_;
  PgUserTable users_;
  PgSampleWriter samples_;
  PgStreamWriter streams_;
  PgFollowUpJobs jobs_;
  PgChangeFeed feed_;
  std::vector<SeriesChange> series_changes_;  // reused per delivery
  std::string key_;                           // reused
};

}  // namespace hh::store
