#include "store/sqlite/derived/user_table.h"

namespace hh::store {
namespace {

// Parameters, shared by the three statements: ?1 user_id, ?2 client_user_id, ?3 team_id,
// ?4 received_at, ?5 seq.
constexpr std::string_view kInsert =
    "INSERT INTO users (user_id, client_user_id, team_id, first_seen_ms, last_seen_ms, seq) "
    "VALUES (?1, ?2, ?3, ?4, ?4, ?5) ON CONFLICT DO NOTHING";

// A value the delivery does not carry (NULL) keeps the stored one; an older delivery
// (lower seq) only fills what is still NULL.
constexpr std::string_view kIdentity =
    "UPDATE users SET "
    "client_user_id = CASE WHEN ?5 > seq THEN coalesce(?2, client_user_id) ELSE coalesce(client_user_id, ?2) END, "
    "team_id = CASE WHEN ?5 > seq THEN coalesce(?3, team_id) ELSE coalesce(team_id, ?3) END, "
    "seq = max(seq, ?5), first_seen_ms = min(first_seen_ms, ?4), last_seen_ms = max(last_seen_ms, ?4) "
    "WHERE user_id = ?1 AND ("
    "client_user_id IS NOT (CASE WHEN ?5 > seq THEN coalesce(?2, client_user_id) ELSE coalesce(client_user_id, ?2) END) "
    "OR team_id IS NOT (CASE WHEN ?5 > seq THEN coalesce(?3, team_id) ELSE coalesce(team_id, ?3) END))";

// ?1 user_id, ?2 received_at, ?3 kLastSeenStepMs. Writes nothing (no page dirtied) when
// the times already cover received_at, to the step: a user's deliveries come many a
// minute, and writing the row for each of them put one more page in every commit.
constexpr std::string_view kSeen =
    "UPDATE users SET first_seen_ms = min(first_seen_ms, ?2), last_seen_ms = max(last_seen_ms, ?2) "
    "WHERE user_id = ?1 AND (?2 < first_seen_ms OR ?2 >= last_seen_ms + ?3)";

constexpr std::string_view kRead =
    "SELECT client_user_id, team_id, first_seen_ms, last_seen_ms FROM users WHERE user_id = ?1";

// Remembers the row of `user_id` as stored (UserRows).
Result<void> remember_user_row(sqlite::Statement& read, UserRows& rows, std::string_view user_id) {
  read.bind_static(1, user_id);
  auto found = read.step();
  if (!found) return fail(found);
  if (*found) {
    const auto text = [&read](int column) -> std::optional<std::string> {
      if (read.column_is_null(column)) return std::nullopt;
      return std::string(read.column_text(column));
    };
    rows.remember(user_id, UserRows::Row{text(0), text(1), read.column_int(2), read.column_int(3)});
  }
  read.reset();
  return {};
}

void bind_identity(sqlite::Statement& s, const rows::Identity& identity, int64_t seq, int64_t received_at_ms) {
  s.bind_static(1, *identity.user_id);
  if (identity.client_user_id) {
    s.bind_static(2, *identity.client_user_id);
  } else {
    s.bind_null(2);
  }
  if (identity.team_id) {
    s.bind_static(3, *identity.team_id);
  } else {
    s.bind_null(3);
  }
  s.bind(4, received_at_ms).bind(5, seq);
}

}  // namespace

template <>
Result<SqliteUserTable> SqliteUserTable::create(sqlite::Connection& db) {
  auto insert = db.prepare(kInsert);
  if (!insert) return fail(insert);
  auto identity = db.prepare(kIdentity);
  if (!identity) return fail(identity);
  auto seen = db.prepare(kSeen);
  if (!seen) return fail(seen);
  auto read = db.prepare(kRead);
  if (!read) return fail(read);
  return SqliteUserTable(
      SqliteUserTableState{&db, std::move(*insert), std::move(*identity), std::move(*seen), std::move(*read)});
}

template <>
Result<WriteOutcome> SqliteUserTable::write(const rows::Identity& identity, int64_t seq, int64_t received_at_ms) {
  const std::string_view user_id = *identity.user_id;
  // What the three statements would leave as it is (UserRows::changes_nothing).
  if (rows_.changes_nothing(user_id, identity, received_at_ms)) return WriteOutcome::stale;
  SqliteUserTableState& s = state_;
  const auto outcome = [&]() -> Result<WriteOutcome> {
    bind_identity(s.insert, identity, seq, received_at_ms);
    if (auto done = s.insert.run(); !done) return fail(done);
    if (s.db->changes() > 0) return WriteOutcome::inserted;
    bind_identity(s.identity, identity, seq, received_at_ms);
    if (auto done = s.identity.run(); !done) return fail(done);
    if (s.db->changes() > 0) return WriteOutcome::updated;
    s.seen.bind_static(1, user_id).bind(2, received_at_ms).bind(3, kLastSeenStepMs);
    if (auto done = s.seen.run(); !done) return fail(done);
    return WriteOutcome::stale;
  }();
  if (!outcome) return outcome;
  if (auto remembered = remember_user_row(s.read, rows_, user_id); !remembered) return fail(remembered);
  return outcome;
}

}  // namespace hh::store
