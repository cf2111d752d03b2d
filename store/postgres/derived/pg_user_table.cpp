#include "store/postgres/derived/pg_user_table.h"

#include "store/postgres/derived/pg_statements.h"

namespace hh::store {
namespace {

// Parameters, shared by the statements: $1 user_id, $2 client_user_id, $3 team_id,
// $4 received_at, $5 seq, $6 kLastSeenStepMs (store/sqlite/derived/user_table.cpp says why
// each statement reads as it does).
const std::string kPgUserInsert = "hh_derived_users_insert";
constexpr std::string_view kPgUserInsertSql =
    "INSERT INTO users (user_id, client_user_id, team_id, first_seen_ms, last_seen_ms, seq) "
    "VALUES ($1::text, $2::text, $3::text, $4::bigint, $4::bigint, $5::bigint) ON CONFLICT DO NOTHING "
    "RETURNING 1";

const std::string kPgUserIdentity = "hh_derived_users_identity";
constexpr std::string_view kPgUserIdentitySql =
    "UPDATE users SET "
    "client_user_id = CASE WHEN $5::bigint > seq THEN coalesce($2::text, client_user_id) "
    "ELSE coalesce(client_user_id, $2::text) END, "
    "team_id = CASE WHEN $5::bigint > seq THEN coalesce($3::text, team_id) ELSE coalesce(team_id, $3::text) END, "
    "seq = greatest(seq, $5::bigint), first_seen_ms = least(first_seen_ms, $4::bigint), "
    "last_seen_ms = greatest(last_seen_ms, $4::bigint) "
    "WHERE user_id = $1::text AND ("
    "client_user_id IS DISTINCT FROM (CASE WHEN $5::bigint > seq THEN coalesce($2::text, client_user_id) "
    "ELSE coalesce(client_user_id, $2::text) END) "
    "OR team_id IS DISTINCT FROM (CASE WHEN $5::bigint > seq THEN coalesce($3::text, team_id) "
    "ELSE coalesce(team_id, $3::text) END)) "
    "RETURNING 1";

// $1 user_id, $2 received_at, $3 kLastSeenStepMs.
const std::string kPgUserSeen = "hh_derived_users_seen";
constexpr std::string_view kPgUserSeenSql =
    "UPDATE users SET first_seen_ms = least(first_seen_ms, $2::bigint), "
    "last_seen_ms = greatest(last_seen_ms, $2::bigint) "
    "WHERE user_id = $1::text AND ($2::bigint < first_seen_ms OR $2::bigint >= last_seen_ms + $3::bigint)";

const std::string kPgUserRead = "hh_derived_users_read";
constexpr std::string_view kPgUserReadSql =
    "SELECT client_user_id, team_id, first_seen_ms, last_seen_ms FROM users WHERE user_id = $1::text";

}  // namespace

template <>
Result<PgUserTable> PgUserTable::create(pg::Connection& db) {
  for (const auto& [name, sql] : {std::pair{&kPgUserInsert, kPgUserInsertSql},
                                  std::pair{&kPgUserIdentity, kPgUserIdentitySql},
                                  std::pair{&kPgUserSeen, kPgUserSeenSql}, std::pair{&kPgUserRead, kPgUserReadSql}}) {
    if (auto prepared = prepare_once(db, *name, sql); !prepared) return fail(prepared);
  }
  return PgUserTable(PgUserTableState{&db});
}

template <>
Result<WriteOutcome> PgUserTable::write(const rows::Identity& identity, int64_t seq, int64_t received_at_ms) {
  const std::string_view user_id = *identity.user_id;
  if (rows_.changes_nothing(user_id, identity, received_at_ms)) return WriteOutcome::stale;

  pg::Params write;
  write.add(user_id).add(identity.client_user_id).add(identity.team_id).add(received_at_ms).add(seq);
  pg::Params seen;
  seen.add(user_id).add(received_at_ms).add(kLastSeenStepMs);
  pg::Params read;
  read.add(user_id);
  auto results = [&]() -> Result<std::vector<pg::Rows>> {
    auto pipeline = pg::Pipeline::begin(*state_.db);
    if (!pipeline) return fail(pipeline);
    for (const auto& [name, params] : {std::pair{&kPgUserInsert, &write}, std::pair{&kPgUserIdentity, &write},
                                        std::pair{&kPgUserSeen, &seen}, std::pair{&kPgUserRead, &read}}) {
      if (auto sent = pipeline->send_prepared(*name, *params); !sent) return fail(sent);
    }
    return pipeline->finish();
  }();
  if (!results) return fail(results);
  const std::vector<pg::Rows>& r = *results;
  const WriteOutcome outcome =
      !r[0].empty() ? WriteOutcome::inserted : !r[1].empty() ? WriteOutcome::updated : WriteOutcome::stale;
  const pg::Rows& row = r[3];
  if (!row.empty()) {
    const auto text = [&](int column) -> std::optional<std::string> {
      if (row.is_null(0, column)) return std::nullopt;
      return std::string(row.text(0, column));
    };
    rows_.remember(user_id, UserRows::Row{text(0), text(1), row.integer(0, 2), row.integer(0, 3)});
  }
  return outcome;
}

}  // namespace hh::store
