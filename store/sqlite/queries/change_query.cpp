#include "store/sqlite/queries/change_query.h"

#include <limits>

namespace hh::store {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// "After (?1, ?2)" in (seq, change_id) order; ?2 = max for "after the whole seq ?1". Both
// statements read the changes_seq index (it carries change_id, the rowid) from seq ?1 on.
const std::string kAfter = "seq >= ?1 AND (seq > ?1 OR change_id > ?2)";

// The first seq after the position, and the seq of the change just past the limit (NULL
// when the rest fits).
const std::string kBounds = "SELECT (SELECT seq FROM changes WHERE " + kAfter +
                            " ORDER BY seq, change_id LIMIT 1), (SELECT seq FROM changes WHERE " + kAfter +
                            " ORDER BY seq, change_id LIMIT 1 OFFSET ?3)";

const std::string kPage = "SELECT change_id, seq, table_name, row_key, op, row_count, from_ms, to_ms FROM changes "
                          "WHERE " + kAfter + " AND seq <= ?3 ORDER BY seq, change_id LIMIT ?4";

}  // namespace

Result<ChangeQuery> ChangeQuery::create(sqlite::Connection& db) {
  auto bounds = db.prepare(kBounds);
  if (!bounds) return fail(bounds.error());
  auto page = db.prepare(kPage);
  if (!page) return fail(page.error());
  return ChangeQuery(std::move(*bounds), std::move(*page));
}

Result<void> ChangeQuery::start_page(const ChangePosition& from, int64_t limit) {
  page_.reset();
  ends_inside_seq_ = false;
  const int64_t after_change = from.after_change_id.value_or(kMax);
  bounds_.bind(1, from.after_seq).bind(2, after_change).bind(3, limit);
  auto has_row = bounds_.step();
  if (!has_row) return fail(has_row.error());
  // Scalar subqueries always give one row; NULL first = nothing after the position.
  const bool any = *has_row && !bounds_.column_is_null(0);
  const int64_t first = any ? bounds_.column_int(0) : 0;
  const bool cut = any && !bounds_.column_is_null(1);
  const int64_t past_limit = cut ? bounds_.column_int(1) : 0;
  bounds_.reset();
  int64_t last = kMax;  // everything fits
  if (!any) {
    last = from.after_seq;  // nothing to read
  } else if (cut) {
    // The seq at the cut would be cut in two: leave it for the next page, unless it is
    // the page's first seq (then the page ends inside it, after exactly `limit`).
    last = past_limit == first ? past_limit : past_limit - 1;
    ends_inside_seq_ = past_limit == first;
  }
  page_.bind(1, from.after_seq).bind(2, after_change).bind(3, last).bind(4, limit);
  return {};
}

Result<bool> ChangeQuery::next(StoredChange& row) {
  auto has_row = page_.step();
  if (!has_row) return fail(has_row.error());
  if (!*has_row) {
    page_.reset();
    return false;
  }
  row.change_id = page_.column_int(0);
  row.seq = page_.column_int(1);
  row.table_name = page_.column_text(2);
  row.row_key = page_.column_text(3);
  row.op = page_.column_text(4);
  row.row_count = page_.column_int(5);
  row.from_ms = page_.column_optional_int(6);
  row.to_ms = page_.column_optional_int(7);
  return true;
}

}  // namespace hh::store
