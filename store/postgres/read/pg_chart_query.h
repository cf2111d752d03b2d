#pragma once
// store::ChartQuery on PostgreSQL, with the same rows in the same order as SQLite's
// (store/sqlite/queries/chart_query.h). Every listing is bounded (a user's series, their
// summary sources, series × buckets), so each is read whole (Listing).
//
// Lifetime: the session must outlive the query; one thread at a time.
#include "store/postgres/read/read_session.h"
#include "store/read_store.h"

namespace hh::store::pgread {

class PgChartQuery final : public ChartQuery {
 public:
  explicit PgChartQuery(ReadSession& session) : rows_(session) {}

  Result<void> start_series(std::string_view user_id) override;
  Result<bool> next(StoredSeries& row) override;
  Result<void> start_summary_kinds(std::string_view user_id) override;
  Result<bool> next(StoredSummaryKind& row) override;
  Result<void> start_buckets(const SampleFilter& filter, int64_t bucket_ms) override;
  Result<bool> next(SampleBucket& row) override;
  void finish() override { rows_.close(); }

 private:
  Listing rows_;
};

}  // namespace hh::store::pgread
