#pragma once
// The change feed's inserts on PostgreSQL (store/derived/change_feed.h): the kept changes
// go out as one array per column (pg_statements.h) in one statement,
// `INSERT … SELECT … FROM unnest(…) WITH ORDINALITY … ORDER BY ordinality`: one statement
// for a whole step's feed instead of one per change, with change_ids in the order given,
// after the lock on new ids (lock_new_ids, pg_statements.h) that the transaction then
// holds to its commit.
// A single change (immediate mode, or a key without text) is one plain INSERT, so that a
// NULL key fails as the NOT NULL it breaks.
//
// Lifetime: the connection must outlive this object. Used on the thread that owns it.
#include <cstddef>
#include <span>

#include "common/result.h"
#include "store/derived/change_feed.h"
#include "store/derived/derived_parts.h"
#include "store/postgres/connection.h"
#include "store/postgres/derived/pg_statements.h"

namespace hh::store {

// The statements are prepared on the connection under fixed names.
struct PgChangeInsertsState {
  using Connection = pg::Connection;
  // Bounds the statement's size.
  static constexpr size_t kMaxBuffered = 4096;

  pg::Connection* db = nullptr;
  // Reused: seq, table_name, row_key, op, row_count, from_ms, to_ms, user_id.
  ArrayLiteral columns[8];
};

using PgChangeInserts = ChangeInsertsOf<PgChangeInsertsState>;
template <>
Result<PgChangeInserts> PgChangeInserts::create(pg::Connection& db);
template <>
Result<void> PgChangeInserts::insert(std::span<const Change> changes);

}  // namespace hh::store
