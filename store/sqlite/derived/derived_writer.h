#pragma once
// Applies one parsed delivery (events::DeliveryRows) to the derived tables: latest-wins
// upserts keyed as in 002-derived.sql and 005-identity.sql (the user the delivery names:
// user_table.h; provider lists), one change-feed row per change, and the follow-up jobs
// the delivery asks for (follow_up_jobs.h). Which row goes where is shared with the
// PostgreSQL writer (store/derived/apply_delivery.h); this class supplies the SQLite parts.
// Everything is written on the caller's transaction: the caller commits, or rolls back on
// any failure.
//
// Order independence: a row is replaced only by a higher seq, so applying the same
// deliveries in any order leaves the same tables (the change feed differs: it records
// what happened). The processor applies in seq order, which makes the feed reproducible
// too: `rebuild` re-creates it row for row.
//
// Lifetime: the connection must outlive this object and have the schema migrated. Used
// on the writer thread only. Not copyable (prepared statements, the series-id cache).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "events/event_rows.h"
#include "store/processing_store.h"
#include "store/sqlite/derived/change_feed.h"
#include "store/sqlite/derived/follow_up_jobs.h"
#include "store/sqlite/derived/record_tables.h"
#include "store/sqlite/derived/sample_writer.h"
#include "store/sqlite/derived/stream_writer.h"
#include "store/sqlite/derived/user_table.h"

namespace hh::store {

class DerivedWriter {
 public:
  static Result<std::unique_ptr<DerivedWriter>> create(sqlite::Connection& db);
  DerivedWriter(const DerivedWriter&) = delete;
  DerivedWriter& operator=(const DerivedWriter&) = delete;

  // Applies `rows` of the delivery `seq`, received at `received_at_ms` (the jobs' time,
  // follow_up_jobs.h). On failure some rows may be written: roll back, then call
  // forget_cached_ids(). ErrorKind::data when the delivery itself is the cause (its values
  // break a constraint, its stream cannot be read), so retrying cannot succeed; another
  // kind for the store (disk full, I/O error, busy), which a later retry may get past.
  Result<ApplyCounts> apply(const events::DeliveryRows& rows, int64_t seq, int64_t received_at_ms);

  // The processor's mode: change-feed rows are buffered and inserted several per
  // statement (change_feed.h says why). flush_changes() must run before the transaction
  // commits; after a rollback, discard_changes() drops what the failed attempt buffered.
  void defer_changes() { feed_.set_deferred(true); }
  Result<void> flush_changes() { return feed_.flush(); }
  void discard_changes() { feed_.discard(); }

  // Series ids created by a rolled-back transaction, or in a `series` table that was
  // emptied (rebuild), must not be used again; nor user rows remembered from them.
  void forget_cached_ids() {
    samples_.forget_cached_ids();
    users_.forget_cached_rows();
  }

 private:
  DerivedWriter(sqlite::Connection& db, RecordTables records, UserTable users, SampleWriter samples,
                StreamWriter streams, FollowUpJobs jobs, ChangeFeed feed)
      : db_(&db),
        records_(std::move(records)),
        users_(std::move(users)),
        samples_(std::move(samples)),
        streams_(std::move(streams)),
        jobs_(std::move(jobs)),
        feed_(std::move(feed)) {}

  sqlite::Connection* db_;
  RecordTables records_;
  UserTable users_;
  SampleWriter samples_;
  StreamWriter streams_;
  FollowUpJobs jobs_;
  ChangeFeed feed_;
  std::vector<SeriesChange> series_changes_;  // reused per delivery
  std::string key_;                           // reused
};

}  // namespace hh::store
