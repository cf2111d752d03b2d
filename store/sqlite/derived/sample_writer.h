#pragma once
// Latest-wins writes of timeseries samples. A sample's key is (series, t_ms); `series`
// maps the four text parts (user, resource, provider, source type) to an integer id once,
// so `samples` is keyed by two integers WITHOUT ROWID (much faster than the five-column
// text key). Ids are cached in memory; the cache must be forgotten whenever
// the transaction that created ids rolls back or `series` is emptied (rebuild), because
// ids are reused after that.
//
// Per delivery the writer also sums up what changed in each series for the change feed:
// one change per (delivery, series) (002-derived.sql, `changes`). A batch's source_id is
// kept on its series (005-identity.sql); the latest batch carrying one wins, and it is not
// reported in the feed.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class SampleWriter {
 public:
  static Result<SampleWriter> create(sqlite::Connection& db);

  // Writes every sample of `batch` with `seq` and adds to the series' entry in `changes`.
  // Returns the number of samples inserted or replaced.
  Result<int64_t> write(const rows::SampleBatch& batch, int64_t seq, std::vector<SeriesChange>& changes);

  void forget_cached_ids() { series_ids_.clear(); }

 private:
  using Series = SeriesIds::Series;
  // The same write as two statement pairs: `full` binds every column; `plain` only the
  // columns most samples have (value, unit, offset: heartrate, steps, glucose …) and
  // writes NULL for the rest, which saves half the binds on the hottest loop.
  struct Statements {
    sqlite::Statement insert;
    sqlite::Statement update;
  };
  SampleWriter(sqlite::Connection& db, sqlite::Statement insert_series, sqlite::Statement find_series,
               sqlite::Statement set_source_id, sqlite::Statement set_app_id, Statements full, Statements plain)
      : db_(&db),
        insert_series_(std::move(insert_series)),
        find_series_(std::move(find_series)),
        set_source_id_(std::move(set_source_id)),
        set_app_id_(std::move(set_app_id)),
        full_(std::move(full)),
        plain_(std::move(plain)) {}
  Result<Series*> series(const rows::SampleBatch& batch);
  Result<void> keep_source_id(Series& series, const rows::SampleValue& source_id);
  Result<void> keep_app_id(Series& series, std::string_view app_id);
  // Binds and runs one statement; the number of rows it changed (0 or 1).
  Result<int> run_sample(sqlite3_stmt* stmt, bool plain, int64_t series_id, const rows::SampleRow& sample,
                         int64_t seq);

  sqlite::Connection* db_;
  sqlite::Statement insert_series_;
  sqlite::Statement find_series_;
  sqlite::Statement set_source_id_;
  sqlite::Statement set_app_id_;
  Statements full_;
  Statements plain_;
  SeriesIds series_ids_;
};

}  // namespace hh::store
