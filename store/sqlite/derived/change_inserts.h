#pragma once
// The change feed's inserts on SQLite (store/derived/change_feed.h): multi-row INSERTs of
// 64, 8 and 1 rows, the largest that fits first. Why not one row per statement: the CHECK
// on changes.op (`op IN ('insert', 'update', 'replace')`) makes SQLite build an ephemeral
// table for the list at every execution of the statement, which cost more than the
// insert itself (docs/decisions/015-change-feed-batches-and-or-checks.md).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <array>
#include <cstddef>
#include <span>

#include "common/result.h"
#include "store/derived/change_feed.h"
#include "store/derived/derived_parts.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct SqliteChangeInsertsState {
  using Connection = sqlite::Connection;
  static constexpr size_t kMaxBuffered = 64;
  // Statements inserting 64, 8 and 1 rows.
  static constexpr std::array<size_t, 3> kInsertRows = {kMaxBuffered, 8, 1};

  std::array<sqlite::Statement, 3> inserts;  // by kInsertRows
};

using SqliteChangeInserts = ChangeInsertsOf<SqliteChangeInsertsState>;
template <>
Result<SqliteChangeInserts> SqliteChangeInserts::create(sqlite::Connection& db);
template <>
Result<void> SqliteChangeInserts::insert(std::span<const Change> changes);

}  // namespace hh::store
