#pragma once
// Appends rows to the change feed (`changes`, 002-derived.sql says what each op and key
// means). Called inside the transaction that wrote the derived row, so the feed and the
// tables never disagree.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct Change {
  int64_t seq = 0;                 // the delivery that caused it
  std::string_view table;          // "summaries", "samples", …
  std::string_view row_key;
  std::string_view op;             // "insert", "update", "replace"
  int64_t row_count = 1;
  std::optional<int64_t> from_ms;  // samples only
  std::optional<int64_t> to_ms;
};

class ChangeFeed {
 public:
  static Result<ChangeFeed> create(sqlite::Connection& db);
  Result<void> append(const Change& change);

 private:
  explicit ChangeFeed(sqlite::Statement insert) : insert_(std::move(insert)) {}
  sqlite::Statement insert_;
};

}  // namespace hh::store
