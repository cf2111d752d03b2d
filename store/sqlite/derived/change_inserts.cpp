#include "store/sqlite/derived/change_inserts.h"

#include <optional>
#include <string>

namespace hh::store {
namespace {

constexpr int kChangeColumns = 8;

std::string insert_sql(size_t rows) {
  std::string sql = "INSERT INTO changes (seq, table_name, row_key, op, row_count, from_ms, to_ms, user_id) VALUES ";
  for (size_t i = 0; i < rows; ++i) {
    if (i > 0) sql += ", ";
    sql += "(";
    for (int c = 1; c <= kChangeColumns; ++c) {
      if (c > 1) sql += ", ";
      sql += "?" + std::to_string(i * kChangeColumns + static_cast<size_t>(c));
    }
    sql += ")";
  }
  return sql;
}

}  // namespace

template <>
Result<SqliteChangeInserts> SqliteChangeInserts::create(sqlite::Connection& db) {
  constexpr auto& kInsertRows = SqliteChangeInsertsState::kInsertRows;
  std::array<std::optional<sqlite::Statement>, kInsertRows.size()> prepared;
  for (size_t i = 0; i < kInsertRows.size(); ++i) {
    auto insert = db.prepare(insert_sql(kInsertRows[i]));
    if (!insert) return fail(insert);
    prepared[i].emplace(std::move(*insert));
  }
  return SqliteChangeInserts(
      SqliteChangeInsertsState{{std::move(*prepared[0]), std::move(*prepared[1]), std::move(*prepared[2])}});
}

template <>
Result<void> SqliteChangeInserts::insert(std::span<const Change> changes) {
  constexpr auto& kInsertRows = SqliteChangeInsertsState::kInsertRows;
  for (size_t i = 0; i < kInsertRows.size(); ++i) {
    const size_t rows = kInsertRows[i];
    sqlite::Statement& insert = state_.inserts[i];
    while (changes.size() >= rows) {
      for (size_t r = 0; r < rows; ++r) {
        const Change& change = changes[r];
        const int at = static_cast<int>(r) * kChangeColumns;
        insert.bind(at + 1, change.seq)
            .bind_static(at + 2, change.table)
            .bind_static(at + 3, change.row_key)
            .bind_static(at + 4, change.op)
            .bind(at + 5, change.row_count)
            .bind(at + 6, change.from_ms)
            .bind(at + 7, change.to_ms);
        if (change.user_id) {
          insert.bind_static(at + 8, *change.user_id);
        } else {
          insert.bind_null(at + 8);
        }
      }
      if (auto inserted = insert.run(); !inserted) return inserted;
      changes = changes.subspan(rows);
    }
  }
  return {};
}

}  // namespace hh::store
