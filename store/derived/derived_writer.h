#pragma once
// Applies one parsed delivery (rows::DeliveryRows) to the derived tables, for every
// backend: latest-wins upserts keyed as in store/schema/ (the user the delivery names;
// provider lists), one change-feed row per change, and the follow-up jobs the delivery asks
// for. Which row goes where is store/derived/apply_delivery.h; the tables with one row per
// key are written from their descriptions (record_writer.h); the backend supplies the
// parts whose statements differ by engine (`Writes`, below). Everything is written on the
// caller's transaction: the caller commits, or rolls back on any failure.
//
// Order independence: a row is replaced only by a higher seq, so applying the same
// deliveries in any order leaves the same tables (the change feed differs: it records what
// happened). The processor applies in seq order, which makes the feed reproducible too:
// `rebuild` re-creates it row for row.
//
// `Writes` (store/sqlite/derived/sqlite_derived_writer.h, store/postgres/derived/pg_derived_writer.h):
//   Connection                         the write connection
//   LatestWins                         a record table's latest-wins statement
//   UserTable                          a UserTableOf<its state> (user_table.h)
//   SampleWriter                       a SampleWriterOf<its state> (sample_writer.h)
//   StreamWriter                       a StreamWriterOf<its state> (stream_writer.h)
//   FollowUpJobs                       a FollowUpJobsOf<JobUpsertOf<its state>> (follow_up_jobs.h)
//   ChangeFeed                         a ChangeFeedOf<ChangeInsertsOf<its state>> (change_feed.h)
//                                      the parts of apply_delivery.h, each with
//                                      static create(Connection&) -> Result<Part>; each
//                                      backend's state and bodies are its own
//   failure_kind(connection, failed)   the kind of a failed apply, read before the
//                                      caller's rollback
//
// Lifetime: the connection must outlive this object and have the schema migrated. Used on
// the writer thread only. Not copyable (prepared statements, the series-id and user caches).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/apply_delivery.h"
#include "store/derived/record_writer.h"
#include "store/processing_store.h"

namespace hh::store {

template <typename Writes>
class DerivedWriterOf {
 public:
  using Connection = typename Writes::Connection;

  static Result<std::unique_ptr<DerivedWriterOf>> create(Connection& db) {
    auto records = RecordWriter<typename Writes::LatestWins>::create(db);
    if (!records) return fail(records);
    auto users = Writes::UserTable::create(db);
    if (!users) return fail(users);
    auto samples = Writes::SampleWriter::create(db);
    if (!samples) return fail(samples);
    auto streams = Writes::StreamWriter::create(db);
    if (!streams) return fail(streams);
    auto jobs = Writes::FollowUpJobs::create(db);
    if (!jobs) return fail(jobs);
    auto feed = Writes::ChangeFeed::create(db);
    if (!feed) return fail(feed);
    return std::unique_ptr<DerivedWriterOf>(new DerivedWriterOf(db, std::move(*records), std::move(*users),
                                                                std::move(*samples), std::move(*streams),
                                                                std::move(*jobs), std::move(*feed)));
  }
  DerivedWriterOf(const DerivedWriterOf&) = delete;
  DerivedWriterOf& operator=(const DerivedWriterOf&) = delete;

  // Applies `rows` of the delivery `seq`, received at `received_at_ms` (the jobs' time).
  // On failure some rows may be written (and on PostgreSQL the transaction aborted): roll
  // back, then call discard_changes() and forget_cached_ids(). ErrorKind::data when the
  // delivery itself is the cause (its values break a constraint, its stream cannot be
  // read), so retrying cannot succeed; another kind for the store (disk full, I/O error,
  // busy), which a later retry may get past.
  Result<ApplyCounts> apply(const rows::DeliveryRows& rows, int64_t seq, int64_t received_at_ms) {
    ApplyCounts counts;
    DeliveryApplier applier(records_, users_, samples_, streams_, jobs_, feed_, series_changes_, key_);
    if (auto applied = applier.apply(rows, seq, received_at_ms, counts); !applied) {
      const ErrorKind kind = applier.malformed_stream() ? ErrorKind::data : Writes::failure_kind(*db_, applied);
      return Error{applied.error(), kind};  // the kind decided here, not the statement's
    }
    return counts;
  }

  // The processor's mode: change-feed rows are buffered and inserted in batches (change_feed.h;
  // each backend's inserts say how). flush_changes() must run before the transaction
  // commits; after a rollback, discard_changes() drops what the failed attempt buffered.
  void defer_changes() { feed_.set_deferred(true); }
  Result<void> flush_changes() { return feed_.flush(); }
  void discard_changes() { feed_.discard(); }
  // The changes this transaction inserted, when discard_changes() ran as it began.
  size_t changes_inserted() const { return feed_.inserted(); }

  // Series ids created by a rolled-back transaction, or in a `series` table that was
  // emptied (rebuild), must not be used again; nor user rows remembered from them.
  void forget_cached_ids() {
    samples_.forget_cached_ids();
    users_.forget_cached_rows();
  }

 private:
  DerivedWriterOf(Connection& db, RecordWriter<typename Writes::LatestWins> records, typename Writes::UserTable users,
                  typename Writes::SampleWriter samples, typename Writes::StreamWriter streams,
                  typename Writes::FollowUpJobs jobs, typename Writes::ChangeFeed feed)
      : db_(&db),
        records_(std::move(records)),
        users_(std::move(users)),
        samples_(std::move(samples)),
        streams_(std::move(streams)),
        jobs_(std::move(jobs)),
        feed_(std::move(feed)) {}

  Connection* db_;
  RecordWriter<typename Writes::LatestWins> records_;
  typename Writes::UserTable users_;
  typename Writes::SampleWriter samples_;
  typename Writes::StreamWriter streams_;
  typename Writes::FollowUpJobs jobs_;
  typename Writes::ChangeFeed feed_;
  std::vector<SeriesChange> series_changes_;  // reused per delivery
  std::string key_;                           // reused
};

}  // namespace hh::store
