#pragma once
// The `users` table (005-identity.sql): who each user is, from the envelopes of applied
// webhook deliveries (events::Identity).
//
// Rules: a row is created by the first delivery naming the user. client_user_id and
// team_id follow the latest delivery (by seq) that carries them; a delivery without them
// (an envelope from before Mar 2024) never erases them. first_seen_ms / last_seen_ms are
// the smallest and largest received_at of those deliveries. So these columns do not
// depend on the order deliveries are applied in; `rebuild` writes the table again as it was.
//
// The change feed reports a user when the row is created or its identity changes, not
// when only last_seen_ms moves (that would be one change per delivery).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>

#include "common/result.h"
#include "receiver/events/event_rows.h"
#include "store/derived/latest_wins.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class UserTable {
 public:
  static Result<UserTable> create(sqlite::Connection& db);

  // `identity.user_id` must be set. inserted / updated (client_user_id or team_id
  // changed) / stale (nothing a reader of the feed needs to know).
  Result<WriteOutcome> write(const events::Identity& identity, int64_t seq, int64_t received_at_ms);

 private:
  UserTable(sqlite::Connection& db, sqlite::Statement insert, sqlite::Statement identity, sqlite::Statement seen)
      : db_(&db), insert_(std::move(insert)), identity_(std::move(identity)), seen_(std::move(seen)) {}
  void bind(sqlite::Statement& s, const events::Identity& identity, int64_t seq, int64_t received_at_ms);

  sqlite::Connection* db_;
  sqlite::Statement insert_;    // a new user
  sqlite::Statement identity_;  // a newer delivery changes client_user_id / team_id (and the times)
  sqlite::Statement seen_;      // only the times move
};

}  // namespace hh::store
