#include "store/sqlite/derived/change_feed.h"

namespace hh::store {
namespace {

constexpr int kColumns = 8;

std::string insert_sql(size_t rows) {
  std::string sql = "INSERT INTO changes (seq, table_name, row_key, op, row_count, from_ms, to_ms, user_id) VALUES ";
  for (size_t i = 0; i < rows; ++i) {
    if (i > 0) sql += ", ";
    sql += "(";
    for (int c = 1; c <= kColumns; ++c) {
      if (c > 1) sql += ", ";
      sql += "?" + std::to_string(i * kColumns + static_cast<size_t>(c));
    }
    sql += ")";
  }
  return sql;
}

}  // namespace

Result<ChangeFeed> ChangeFeed::create(sqlite::Connection& db) {
  std::array<std::optional<sqlite::Statement>, kInsertRows.size()> prepared;
  for (size_t i = 0; i < kInsertRows.size(); ++i) {
    auto insert = db.prepare(insert_sql(kInsertRows[i]));
    if (!insert) return fail(insert.error());
    prepared[i].emplace(std::move(*insert));
  }
  return ChangeFeed({std::move(*prepared[0]), std::move(*prepared[1]), std::move(*prepared[2])});
}

size_t ChangeFeed::keep(std::string_view text) {
  const size_t at = text_.size();
  text_.append(text);
  return at;
}

Result<void> ChangeFeed::append(const Change& change) {
  // A key without text (a null view) must fail on this delivery, as an immediate insert
  // would (NOT NULL), not later on a flush no delivery is blamed for.
  if (!deferred_ || change.row_key.data() == nullptr) {
    if (auto flushed = flush(); !flushed) return flushed;
    inserts_[2]
        .bind(1, change.seq)
        .bind_static(2, change.table)
        .bind_static(3, change.row_key)
        .bind_static(4, change.op)
        .bind(5, change.row_count)
        .bind(6, change.from_ms)
        .bind(7, change.to_ms);
    if (change.user_id) {
      inserts_[2].bind_static(8, *change.user_id);
    } else {
      inserts_[2].bind_null(8);
    }
    return inserts_[2].run();
  }
  const size_t table = keep(change.table), row_key = keep(change.row_key), op = keep(change.op);
  const size_t user = change.user_id ? keep(*change.user_id) : 0;
  pending_.push_back(Pending{change.seq, table, change.table.size(), row_key, change.row_key.size(), op,
                             change.op.size(), change.row_count, change.from_ms, change.to_ms, user,
                             change.user_id ? std::optional<size_t>(change.user_id->size()) : std::nullopt});
  return pending_.size() >= kMaxRowsPerInsert ? flush() : Result<void>{};
}

Result<void> ChangeFeed::flush() {
  size_t done = 0;
  for (size_t i = 0; i < kInsertRows.size(); ++i) {
    const size_t rows = kInsertRows[i];
    sqlite::Statement& insert = inserts_[i];
    while (pending_.size() - done >= rows) {
      for (size_t r = 0; r < rows; ++r) {
        const Pending& p = pending_[done + r];
        const int at = static_cast<int>(r) * kColumns;
        insert.bind(at + 1, p.seq)
            .bind_static(at + 2, std::string_view(text_).substr(p.table, p.table_size))
            .bind_static(at + 3, std::string_view(text_).substr(p.row_key, p.row_key_size))
            .bind_static(at + 4, std::string_view(text_).substr(p.op, p.op_size))
            .bind(at + 5, p.row_count)
            .bind(at + 6, p.from_ms)
            .bind(at + 7, p.to_ms);
        if (p.user_size) {
          insert.bind_static(at + 8, std::string_view(text_).substr(p.user, *p.user_size));
        } else {
          insert.bind_null(at + 8);
        }
      }
      if (auto done_insert = insert.run(); !done_insert) {
        discard();
        return done_insert;
      }
      done += rows;
    }
  }
  discard();
  return {};
}

}  // namespace hh::store
