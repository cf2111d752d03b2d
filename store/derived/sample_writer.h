#pragma once
// Latest-wins writes of timeseries samples, for every backend. A sample's key is (series,
// t_ms); `series` maps the four text parts (user, resource, provider, source type) to an
// integer id once. Ids are cached in memory (SeriesIds); the cache must be forgotten
// whenever the transaction that created ids rolls back or `series` is emptied (rebuild),
// because ids are reused after that (by SQLite; the cache must forget them on PostgreSQL
// too).
//
// A replacement (a higher seq) replaces the whole sample. Of the samples of a batch that
// share a timestamp the first is kept: the later ones have the same seq, and a
// replacement needs a higher one.
//
// Per delivery the writer also sums up what changed in each series for the change feed:
// one change per (delivery, series) (`changes`). A batch's source_id and app_id are kept
// on its series (005-identity.sql); the latest batch carrying one wins, one without
// leaves it, and it is not reported in the feed.
//
// `State` is what the backend's statements need (store/sqlite/derived/sample_writer.h,
// store/postgres/derived/pg_sample_writer.h): its `Connection` type and whatever it keeps
// between calls. The backend defines create() and write() for its State (explicit
// specialisations, declared in its header, defined in its .cpp).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <utility>
#include <vector>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"

namespace hh::store {

template <typename State>
class SampleWriterOf {
 public:
  static Result<SampleWriterOf> create(typename State::Connection& db);

  // Writes every sample of `batch` with `seq` and adds to the series' entry in `changes`.
  // Returns the number of samples inserted or replaced.
  Result<int64_t> write(const rows::SampleBatch& batch, int64_t seq, std::vector<SeriesChange>& changes);

  void forget_cached_ids() { series_ids_.clear(); }

 private:
  explicit SampleWriterOf(State state) : state_(std::move(state)) {}

  State state_;
  SeriesIds series_ids_;
};

}  // namespace hh::store
