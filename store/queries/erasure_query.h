#pragma once
// store::ErasureQuery for every backend: the record of erasures (`erasures`, written by
// purge-user: store/erasure.h) in erasure_id order, for GET /v1/erasures. Each erasure
// takes the processing lock until it commits (one at a time on either backend), so ids
// become visible in increasing order and a reader that goes on after the last id it saw
// misses none.
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
class ErasureQueryOf final : public ErasureQuery {
 public:
  explicit ErasureQueryOf(typename Reads::Session& session) : statements_(session, sql()) {}

  Result<void> start_page(int64_t after_id, int64_t limit) override {
    return statements_.start(0, QueryArgs().add(after_id).add(limit), Fetch::whole);
  }
  Result<bool> next(StoredErasure& row) override {
    return statements_.next([&row](const auto& s) {
      row.erasure_id = s.column_int(0);
      row.user_id = s.column_text(1);
      row.erased_at_ms = s.column_int(2);
    });
  }
  void finish() override { statements_.finish(); }

 private:
  static const std::array<std::string, 1>& sql() {
    static const std::array<std::string, 1> built{
        schema::spell("SELECT erasure_id, user_id, erased_at_ms FROM erasures WHERE erasure_id > ?1::bigint "
                      "ORDER BY erasure_id LIMIT ?2",
                      Reads::dialect)};
    return built;
  }

  typename Reads::template Listings<1> statements_;
};

}  // namespace hh::store
