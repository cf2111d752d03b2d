#pragma once
// The `users` table (SQLite 005-identity.sql, PostgreSQL 001-schema.sql): who each user
// is, from the envelopes of applied webhook deliveries (rows::Identity), for every backend.
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
// `State` is what the backend's statements need (store/sqlite/derived/user_table.h,
// store/postgres/derived/pg_user_table.h): its `Connection` type and whatever it keeps
// between calls. The backend defines create() and write() for its State (explicit
// specialisations, declared in its header, defined in its .cpp).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <utility>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"

namespace hh::store {

template <typename State>
class UserTableOf {
 public:
  static Result<UserTableOf> create(typename State::Connection& db);

  // `identity.user_id` must be set. inserted / updated (client_user_id or team_id
  // changed) / stale (nothing a reader of the feed needs to know).
  Result<WriteOutcome> write(const rows::Identity& identity, int64_t seq, int64_t received_at_ms);

  // The rows are remembered (a user's deliveries mostly change nothing, and then no
  // statement runs at all); forget them when a transaction that wrote rows rolls back or
  // the table is emptied.
  void forget_cached_rows() { rows_.clear(); }

 private:
  explicit UserTableOf(State state) : state_(std::move(state)) {}

  State state_;
  UserRows rows_;  // the rows as stored (this transaction included)
};

}  // namespace hh::store
