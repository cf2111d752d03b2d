#pragma once
// Appends rows to the change feed (`changes`, 002-derived.sql says what each op and key
// means). Called inside the transaction that wrote the derived row, so the feed and the
// tables never disagree.
//
// Deferred mode (the processor's): append() copies the change into a buffer and the rows
// are inserted in order, up to kMaxRowsPerInsert per INSERT, at flush() or when the
// buffer is full; the caller flushes before it commits. Change ids come out the same as
// with immediate inserts (same rows, same order, nothing else writes `changes` in
// between). Why: the CHECK on changes.op (`op IN ('insert', 'update', 'replace')`) makes
// SQLite build an ephemeral table for the list at every execution of the statement,
// which cost more than the insert itself (docs/decisions/015-change-feed-batches-and-or-checks.md).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/derived/derived_parts.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class ChangeFeed {
 public:
  static constexpr size_t kMaxRowsPerInsert = 64;

  static Result<ChangeFeed> create(sqlite::Connection& db);
  Result<void> append(const Change& change);

  // Off by default (every append() inserts at once). Turning it off flushes nothing:
  // call flush() first.
  void set_deferred(bool deferred) { deferred_ = deferred; }
  // Inserts every buffered change, in order.
  Result<void> flush();
  // Drops buffered changes (their transaction rolled back).
  void discard() {
    pending_.clear();
    text_.clear();
  }

 private:
  // A buffered change; its texts are ranges of text_.
  struct Pending {
    int64_t seq;
    size_t table, table_size, row_key, row_key_size, op, op_size;
    int64_t row_count;
    std::optional<int64_t> from_ms, to_ms;
    size_t user;                      // the user's text, when user_size is set
    std::optional<size_t> user_size;  // nullopt: the change is about nobody
  };
  // Statements inserting 64, 8 and 1 rows; a flush uses the largest that fits first.
  static constexpr std::array<size_t, 3> kInsertRows = {kMaxRowsPerInsert, 8, 1};

  explicit ChangeFeed(std::array<sqlite::Statement, 3> inserts) : inserts_(std::move(inserts)) {}
  size_t keep(std::string_view text);

  std::array<sqlite::Statement, 3> inserts_;  // by kInsertRows; [2] is the single-row insert
  bool deferred_ = false;
  std::vector<Pending> pending_;
  std::string text_;  // the buffered changes' texts, back to back
};

}  // namespace hh::store
