#pragma once
// store::ChangeQuery for every backend: the change feed (`changes`) page by page for the
// read API's GET /v1/changes. Two statements (the page's bounds, then its rows), so a page
// is read inside one read snapshot; both read the changes_seq index from seq ?1 on.
//
// On PostgreSQL a page holds only changes at or below the processed position
// (hh_processed_seq(): the lowest shard position, read in the page's snapshot). A change
// commits with its step's position; with several sessions applying (docs/decisions/050:
// shards by user) a session's changes for a later seq may commit before another's for an
// earlier one, and a reader past them would skip the earlier ones for good. Not on
// SQLite: its one writer commits in seq order, and the bound would hide rows written
// there by hand (tests do, a user's tooling may).
//
// Lifetime: the session must outlive the query; one thread at a time.
#include <array>
#include <string>

#include "store/queries/listings.h"
#include "store/queries/query_args.h"
#include "store/read_query_common.h"
#include "store/read_store.h"
#include "store/schema/dialect.h"

namespace hh::store {

template <typename Reads>
class ChangeQueryOf final : public ChangeQuery {
 public:
  explicit ChangeQueryOf(typename Reads::Session& session) : statements_(session, sql()) {}

  using ChangeQuery::start_page;
  Result<void> start_page(const ChangePosition& from, int64_t limit) override {
    statements_.finish();
    ends_inside_seq_ = false;
    const int64_t after_change = from.after_change_id.value_or(kAfterWholeSeq);
    // Scalar subqueries always give one row; NULL first = nothing after the position.
    ChangePageEnd end;
    auto read = statements_.lookup(change_bounds, QueryArgs().add(from.after_seq).add(after_change).add(limit),
                                   [&](const auto& s) {
                                     end = change_page_end(from.after_seq, s.column_optional_int(0),
                                                           s.column_optional_int(1));
                                   });
    if (!read) return fail(read);
    ends_inside_seq_ = end.ends_inside_seq;
    return statements_.start(change_page,
                             QueryArgs().add(from.after_seq).add(after_change).add(end.last_seq).add(limit),
                             Fetch::whole);
  }

  Result<bool> next(StoredChange& row) override {
    return statements_.next([&row](const auto& s) { read_change(s, row); });
  }
  void finish() override { statements_.finish(); }
  bool ends_inside_seq() const override { return ends_inside_seq_; }

 private:
  enum Statement : size_t { change_bounds, change_page };

  static const std::array<std::string, 2>& sql() {
    // "After (?1, ?2)" in (seq, change_id) order; ?2 = max for "after the whole seq ?1".
    static const std::array<std::string, 2> built = [] {
      const std::string after = std::string("seq >= ?1 AND (seq > ?1 OR change_id > ?2)") +
                                (Reads::dialect == schema::Dialect::postgres
                                     ? " AND seq <= hh_processed_seq()"
                                     : "");
      // The first seq after the position, and the seq of the change just past the limit
      // (NULL when the rest fits).
      return std::array<std::string, 2>{
          schema::spell("SELECT (SELECT seq FROM changes WHERE " + after +
                            " ORDER BY seq, change_id LIMIT 1), (SELECT seq FROM changes WHERE " + after +
                            " ORDER BY seq, change_id LIMIT 1 OFFSET ?3)",
                        Reads::dialect),
          schema::spell("SELECT change_id, seq, table_name, row_key, op, row_count, from_ms, to_ms, user_id FROM changes "
                        "WHERE " + after + " AND seq <= ?3 ORDER BY seq, change_id LIMIT ?4",
                        Reads::dialect)};
    }();
    return built;
  }

  typename Reads::template Listings<2> statements_;
  bool ends_inside_seq_ = false;
};

}  // namespace hh::store
