#pragma once
// store::SampleQuery on SQLite (`healthhook query samples`, the read API's timeseries
// pages). Both orders come without a sort in SQLite:
//
//  - by_series (export): the series in the order of their unique index, each series'
//    samples along the `samples` primary key (series_id, t_ms).
//  - by_time (pages): each of the user's series is read along its own primary-key range
//    and the series are merged here, so a page costs O(limit × series) however far into
//    the data the cursor is (a single ORDER BY t_ms would sort everything after the
//    cursor on every page).
//
// The identity columns (005-identity.sql) are joined per series, not per sample: the
// series' source_id, the user's client_user_id and the provider's name from `providers`.
//
// Lifetime: the connection must outlive the query; one thread at a time.
#include <optional>
#include <string>
#include <vector>

#include "store/read_query_common.h"
#include "store/read_store.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/queries/query_statements.h"

namespace hh::store {

class SqliteSampleQuery final : public SampleQuery {
 public:
  explicit SqliteSampleQuery(sqlite::Connection& db);

  Result<void> start_by_series(const SampleFilter& filter) override;
  Result<void> start_by_time(const SampleFilter& filter, std::optional<SamplePosition> after) override;
  Result<bool> next(StoredSample& row) override;
  void finish() override;

 private:
  // A series being merged (by_time), with owned copies of its names, and its statement.
  struct Head : SeriesHead {
    size_t statement = 0;  // index into samples_
    bool has_row = false;
  };

  // The samples statement `index`, prepared if need be.
  Result<sqlite::Statement*> samples_statement(size_t index);
  Result<bool> next_by_series(StoredSample& row);
  Result<bool> next_by_time(StoredSample& row);

  sqlite::Connection* db_;
  QueryStatements<3> series_;  // every matching series; one user's series of one resource (by id, by name)
  std::vector<sqlite::Statement> samples_;  // one series' samples each; grows to the number of merged series
  SampleListing mode_ = SampleListing::idle;
  int64_t since_ms_ = 0;
  int64_t until_ms_ = 0;
  sqlite::Statement* series_listing_ = nullptr;  // by_series: the series statement being stepped
  bool in_series_ = false;                       // by_series: samples_[0] is bound to the current series
  std::vector<Head> heads_;                      // by_time
  std::optional<size_t> to_step_;                // by_time: the head whose row was handed out last
};

}  // namespace hh::store
