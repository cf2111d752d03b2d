#pragma once
// Latest-wins writes of timeseries samples on PostgreSQL (store/derived/sample_writer.h
// says the rules), with one statement per batch instead of one per sample: the batch
// travels as arrays (pg_statements.h) and
//
//   INSERT INTO samples … SELECT … FROM unnest($3::bigint[], …)
//     ON CONFLICT (series_id, t_ms) DO UPDATE SET … WHERE cur.seq < excluded.seq
//     RETURNING t_ms, (xmax = 0)
//
// says per sample whether it was inserted or replaced (no row: stale). One statement
// cannot update a key twice, so of the samples of a batch sharing a timestamp only the
// first is sent (SQLite keeps the first too). A batch whose samples are all "plain"
// (is_plain_sample) sends only the columns they have.
//
// Samples after the newest time stored for their series are new: they go in a plain
// INSERT (no ON CONFLICT, no RETURNING), which costs the server half as much (decision
// 062). The newest time is read once per series (SeriesIds::Series::newest_t_ms) and kept
// up to date by the writes; it can be trusted because only the session holding a user's
// shard writes that user's series, and the cache is forgotten whenever that may have
// changed (shards moved, a step rolled back, the applied position moved under it). Should
// a sample taken for new be stored all the same, the insert fails with a unique violation,
// reported as busy (never as the delivery's fault): the step is applied again, the newest
// time read afresh.
//
// Series ids are max(id) + 1, taken under the lock on new ids (pg_statements.h): an id
// handed out in a transaction that rolled back is handed out again, so the cache forgets
// every id when a step rolls back.
//
// Lifetime: the connection must outlive this object. Used on the thread that owns it.
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/derived/sample_writer.h"
#include "store/postgres/connection.h"
#include "store/postgres/derived/pg_statements.h"

namespace hh::store {

// The statements are prepared on the connection under fixed names.
struct PgSampleWriterState {
  using Connection = pg::Connection;
  pg::Connection* db = nullptr;
  // Reused per batch: the arrays, by column, and the timestamps already taken.
  ArrayLiteral t_ms, timezone_offset, value, unit, type, start_ms, end_ms, systolic, diastolic, extra;
  std::unordered_set<int64_t> taken;
  std::vector<int64_t> sent;  // the timestamps in the arrays
  std::string scalar;
};

using PgSampleWriter = SampleWriterOf<PgSampleWriterState>;
template <>
Result<PgSampleWriter> PgSampleWriter::create(pg::Connection& db);
template <>
Result<int64_t> PgSampleWriter::write(const rows::SampleBatch& batch, int64_t seq, std::vector<SeriesChange>& changes);

}  // namespace hh::store
