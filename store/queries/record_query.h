#pragma once
// store::RecordQuery<Row> for every backend: the tables with one row per key, every
// listing in primary-key order (text bytewise), a change-feed key's row by its primary key.
// The statements and the row reader come from the table's description
// (store/schema/record_tables.h); the backend's listings run them (store/queries/listings.h).
//
// Lifetime: the session must outlive the query; one thread at a time.
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "store/queries/listings.h"
#include "store/queries/query_args.h"
#include "store/read_query_common.h"
#include "store/read_store.h"
#include "store/schema/record_rows.h"
#include "store/schema/record_sql.h"

namespace hh::store {

template <typename Reads, typename D>
class RecordQueryOf final : public RecordQuery<typename D::Stored> {
 public:
  using Row = typename D::Stored;
  explicit RecordQueryOf(typename Reads::Session& session) : statements_(session, sql(), kRowSize) {}

  Result<void> start(const RecordFilter& filter) override {
    QueryArgs args;
    size_t given = 0;
    for (size_t i = 0; i < D::filters.size(); ++i) {
      const std::optional<std::string>& value = filter.*(D::filters[i].filter);
      if (!value) continue;
      given |= size_t{1} << i;
      args.add(*value);
    }
    return statements_.start(given, args, Fetch::cursor);
  }

  Result<void> start_by_key(std::string_view change_key) override {
    statements_.finish();
    constexpr size_t parts = schema::key_parts<D>();
    const auto key = split_change_key(change_key, parts);
    if (!key) return fail(not_a_record_key_error(change_key));
    QueryArgs args;
    for (size_t part = 0; part < parts; ++part) args.add((*key)[part]);
    return statements_.start(by_key, args, Fetch::whole);
  }

  Result<bool> next(Row& row) override {
    return statements_.next([&row](const auto& s) { schema::read_record<D>(s, row); });
  }
  void finish() override { statements_.finish(); }

 private:
  // A table with a JSON column keeps a delivery's data in each row (a device's or a
  // connection's can be as large as a body): PostgreSQL fetches a few rows at a time, as
  // summaries (decision 102), so a listing stopped at a byte budget (GET /v1/users/{id})
  // or an export holds a few such rows in memory, not a thousand.
  static constexpr RowSize kRowSize =
      schema::count_fields(D::fields, [](const auto& field) { return field.is_json; }) > 0 ? RowSize::with_bodies
                                                                                            : RowSize::small;
  // The listings by which filters are given (record_sql.h), then the lookup by key.
  static constexpr size_t kStatements = schema::listing_count<D>() + 1;
  static constexpr size_t by_key = kStatements - 1;
  static const std::array<std::string, kStatements>& sql() {
    static const std::array<std::string, kStatements> built = [] {
      std::array<std::string, kStatements> texts;
      for (size_t given = 0; given < by_key; ++given) texts[given] = schema::record_listing_sql<D>(Reads::dialect, given);
      texts[by_key] = schema::record_by_key_sql<D>(Reads::dialect);
      return texts;
    }();
    return built;
  }

  typename Reads::template Listings<kStatements> statements_;
};

}  // namespace hh::store
