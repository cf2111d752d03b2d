#pragma once
// A transaction held for a scope on a backend's connection (store/sqlite/connection.h,
// store/postgres/connection.h): it rolls back unless commit() succeeded, so a failure
// anywhere leaves nothing half-written. How an engine begins, commits and rolls back is
// its own (`Engine`):
//   Engine::Connection                       the connection type
//   Engine::begin(Connection&), commit(Connection&) -> Result<void>; rollback(Connection&)
//   Engine::kOpenAfterFailedCommit            whether a failed COMMIT leaves the transaction
//                                             open (then it is rolled back here)
#include <utility>

#include "common/result.h"

namespace hh::store {

template <typename Engine>
class ScopedTransaction {
 public:
  using Connection = typename Engine::Connection;

  static Result<ScopedTransaction> begin(Connection& db) {
    if (auto begun = Engine::begin(db); !begun) return fail(begun);
    return ScopedTransaction(&db);
  }
  ScopedTransaction(ScopedTransaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  ScopedTransaction& operator=(ScopedTransaction&&) = delete;
  ~ScopedTransaction() {
    if (db_ != nullptr) Engine::rollback(*db_);
  }

  Result<void> commit() {
    auto committed = Engine::commit(*db_);
    if (committed || !Engine::kOpenAfterFailedCommit) db_ = nullptr;
    return committed;
  }

 private:
  explicit ScopedTransaction(Connection* db) : db_(db) {}
  Connection* db_;
};

}  // namespace hh::store
