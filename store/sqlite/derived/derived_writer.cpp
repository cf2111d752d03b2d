#include "store/sqlite/derived/derived_writer.h"

#include "store/derived/apply_delivery.h"

namespace hh::store {

Result<std::unique_ptr<DerivedWriter>> DerivedWriter::create(sqlite::Connection& db) {
  auto records = RecordTables::create(db);
  if (!records) return fail(records.error());
  auto users = UserTable::create(db);
  if (!users) return fail(users.error());
  auto samples = SampleWriter::create(db);
  if (!samples) return fail(samples.error());
  auto streams = StreamWriter::create(db);
  if (!streams) return fail(streams.error());
  auto jobs = FollowUpJobs::create(db);
  if (!jobs) return fail(jobs.error());
  auto feed = ChangeFeed::create(db);
  if (!feed) return fail(feed.error());
  return std::unique_ptr<DerivedWriter>(new DerivedWriter(db, std::move(*records), std::move(*users),
                                                          std::move(*samples), std::move(*streams), std::move(*jobs),
                                                          std::move(*feed)));
}

Result<ApplyCounts> DerivedWriter::apply(const events::DeliveryRows& rows, int64_t seq, int64_t received_at_ms) {
  ApplyCounts counts;
  DeliveryApplier applier(records_, users_, samples_, streams_, jobs_, feed_, series_changes_, key_);
  if (auto applied = applier.apply(rows, seq, received_at_ms, counts); !applied) {
    // Read the code now: the caller's ROLLBACK replaces it.
    const ErrorKind kind = applier.malformed_stream() ? ErrorKind::data : sqlite::error_kind(db_->last_error_code());
    return fail(kind, applied.error());
  }
  return counts;
}

}  // namespace hh::store
