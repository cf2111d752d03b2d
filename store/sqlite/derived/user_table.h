#pragma once
// The `users` table on SQLite (store/derived/user_table.h says the rules): three
// statements, each run only when the one before changed nothing (a new user; a newer
// identity, which moves the times too; only the times), then a read of the row as stored.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/user_table.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct SqliteUserTableState {
  using Connection = sqlite::Connection;
  sqlite::Connection* db;
  sqlite::Statement insert;    // a new user
  sqlite::Statement identity;  // a newer delivery changes client_user_id / team_id (and the times)
  sqlite::Statement seen;      // only the times move
  sqlite::Statement read;      // the row as stored, for the remembered rows
};

using SqliteUserTable = UserTableOf<SqliteUserTableState>;
template <>
Result<SqliteUserTable> SqliteUserTable::create(sqlite::Connection& db);
template <>
Result<WriteOutcome> SqliteUserTable::write(const rows::Identity& identity, int64_t seq, int64_t received_at_ms);

}  // namespace hh::store
