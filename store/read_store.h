#pragma once
// The store's read side: what the read API, `healthhook query` and `healthhook capture`
// ask of the store, for every backend. (Figures for /metrics: store/figures.h.)
//
// A ReadStore is a read-only handle with its queries, opened by open_read_store()
// (store/open_readers.h) from the `database = …` setting. It never blocks the writer and is used by one thread at a time:
// open one per thread (the read API keeps a pool of them, api/reader_pool.h).
//
// Every query works the same way: start…() binds a listing, next(row) hands out its rows
// one at a time (false when there are none left), finish() ends a listing stopped early.
// Rows (store/read_rows.h) view the store's buffers: valid until the next call on the
// same query. Memory stays flat for any number of rows.
//
// Several queries see one consistent state of the store inside a ReadSnapshot.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/read_rows.h"

namespace hh::store {

// Timeseries samples with their series' names and identity (source_id, client_user_id,
// provider name, set on every row; StoredSample::with_identity decides the output).
class SampleQuery {
 public:
  virtual ~SampleQuery() = default;
  // Export: every matching series in name order (user, resource, provider, source type),
  // each series' samples in time order.
  virtual Result<void> start_by_series(const SampleFilter& filter) = 0;
  // Pages: the series of ONE user and resource (filter.user_id and filter.resource are
  // required) merged into one time order, ties by series id, after `after`. A page costs
  // about the same however far into the data it is.
  virtual Result<void> start_by_time(const SampleFilter& filter, std::optional<SamplePosition> after) = 0;
  virtual Result<bool> next(StoredSample& row) = 0;
  virtual void finish() = 0;
};

// Summaries.
class SummaryQuery {
 public:
  virtual ~SummaryQuery() = default;
  // Export: every matching summary in key order (resource, id).
  virtual Result<void> start_export(const SummaryFilter& filter) = 0;
  // A page: ONE user's summaries of one resource (filter.user_id and filter.resource are
  // required) by start of the period (summaries without one first), ties by id, after
  // `after`, at most `limit`.
  virtual Result<void> start_page(const SummaryFilter& filter, const std::optional<SummaryPosition>& after,
                                  int64_t limit) = 0;
  // The summary a change-feed row names ("resource/id"), by primary key; none when it is gone.
  virtual Result<void> start_by_key(std::string_view change_key) = 0;
  virtual Result<bool> next(StoredSummary& row) = 0;
  virtual void finish() = 0;
};

// Workout stream points, and the stream they belong to.
class StreamQuery {
 public:
  virtual ~StreamQuery() = default;
  // Export: the points of every matching workout in (workout_id, idx) order.
  virtual Result<void> start_export(const StreamFilter& filter) = 0;
  // A page: one workout's points after index `after_idx` in index order, at most `limit`.
  virtual Result<void> start_page(std::string_view workout_id, std::optional<int64_t> after_idx, int64_t limit) = 0;
  virtual Result<bool> next(StoredStreamPoint& row) = 0;
  virtual void finish() = 0;
  // The stream of this workout (an owned copy); false when there is none.
  virtual Result<bool> find_workout(std::string_view workout_id, StoredWorkoutStream& row) = 0;
};

// The change feed, page by page (GET /v1/changes).
//
// A page holds at most `limit` changes after a position, in (seq, change_id) order. It
// ends at a seq boundary whenever it can: before the first seq that would not fit whole.
// Only when the first seq of the page alone has more changes than fit does the page end
// inside it, after exactly `limit` changes; ends_inside_seq() then says so, and the next
// page goes on from the last change's id. A consumer that stores the last complete seq it
// has handled and asks for `after = that seq` misses nothing and sees nothing twice: the
// processor commits every delivery's changes in one transaction, in seq order, so once a
// seq is visible all of its changes are. Read a page inside a ReadSnapshot.
class ChangeQuery {
 public:
  virtual ~ChangeQuery() = default;
  virtual Result<void> start_page(const ChangePosition& from, int64_t limit) = 0;
  Result<void> start_page(int64_t after_seq, int64_t limit) { return start_page(ChangePosition{after_seq, {}}, limit); }
  virtual Result<bool> next(StoredChange& row) = 0;
  virtual void finish() = 0;
  // After start_page: true when the page ends inside a seq.
  virtual bool ends_inside_seq() const = 0;
};

// Inbox rows: one by message id, and the rows received in a time window, in seq order
// (`healthhook capture`: webhook deliveries only, see replay/capture_file.h; `healthhook
// query deliveries`: every row, optionally of one processing status).
class DeliveryQuery {
 public:
  virtual ~DeliveryQuery() = default;
  // The row with this message id; false when there is none. The row stays valid until
  // the next call.
  virtual Result<bool> find(std::string_view message_id, StoredDelivery& row) = 0;
  // Starts the export of a window. `first_seq`/`last_seq` (for progress) are set to the
  // seq range of the rows received in the window, or 0/0 when it is empty. Read inside a
  // ReadSnapshot: next() fails (ErrorKind::io) when the walk reads rows out of order, or
  // ends having read less than the window holds (a damaged file: decision 077).
  virtual Result<void> start_export(const DeliveryFilter& filter, int64_t& first_seq, int64_t& last_seq) = 0;
  // The search of GET /v1/deliveries (the console): the rows of the window newest first
  // (seq descending), below `before_seq` when given. Unbounded: the caller stops reading
  // when it has enough, then calls finish().
  virtual Result<void> start_newest_first(const DeliveryFilter& filter, std::optional<int64_t> before_seq) = 0;
  virtual Result<bool> next(StoredDelivery& row) = 0;
  virtual void finish() = 0;
};

// The console's charts of a user (GET /v1/users/{id}/series and …/timeseries/{resource}/chart).
class ChartQuery {
 public:
  virtual ~ChartQuery() = default;
  // The user's series in (resource, provider, source type) order.
  virtual Result<void> start_series(std::string_view user_id) = 0;
  virtual Result<bool> next(StoredSeries& row) = 0;
  // The user's summaries by (resource, provider, source type), in that order.
  virtual Result<void> start_summary_kinds(std::string_view user_id) = 0;
  virtual Result<bool> next(StoredSummaryKind& row) = 0;
  // Downsampling on the server: the numeric samples of ONE user's resource
  // (filter.user_id, filter.resource, filter.since_ms and filter.until_ms are required;
  // provider and source_type optional) grouped per series into buckets of `bucket_ms`
  // from since_ms, each with its count, min, max and mean. Text values and blood pressure
  // (no value) are left out. Rows in (provider, source type, bucket) order.
  virtual Result<void> start_buckets(const SampleFilter& filter, int64_t bucket_ms) = 0;
  virtual Result<bool> next(SampleBucket& row) = 0;
  virtual void finish() = 0;
};

// A table with one row per key (connections, devices, lab orders, appointments, results,
// parsing jobs, backfills, users, providers): every row in key order, filtered by the
// members of RecordFilter its table has (the others are ignored).
template <typename Row>
class RecordQuery {
 public:
  virtual ~RecordQuery() = default;
  virtual Result<void> start(const RecordFilter& filter) = 0;
  // The one row a change-feed row names (its table's `row_key`: the key columns joined
  // with '/', store/sqlite/migrations/002-derived.sql), by primary key; none when it is gone.
  virtual Result<void> start_by_key(std::string_view change_key) = 0;
  virtual Result<bool> next(Row& row) = 0;
  virtual void finish() = 0;
};

// The lab order ids of one user (GET /v1/users/{user_id}/orders): the ids of the user's
// orders and the order ids of their appointments and results (an appointment or a result
// can arrive before its order), each once, in id order, after `after_order_id`, at most
// `limit`.
class UserOrderIdsQuery {
 public:
  virtual ~UserOrderIdsQuery() = default;
  virtual Result<void> start(std::string_view user_id, std::optional<std::string_view> after_order_id,
                             int64_t limit) = 0;
  virtual Result<bool> next(std::string_view& order_id) = 0;
  virtual void finish() = 0;
};

// The record of erasures (purge-user), page by page (GET /v1/erasures): at most `limit`
// erasures with an id above `after_id`, in id order.
class ErasureQuery {
 public:
  virtual ~ErasureQuery() = default;
  virtual Result<void> start_page(int64_t after_id, int64_t limit) = 0;
  virtual Result<bool> next(StoredErasure& row) = 0;
  virtual void finish() = 0;
};

class ReadStore {
 public:
  virtual ~ReadStore() = default;

