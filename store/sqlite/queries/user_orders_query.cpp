#include "store/sqlite/queries/user_orders_query.h"

namespace hh::store {
namespace {

// UNION removes the duplicates (an order with its appointment and its result).
constexpr std::string_view kUserOrderIds =
    "SELECT order_id FROM ("
    "SELECT id AS order_id FROM lab_orders WHERE user_id = ?1 "
    "UNION SELECT order_id FROM lab_appointments WHERE user_id = ?1 AND order_id IS NOT NULL "
    "UNION SELECT order_id FROM lab_results WHERE user_id = ?1) "
    "WHERE ?2 IS NULL OR order_id > ?2 ORDER BY order_id LIMIT ?3";

}  // namespace

SqliteUserOrderIdsQuery::SqliteUserOrderIdsQuery(sqlite::Connection& db) : statements_(db, {kUserOrderIds}) {}

Result<void> SqliteUserOrderIdsQuery::start(std::string_view user_id, std::optional<std::string_view> after_order_id,
                                            int64_t limit) {
  auto ids = statements_.start(0);
  if (!ids) return fail(ids.error());
  (*ids)->bind(1, user_id).bind(2, after_order_id).bind(3, limit);
  return {};
}

Result<bool> SqliteUserOrderIdsQuery::next(std::string_view& order_id) {
  return statements_.next_row([&order_id](const sqlite::Statement& s) { order_id = s.column_text(0); });
}

}  // namespace hh::store
