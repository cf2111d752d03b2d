#pragma once
// store::UserOrderIdsQuery for every backend: the lab order ids of one user, from their
// orders, appointments and results, each once (UNION), in id order (bytewise).
//
// Lifetime: the session must outlive the query; one thread at a time.
#include <array>
#include <string>

#include "store/queries/listings.h"
#include "store/queries/query_args.h"
#include "store/read_store.h"
#include "store/schema/dialect.h"

namespace hh::store {

template <typename Reads>
class UserOrderIdsQueryOf final : public UserOrderIdsQuery {
 public:
  explicit UserOrderIdsQueryOf(typename Reads::Session& session) : statements_(session, sql()) {}

  Result<void> start(std::string_view user_id, std::optional<std::string_view> after_order_id,
                     int64_t limit) override {
    return statements_.start(0, QueryArgs().add(user_id).add(after_order_id).add(limit), Fetch::whole);
  }
  Result<bool> next(std::string_view& order_id) override {
    return statements_.next([&order_id](const auto& s) { order_id = s.column_text(0); });
  }
  void finish() override { statements_.finish(); }

 private:
  static const std::array<std::string, 1>& sql() {
    static const std::array<std::string, 1> built{schema::spell(
        "SELECT order_id FROM ("
        "SELECT id AS order_id FROM lab_orders WHERE user_id = ?1 "
        "UNION SELECT order_id FROM lab_appointments WHERE user_id = ?1 AND order_id IS NOT NULL "
        "UNION SELECT order_id FROM lab_results WHERE user_id = ?1) AS ids "
        "WHERE ?2::text IS NULL OR order_id COLLATE \"C\" > ?2::text ORDER BY order_id COLLATE \"C\" LIMIT ?3",
        Reads::dialect)};
    return built;
  }

  typename Reads::template Listings<1> statements_;
};

}  // namespace hh::store
