#pragma once
// Reads the change feed (`changes`) page by page for the read API's GET /v1/changes.
//
// A page holds at most `limit` changes after a position, in (seq, change_id) order. It
// ends at a seq boundary whenever it can: before the first seq that would not fit whole.
// Only when the first seq of the page alone has more changes than fit does the page end
// inside it, after exactly `limit` changes; ChangePage then says where to go on
// (`resume_change_id`). A consumer that stores the last complete seq it has handled and
// asks for `after = that seq` misses nothing and sees nothing twice: the processor commits
// every delivery's changes in one transaction, in seq order, so once a seq is visible all
// of its changes are.
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

// Where a page starts: after every change of seq `after_seq`, or, inside that seq, after
// change `after_change_id` (a page that ended inside a seq).
struct ChangePosition {
  int64_t after_seq = 0;
  std::optional<int64_t> after_change_id;
};

class ChangeQuery {
 public:
  static Result<ChangeQuery> create(sqlite::Connection& db);
  Result<void> start_page(int64_t after, int64_t limit) { return start_page(ChangePosition{after, {}}, limit); }
  Result<void> start_page(const ChangePosition& from, int64_t limit);
  Result<bool> next(StoredChange& row);
  void finish() { page_.reset(); }
  // After start_page: true when the page ends inside a seq (its changes go on in the next
  // page, from the last change's id).
  bool ends_inside_seq() const { return ends_inside_seq_; }

 private:
  ChangeQuery(sqlite::Statement bounds, sqlite::Statement page) : bounds_(std::move(bounds)), page_(std::move(page)) {}
  sqlite::Statement bounds_;
  sqlite::Statement page_;
  bool ends_inside_seq_ = false;
};

}  // namespace hh::store
