#include "store/queries/change_query.h"

#include <limits>

namespace hh::store {
namespace {

// The first seq after `after`, and the seq of the change just past the limit (NULL when
// the rest fits). Both read the changes_seq index only.
constexpr std::string_view kBounds =
    "SELECT (SELECT min(seq) FROM changes WHERE seq > ?1), "
    "(SELECT seq FROM changes WHERE seq > ?1 ORDER BY seq, change_id LIMIT 1 OFFSET ?2)";

constexpr std::string_view kPage =
    "SELECT change_id, seq, table_name, row_key, op, row_count, from_ms, to_ms FROM changes "
    "WHERE seq > ?1 AND seq <= ?2 ORDER BY seq, change_id";

}  // namespace

Result<ChangeQuery> ChangeQuery::create(sqlite::Connection& db) {
  auto bounds = db.prepare(kBounds);
  if (!bounds) return fail(bounds.error());
  auto page = db.prepare(kPage);
  if (!page) return fail(page.error());
  return ChangeQuery(std::move(*bounds), std::move(*page));
}

Result<void> ChangeQuery::start_page(int64_t after, int64_t limit) {
  page_.reset();
  bounds_.bind(1, after).bind(2, limit);
  auto has_row = bounds_.step();
  if (!has_row) return fail(has_row.error());
  // An aggregate always returns one row; NULL first = nothing after `after`.
  const bool any = *has_row && !bounds_.column_is_null(0);
  const int64_t first = any ? bounds_.column_int(0) : 0;
  const bool cut = any && !bounds_.column_is_null(1);
  const int64_t past_limit = cut ? bounds_.column_int(1) : 0;
  bounds_.reset();
  int64_t last = std::numeric_limits<int64_t>::max();  // everything fits
  if (!any) {
    last = after;  // nothing to read
  } else if (cut) {
    // The seq at the cut would be cut in two: leave it for the next page, unless it is
    // the only seq of this page (then take all of it, so the feed moves on).
    last = past_limit == first ? past_limit : past_limit - 1;
  }
  page_.bind(1, after).bind(2, last);
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
