#pragma once
// Reads the change feed (`changes`) page by page for the read API's GET /v1/changes.
//
// A page holds the changes with seq > `after` in (seq, change_id) order and never splits
// one seq: it ends before the first seq that would not fit in `limit`, or, when the first
// seq alone has more changes than `limit`, holds that whole seq (so a page always moves
// forward). A consumer that stores the last seq of each page it has handled and asks for
// `after = that seq` misses nothing and sees nothing twice: the processor commits every
// delivery's changes in one transaction, in seq order, so once a seq is visible all of
// its changes are.
//
// Lifetime: the connection must outlive the query; one thread at a time. Views are valid
// until the next next()/start call. Call within one read transaction (two statements).
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct StoredChange {
  int64_t change_id = 0;
  int64_t seq = 0;
  std::string_view table_name, row_key, op;
  int64_t row_count = 0;
  std::optional<int64_t> from_ms, to_ms;
};

class ChangeQuery {
 public:
  static Result<ChangeQuery> create(sqlite::Connection& db);
  Result<void> start_page(int64_t after, int64_t limit);
  Result<bool> next(StoredChange& row);
  void finish() { page_.reset(); }

 private:
  ChangeQuery(sqlite::Statement bounds, sqlite::Statement page) : bounds_(std::move(bounds)), page_(std::move(page)) {}
  sqlite::Statement bounds_;
  sqlite::Statement page_;
};

}  // namespace hh::store
