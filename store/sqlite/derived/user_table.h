#pragma once
// The `users` table (005-identity.sql): who each user is, from the envelopes of applied
// webhook deliveries (rows::Identity).
//
// Rules: a row is created by the first delivery naming the user. client_user_id and
// team_id follow the latest delivery (by seq) that carries them; a delivery without them
// (an envelope from before Mar 2024) never erases them. first_seen_ms is the smallest
// received_at of those deliveries; last_seen_ms the largest to a minute: it moves only to
// a received_at at least kLastSeenStepMs past the stored one. Deliveries are applied in
// seq order, live and in `rebuild` alike, so `rebuild` writes the table again as it was.
//
// The change feed reports a user when the row is created or its identity changes, not
// when only last_seen_ms moves (that would be one change per delivery).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/sqlite/derived/latest_wins.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class UserTable {
 public:
  static Result<UserTable> create(sqlite::Connection& db);

  // `identity.user_id` must be set. inserted / updated (client_user_id or team_id
  // changed) / stale (nothing a reader of the feed needs to know).
  Result<WriteOutcome> write(const rows::Identity& identity, int64_t seq, int64_t received_at_ms);

  // The rows are remembered (a user's deliveries mostly change nothing, and then no
  // statement runs at all); forget them when a transaction that wrote rows rolls back or
  // the table is emptied.
  void forget_cached_rows() { rows_.clear(); }

 private:
  UserTable(sqlite::Connection& db, sqlite::Statement insert, sqlite::Statement identity, sqlite::Statement seen,
            sqlite::Statement read)
      : db_(&db),
        insert_(std::move(insert)),
        identity_(std::move(identity)),
        seen_(std::move(seen)),
        read_(std::move(read)) {}
  void bind(sqlite::Statement& s, const rows::Identity& identity, int64_t seq, int64_t received_at_ms);
  Result<void> remember(std::string_view user_id);

  sqlite::Connection* db_;
  sqlite::Statement insert_;    // a new user
  sqlite::Statement identity_;  // a newer delivery changes client_user_id / team_id (and the times)
  sqlite::Statement seen_;      // only the times move
  sqlite::Statement read_;      // the row as stored, for rows_
  UserRows rows_;  // the rows as stored (this transaction included)
};

}  // namespace hh::store
