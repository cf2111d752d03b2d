#pragma once
// store::ChangeQuery on SQLite: the change feed (`changes`) page by page for the read API's
// GET /v1/changes. Two statements (the page's bounds, then its rows), so a page is read
// inside one read snapshot.
//
// Lifetime: the connection must outlive the query; one thread at a time.
#include "store/read_store.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/queries/query_statements.h"

namespace hh::store {

class SqliteChangeQuery final : public ChangeQuery {
 public:
  explicit SqliteChangeQuery(sqlite::Connection& db);
  using ChangeQuery::start_page;
  Result<void> start_page(const ChangePosition& from, int64_t limit) override;
  Result<bool> next(StoredChange& row) override;
  void finish() override { statements_.finish(); }
  bool ends_inside_seq() const override { return ends_inside_seq_; }

 private:
  QueryStatements<2> statements_;
  bool ends_inside_seq_ = false;
};

}  // namespace hh::store
