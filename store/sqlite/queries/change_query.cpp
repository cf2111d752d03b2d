#include "store/sqlite/queries/change_query.h"

#include "store/read_query_common.h"

namespace hh::store {
namespace {

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
  const int64_t after_change = from.after_change_id.value_or(kAfterWholeSeq);
  (*bounds)->bind(1, from.after_seq).bind(2, after_change).bind(3, limit);
  // Scalar subqueries always give one row; NULL first = nothing after the position.
  ChangePageEnd end;
  auto read = (*bounds)->first_row([&](const sqlite::Statement& s) {
    end = change_page_end(from.after_seq, s.column_optional_int(0), s.column_optional_int(1));
  });
  if (!read) return fail(read.error());
  ends_inside_seq_ = end.ends_inside_seq;
  auto page = statements_.start(change_page);
  if (!page) return fail(page.error());
  (*page)->bind(1, from.after_seq).bind(2, after_change).bind(3, end.last_seq).bind(4, limit);
  return {};
}

Result<bool> SqliteChangeQuery::next(StoredChange& row) {
  return statements_.next_row([&row](const sqlite::Statement& s) { read_change(s, row); });
}

}  // namespace hh::store
