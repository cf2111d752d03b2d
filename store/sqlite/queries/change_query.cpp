#include "store/sqlite/queries/change_query.h"

#include <limits>

namespace hh::store {
namespace {

constexpr int64_t kLastChange = std::numeric_limits<int64_t>::max();

// "After (?1, ?2)" in (seq, change_id) order; ?2 = max for "after the whole seq ?1". Both
// statements read the changes_seq index (it carries change_id, the rowid) from seq ?1 on.
const std::string kAfterChange = "seq >= ?1 AND (seq > ?1 OR change_id > ?2)";

// The first seq after the position, and the seq of the change just past the limit (NULL
// when the rest fits).
const std::string kChangeBounds = "SELECT (SELECT seq FROM changes WHERE " + kAfterChange +
                                  " ORDER BY seq, change_id LIMIT 1), (SELECT seq FROM changes WHERE " +
                                  kAfterChange + " ORDER BY seq, change_id LIMIT 1 OFFSET ?3)";

const std::string kChangePage =
    "SELECT change_id, seq, table_name, row_key, op, row_count, from_ms, to_ms FROM changes "
    "WHERE " + kAfterChange + " AND seq <= ?3 ORDER BY seq, change_id LIMIT ?4";

enum ChangeStatement : size_t { change_bounds, change_page };

}  // namespace

SqliteChangeQuery::SqliteChangeQuery(sqlite::Connection& db) : statements_(db, {kChangeBounds, kChangePage}) {}

Result<void> SqliteChangeQuery::start_page(const ChangePosition& from, int64_t limit) {
  statements_.finish();
  ends_inside_seq_ = false;
  auto bounds = statements_.get(change_bounds);
  if (!bounds) return fail(bounds.error());
  const int64_t after_change = from.after_change_id.value_or(kLastChange);
  (*bounds)->bind(1, from.after_seq).bind(2, after_change).bind(3, limit);
  // Scalar subqueries always give one row; NULL first = nothing after the position.
  bool any = false, cut = false;
  int64_t first = 0, past_limit = 0;
  auto read = (*bounds)->first_row([&](const sqlite::Statement& s) {
    any = !s.column_is_null(0);
    first = any ? s.column_int(0) : 0;
    cut = any && !s.column_is_null(1);
    past_limit = cut ? s.column_int(1) : 0;
  });
  if (!read) return fail(read.error());
  int64_t last = kLastChange;  // everything fits
  if (!any) {
    last = from.after_seq;  // nothing to read
  } else if (cut) {
    // The seq at the cut would be cut in two: leave it for the next page, unless it is
    // the page's first seq (then the page ends inside it, after exactly `limit`).
    last = past_limit == first ? past_limit : past_limit - 1;
    ends_inside_seq_ = past_limit == first;
  }
  auto page = statements_.start(change_page);
  if (!page) return fail(page.error());
  (*page)->bind(1, from.after_seq).bind(2, after_change).bind(3, last).bind(4, limit);
  return {};
}

Result<bool> SqliteChangeQuery::next(StoredChange& row) {
  return statements_.next_row([&row](const sqlite::Statement& s) {
    row.change_id = s.column_int(0);
    row.seq = s.column_int(1);
    row.table_name = s.column_text(2);
    row.row_key = s.column_text(3);
    row.op = s.column_text(4);
    row.row_count = s.column_int(5);
    row.from_ms = s.column_optional_int(6);
    row.to_ms = s.column_optional_int(7);
  });
}

}  // namespace hh::store
