#include "store/postgres/derived/pg_derived_writer.h"

#include "store/derived/apply_delivery.h"

namespace hh::store {

Result<std::unique_ptr<PgDerivedWriter>> PgDerivedWriter::create(pg::Connection& db) {
  auto records = PgRecordTables::create(db);
  if (!records) return fail(records.error_kind(), records.error());
  auto users = PgUserTable::create(db);
  if (!users) return fail(users.error_kind(), users.error());
  auto samples = PgSampleWriter::create(db);
  if (!samples) return fail(samples.error_kind(), samples.error());
  auto streams = PgStreamWriter::create(db);
  if (!streams) return fail(streams.error_kind(), streams.error());
  auto jobs = PgFollowUpJobs::create(db);
  if (!jobs) return fail(jobs.error_kind(), jobs.error());
  auto feed = PgChangeFeed::create(db);
  if (!feed) return fail(feed.error_kind(), feed.error());
  return std::unique_ptr<PgDerivedWriter>(new PgDerivedWriter(std::move(*records), std::move(*users),
                                                              std::move(*samples), std::move(*streams),
                                                              std::move(*jobs), std::move(*feed)));
}

Result<ApplyCounts> PgDerivedWriter::apply(const events::DeliveryRows& rows, int64_t seq, int64_t received_at_ms) {
  ApplyCounts counts;
  DeliveryApplier applier(records_, users_, samples_, streams_, jobs_, feed_, series_changes_, key_);
  if (auto applied = applier.apply(rows, seq, received_at_ms, counts); !applied) {
    // The parts' errors carry the kind of their SQLSTATE (pg::error_kind).
    return fail(applier.malformed_stream() ? ErrorKind::data : applied.error_kind(), applied.error());
  }
  return counts;
}

}  // namespace hh::store
