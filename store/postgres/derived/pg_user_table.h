#pragma once
// The `users` table on PostgreSQL: the rules of store/sqlite/derived/user_table.h (who
// each user is, from the envelopes of applied webhook deliveries; client_user_id and
// team_id follow the latest delivery carrying them; first/last seen, the latter to a
// minute), with the same three statements. They run together in one pipeline (one round
// trip) with a read of the row as it ends up: each later statement changes nothing when an
// earlier one wrote (an inserted row already has the delivery's values and times; an
// identity update already moved the times), so running all three gives what SQLite's
// "the next only when the previous changed nothing" gives.
//
// Lifetime: the connection must outlive this object. Used on the thread that owns it.
#include <cstdint>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/postgres/connection.h"

namespace hh::store {

class PgUserTable {
 public:
  static Result<PgUserTable> create(pg::Connection& db);

  // `identity.user_id` must be set. inserted / updated (client_user_id or team_id
  // changed) / stale (nothing a reader of the feed needs to know).
  Result<WriteOutcome> write(const rows::Identity& identity, int64_t seq, int64_t received_at_ms);

  // Forget the remembered rows when a transaction that wrote rows rolls back or the table
  // is emptied.
  void forget_cached_rows() { rows_.clear(); }

 private:
  explicit PgUserTable(pg::Connection& db) : db_(&db) {}

  pg::Connection* db_;
  UserRows rows_;  // the rows as stored (this transaction included)
};

}  // namespace hh::store
