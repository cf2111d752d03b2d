#include "store/sqlite/derived/job_upsert.h"

namespace hh::store {

template <>
Result<SqliteJobUpsert> SqliteJobUpsert::create(sqlite::Connection& db) {
  auto upsert = db.prepare(
      "INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, updated_at, "
      "user_id) VALUES (?1, ?2, 'queued', 0, ?3, ?4, ?5, ?3, ?3, ?6) "
      "ON CONFLICT (kind, job_key) DO UPDATE SET state = 'queued', attempts = 0, last_error = NULL, "
      "next_attempt_at = excluded.next_attempt_at, trigger_seq = excluded.trigger_seq, payload = excluded.payload, "
      "updated_at = excluded.updated_at, user_id = excluded.user_id WHERE excluded.trigger_seq > jobs.trigger_seq");
  if (!upsert) return fail(upsert);
  return SqliteJobUpsert(SqliteJobUpsertState{&db, std::move(*upsert)});
}

template <>
Result<bool> SqliteJobUpsert::run(std::string_view kind, std::string_view key, int64_t now_ms, int64_t seq,
                                  std::string_view payload, std::optional<std::string_view> user) {
  sqlite::Statement& upsert = state_.upsert;
  upsert.bind_static(1, kind).bind_static(2, key).bind(3, now_ms).bind(4, seq).bind_static(5, payload);
  upsert.bind(6, user);
  if (auto done = upsert.run(); !done) return fail(done);
  return state_.db->changes() > 0;
}

}  // namespace hh::store
