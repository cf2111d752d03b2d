#pragma once
// The statements of one SQLite query class (store/read_store.h), and the listing being read.
// Each is prepared on first use, so a reader pays only for the queries it runs (and a
// database from before a migration still answers the queries its schema has).
//
// Lifetime: the connection must outlive this; one thread at a time.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

template <size_t N>
class QueryStatements {
 public:
  // `sql`: the statements' text, in static storage.
  QueryStatements(sqlite::Connection& db, std::array<std::string_view, N> sql) : db_(&db), sql_(sql) {}

  // Statement `which` for a lookup (prepared if need be); the listing, if any, goes on.
  Result<sqlite::Statement*> get(size_t which) {
    auto& statement = statements_[which];
    if (!statement) {
      auto prepared = db_->prepare(sql_[which]);
      if (!prepared) return fail(prepared.error());
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

  // Steps the listing and, when there is a row, calls `read(statement)`. False when the
  // listing is done (its statement is then reset) or none was started.
  template <typename Read>
  Result<bool> next_row(Read&& read) {
    if (!listing_) return false;
    auto has_row = listing_->step();
    if (!has_row) {
      listing_ = nullptr;
      return fail(has_row.error());
    }
    if (!*has_row) {
      finish();
      return false;
    }
    read(static_cast<const sqlite::Statement&>(*listing_));
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
