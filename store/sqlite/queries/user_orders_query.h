#pragma once
// store::UserOrderIdsQuery on SQLite: each of its three parts is an index lookup by user
// (005-identity.sql).
//
// Lifetime: the connection must outlive the query; one thread at a time.
#include "store/read_store.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/queries/query_statements.h"

namespace hh::store {

class SqliteUserOrderIdsQuery final : public UserOrderIdsQuery {
 public:
  explicit SqliteUserOrderIdsQuery(sqlite::Connection& db);
  Result<void> start(std::string_view user_id, std::optional<std::string_view> after_order_id,
                     int64_t limit) override;
  Result<bool> next(std::string_view& order_id) override;
  void finish() override { statements_.finish(); }

 private:
  QueryStatements<1> statements_;
};

}  // namespace hh::store
