#include "store/derived/change_feed.h"

namespace hh::store {

Result<ChangeFeed> ChangeFeed::create(sqlite::Connection& db) {
  auto insert = db.prepare(
      "INSERT INTO changes (seq, table_name, row_key, op, row_count, from_ms, to_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!insert) return fail(insert.error());
  return ChangeFeed(std::move(*insert));
}

Result<void> ChangeFeed::append(const Change& change) {
  insert_.bind(1, change.seq)
      .bind_static(2, change.table)
      .bind_static(3, change.row_key)
      .bind_static(4, change.op)
      .bind(5, change.row_count)
      .bind(6, change.from_ms)
      .bind(7, change.to_ms);
  return insert_.run();
}

}  // namespace hh::store