  // A read snapshot: the queries see one state of the store until end_snapshot() (use
  // ReadSnapshot). Nothing is written, so ending it cannot lose data.
  virtual Result<void> begin_snapshot() = 0;
  virtual void end_snapshot() = 0;

  virtual SampleQuery& samples() = 0;
  virtual SummaryQuery& summaries() = 0;
  virtual StreamQuery& streams() = 0;
  virtual ChangeQuery& changes() = 0;
  virtual DeliveryQuery& deliveries() = 0;
  virtual UserOrderIdsQuery& user_order_ids() = 0;
  virtual ChartQuery& charts() = 0;
  virtual ErasureQuery& erasures() = 0;
  virtual RecordQuery<StoredConnection>& connections() = 0;
  virtual RecordQuery<StoredDevice>& devices() = 0;
  virtual RecordQuery<StoredLabOrder>& lab_orders() = 0;
  virtual RecordQuery<StoredLabAppointment>& lab_appointments() = 0;
  virtual RecordQuery<StoredLabResult>& lab_results() = 0;
  virtual RecordQuery<StoredParsingJob>& parsing_jobs() = 0;
  virtual RecordQuery<StoredBackfill>& backfills() = 0;
  virtual RecordQuery<StoredUser>& users() = 0;
  virtual RecordQuery<StoredProvider>& providers() = 0;

  // The inbox row an unfinished rebuild must still apply again before the derived tables
  // are whole (store/unfinished_rebuild.h); none when they are. One short read (inside
  // the snapshot when one is open).
  virtual Result<std::optional<int64_t>> unfinished_rebuild() = 0;
};

// A read snapshot for as long as it lives (ReadStore::begin_snapshot).
class ReadSnapshot {
 public:
  explicit ReadSnapshot(ReadStore& store) : store_(store), begun_(store.begin_snapshot()) {}
  ~ReadSnapshot() {
    if (begun_) store_.end_snapshot();
  }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;
  const Result<void>& begun() const { return begun_; }

 private:
  ReadStore& store_;
  Result<void> begun_;
};

}  // namespace hh::store
