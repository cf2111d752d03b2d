#pragma once
// Latest-wins writes of timeseries samples on PostgreSQL, the rules of
// store/sqlite/derived/sample_writer.h (series ids cached, one change per delivery and
// series, a batch's source_id kept on its series) with one statement per batch instead of
// one per sample: the batch travels as arrays (pg_statements.h) and
//
//   INSERT INTO samples … SELECT … FROM unnest($3::bigint[], …)
//     ON CONFLICT (series_id, t_ms) DO UPDATE SET … WHERE cur.seq < excluded.seq
//     RETURNING t_ms, (xmax = 0)
//
// says per sample whether it was inserted or replaced (no row: stale). One statement
// cannot update a key twice, so of the samples of a batch sharing a timestamp only the
// first is sent: SQLite keeps the first too (the later ones have the same seq, and a
// replacement needs a higher one). A replacement replaces the whole sample; a batch whose
// samples are all "plain" (is_plain_sample) sends only the columns they have.
//
// Series ids are identity values: unlike SQLite's rowids, ids handed out in a transaction
// that rolled back are not handed out again (the cache must still forget them).
//
// Lifetime: the connection must outlive this object. Used on the thread that owns it.
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/postgres/connection.h"
#include "store/postgres/derived/pg_statements.h"

namespace hh::store {

class PgSampleWriter {
 public:
  static Result<PgSampleWriter> create(pg::Connection& db);

  // Writes every sample of `batch` with `seq` and adds to the series' entry in `changes`.
  // Returns the number of samples inserted or replaced.
  Result<int64_t> write(const rows::SampleBatch& batch, int64_t seq, std::vector<SeriesChange>& changes);

  void forget_cached_ids() { series_ids_.clear(); }

 private:
  using Series = SeriesIds::Series;
  explicit PgSampleWriter(pg::Connection& db) : db_(&db) {}
  Result<Series*> series(const rows::SampleBatch& batch);
  Result<void> keep_source_id(Series& series, const rows::SampleValue& source_id);
  Result<void> keep_app_id(Series& series, std::string_view app_id);
  // Fills the arrays with the samples to send; true when every one is plain.
  bool fill_arrays(const rows::SampleBatch& batch);

  pg::Connection* db_;
  SeriesIds series_ids_;
  // Reused per batch: the arrays, by column, and the timestamps already taken.
  ArrayLiteral t_ms_, timezone_offset_, value_, unit_, type_, start_ms_, end_ms_, systolic_, diastolic_, extra_;
  std::unordered_set<int64_t> taken_;
  std::string scalar_;
};

}  // namespace hh::store
