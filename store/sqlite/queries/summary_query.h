#pragma once
// store::SummaryQuery on SQLite (`healthhook query summaries`, the read API's summary pages).
//
//  - export: the summaries primary key (resource, id); no sort, constant memory.
//  - page: the user's rows come from the (user_id, resource, …) index and are sorted by
//    start of the period (that user's rows of that resource: thousands, not millions).
//
// Lifetime: the connection must outlive the query; one thread at a time.
#include "store/read_store.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/queries/query_statements.h"

namespace hh::store {

class SqliteSummaryQuery final : public SummaryQuery {
 public:
  explicit SqliteSummaryQuery(sqlite::Connection& db);

  Result<void> start_export(const SummaryFilter& filter) override;
  Result<void> start_page(const SummaryFilter& filter, const std::optional<SummaryPosition>& after,
                          int64_t limit) override;
  Result<void> start_by_key(std::string_view change_key) override;
  Result<bool> next(StoredSummary& row) override;
  // Resets the statements of a query stopped early (ends its read snapshot).
  void finish() override { statements_.finish(); }

 private:
  QueryStatements<3> statements_;
};

}  // namespace hh::store
