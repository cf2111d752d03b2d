#pragma once
// store::ChartQuery on SQLite: a user's series (first and last instants from the samples'
// primary key), their summaries by source (the summaries_user_time index), and one
// resource's samples grouped into buckets in SQL, so a chart of any range costs the
// browser at most (series × buckets) rows.
//
// Lifetime: the connection must outlive the query; one thread at a time.
#include "store/read_store.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/queries/query_statements.h"

namespace hh::store {

class SqliteChartQuery final : public ChartQuery {
 public:
  explicit SqliteChartQuery(sqlite::Connection& db);

  Result<void> start_series(std::string_view user_id) override;
  Result<bool> next(StoredSeries& row) override;
  Result<void> start_summary_kinds(std::string_view user_id) override;
  Result<bool> next(StoredSummaryKind& row) override;
  Result<void> start_buckets(const SampleFilter& filter, int64_t bucket_ms) override;
  Result<bool> next(SampleBucket& row) override;
  void finish() override { statements_.finish(); }

 private:
  QueryStatements<3> statements_;
};

}  // namespace hh::store
