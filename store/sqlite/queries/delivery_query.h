#pragma once
// store::DeliveryQuery on SQLite: inbox rows by message id, and the rows of a time window.
//
// The window export steps through `deliveries` in seq (rowid) order, never sorting: the
// received_at index only finds the first and last seq of the window. Bodies are read one
// row at a time, so memory stays flat for any inbox size.
//
// Lifetime: the connection must outlive the query; one thread at a time.
#include "store/read_store.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/queries/query_statements.h"

namespace hh::store {

class SqliteDeliveryQuery final : public DeliveryQuery {
 public:
  explicit SqliteDeliveryQuery(sqlite::Connection& db);

  Result<bool> find(std::string_view message_id, StoredDelivery& row) override;
  Result<void> start_export(const DeliveryFilter& filter, int64_t& first_seq, int64_t& last_seq) override;
  Result<void> start_newest_first(const DeliveryFilter& filter, std::optional<int64_t> before_seq) override;
  Result<bool> next(StoredDelivery& row) override;
  void finish() override { statements_.finish(); }

 private:
  Result<void> start_window(const DeliveryFilter& filter, size_t statement, std::optional<int64_t> before_seq,
                            int64_t& first_seq, int64_t& last_seq);
  QueryStatements<4> statements_;
};

}  // namespace hh::store
