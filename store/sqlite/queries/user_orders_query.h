#pragma once
// The lab order ids of one user, for GET /v1/users/{user_id}/orders: every id among the
// user's lab_orders, the order_id of their lab_appointments and of their lab_results (an
// appointment or a result can arrive before its order), in id order, after a position,
// at most `limit`. Each is an index lookup by user (005-identity.sql).
//
// Lifetime: the connection must outlive the query; one thread at a time. Views are valid
// until the next next()/start call.
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class UserOrderIdsQuery {
 public:
  static Result<UserOrderIdsQuery> create(sqlite::Connection& db);
  void start(std::string_view user_id, std::optional<std::string_view> after_order_id, int64_t limit);
  Result<bool> next(std::string_view& order_id);
  void finish() { ids_.reset(); }

 private:
  explicit UserOrderIdsQuery(sqlite::Statement ids) : ids_(std::move(ids)) {}
  sqlite::Statement ids_;
};

}  // namespace hh::store
