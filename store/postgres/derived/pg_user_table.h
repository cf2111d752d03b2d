#pragma once
// The `users` table on PostgreSQL (store/derived/user_table.h says the rules), with the
// same three statements as SQLite's. They run together in one pipeline (one round trip)
// with a read of the row as it ends up: each later statement changes nothing when an
// earlier one wrote (an inserted row already has the delivery's values and times; an
// identity update already moved the times), so running all three gives what SQLite's
// "the next only when the previous changed nothing" gives.
//
// Lifetime: the connection must outlive this object. Used on the thread that owns it.
#include <cstdint>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/user_table.h"
#include "store/postgres/connection.h"

namespace hh::store {

// The statements are prepared on the connection under fixed names.
struct PgUserTableState {
  using Connection = pg::Connection;
  pg::Connection* db;
};

using PgUserTable = UserTableOf<PgUserTableState>;
template <>
Result<PgUserTable> PgUserTable::create(pg::Connection& db);
template <>
Result<WriteOutcome> PgUserTable::write(const rows::Identity& identity, int64_t seq, int64_t received_at_ms);

}  // namespace hh::store
