#include "store/sqlite/queries/user_orders_query.h"

namespace hh::store {
namespace {

// UNION removes the duplicates (an order with its appointment and its result).
constexpr std::string_view kIds =
    "SELECT order_id FROM ("
    "SELECT id AS order_id FROM lab_orders WHERE user_id = ?1 "
    "UNION SELECT order_id FROM lab_appointments WHERE user_id = ?1 AND order_id IS NOT NULL "
    "UNION SELECT order_id FROM lab_results WHERE user_id = ?1) "
    "WHERE ?2 IS NULL OR order_id > ?2 ORDER BY order_id LIMIT ?3";

}  // namespace

Result<UserOrderIdsQuery> UserOrderIdsQuery::create(sqlite::Connection& db) {
  auto ids = db.prepare(kIds);
  if (!ids) return fail(ids.error());
  return UserOrderIdsQuery(std::move(*ids));
}

void UserOrderIdsQuery::start(std::string_view user_id, std::optional<std::string_view> after_order_id,
                              int64_t limit) {
  ids_.reset();
  ids_.bind(1, user_id).bind(2, after_order_id).bind(3, limit);
}

Result<bool> UserOrderIdsQuery::next(std::string_view& order_id) {
  auto has_row = ids_.step();
  if (!has_row) return fail(has_row.error());
  if (!*has_row) {
    ids_.reset();
    return false;
  }
  order_id = ids_.column_text(0);
  return true;
}

}  // namespace hh::store
