#pragma once
// The statements of one SQLite read query, and the listing being read: the SQLite
// listings of the queries written once (store/queries/listings.h). Each statement is
// prepared on first use, so a reader pays only for the queries it runs (and a database
// from before a migration still answers the queries its schema has).
//
// Lifetime: the connection must outlive this; one thread at a time.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/queries/listings.h"
#include "store/queries/query_args.h"
#include "store/sqlite/connection.h"

namespace hh::store {

// Binds `args` as ?1… of `statement`.
void bind_args(sqlite::Statement& statement, const QueryArgs& args);

template <size_t N>
class QueryStatements {
 public:
  // `sql`: the statements' text, in static storage.
  QueryStatements(sqlite::Connection& db, std::array<std::string_view, N> sql) : db_(&db), sql_(sql) {}
  QueryStatements(sqlite::Connection& db, const std::array<std::string, N>& sql, RowSize = RowSize::small)
      : db_(&db) {
    for (size_t i = 0; i < N; ++i) sql_[i] = sql[i];
  }

  // Statement `which` for a lookup (prepared if need be); the listing, if any, goes on.
  Result<sqlite::Statement*> get(size_t which) {
    auto& statement = statements_[which];
    if (!statement) {
      auto prepared = db_->prepare(sql_[which]);
      if (!prepared) return fail(prepared);
      statement.emplace(std::move(*prepared));
    }
    return &*statement;
  }

  // Ends any listing and makes statement `which` the one next_row() reads; bind it next.
  Result<sqlite::Statement*> start(size_t which) {
    finish();
    auto statement = get(which);
    if (statement) listing_ = *statement;
    return statement;
  }

  // The same, bound to `args` (SQLite steps a statement whatever the fetch).
  Result<void> start(size_t which, const QueryArgs& args, Fetch = Fetch::cursor) {
    auto statement = start(which);
    if (!statement) return fail(statement);
    bind_args(**statement, args);
    return {};
  }

  // Steps the listing and, when there is a row, calls `read(statement)`. False when the
  // listing is done (its statement is then reset) or none was started.
  template <typename Read>
  Result<bool> next_row(Read&& read) {
    if (!listing_) return false;
    auto has_row = listing_->step();
    if (!has_row) {
      listing_ = nullptr;
      return fail(has_row);
    }
    if (!*has_row) {
      finish();
      return false;
    }
    read(static_cast<const sqlite::Statement&>(*listing_));
    return true;
  }
  template <typename Read>
  Result<bool> next(Read&& read) {
    return next_row(std::forward<Read>(read));
  }

  // One row of statement `which` with `args`, beside the listing; reset after `read`.
  template <typename Read>
  Result<bool> lookup(size_t which, const QueryArgs& args, Read&& read) {
    auto statement = get(which);
    if (!statement) return fail(statement);
    (*statement)->reset();
    bind_args(**statement, args);
    return (*statement)->first_row(std::forward<Read>(read));
  }

  // The same, but the row stays current (its views valid) until the next find() or
  // finish(): the statement is not reset after a row.
  template <typename Read>
  Result<bool> find(size_t which, const QueryArgs& args, Read&& read) {
    auto statement = get(which);
    if (!statement) return fail(statement);
    sqlite::Statement& s = **statement;
    s.reset();
    bind_args(s, args);
    auto has_row = s.step();
    if (!has_row) return fail(has_row);
    if (!*has_row) {
      s.reset();
      return false;
    }
    read(static_cast<const sqlite::Statement&>(s));
    return true;
  }

  // Resets every statement (ends the read snapshot of a listing stopped early).
  void finish() {
    for (auto& statement : statements_) {
      if (statement) statement->reset();
    }
    listing_ = nullptr;
  }

 private:
  sqlite::Connection* db_;
  std::array<std::string_view, N> sql_;
  std::array<std::optional<sqlite::Statement>, N> statements_;
  sqlite::Statement* listing_ = nullptr;
};

}  // namespace hh::store
