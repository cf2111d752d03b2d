#include "store/postgres/derived/pg_job_upsert.h"

#include "store/postgres/derived/pg_statements.h"

namespace hh::store {
namespace {

// $1 kind, $2 job_key, $3 now (next_attempt_at, created_at, updated_at), $4 trigger_seq,
// $5 payload, $6 user_id. The INSERT's NOT EXISTS sees the table as it was before the UPDATE (one
// snapshot for the whole statement): exactly one of them can write. ON CONFLICT: a job
// `healthhook backfill` inserted meanwhile is not this delivery's fault.
const std::string kPgQueueJob = "hh_derived_jobs_queue";
constexpr std::string_view kPgQueueJobSql =
    "WITH requeued AS (UPDATE jobs SET state = 'queued', attempts = 0, last_error = NULL, lease_until = NULL, "
    "next_attempt_at = $3::bigint, trigger_seq = $4::bigint, payload = $5::text, updated_at = $3::bigint, "
    "user_id = $6::text WHERE kind = $1::text AND job_key = $2::text AND trigger_seq < $4::bigint RETURNING 1), "
    "queued AS (INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, "
    "updated_at, user_id) SELECT $1::text, $2::text, 'queued', 0, $3::bigint, $4::bigint, $5::text, $3::bigint, "
    "$3::bigint, $6::text WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE kind = $1::text AND job_key = $2::text) "
    "ON CONFLICT DO NOTHING RETURNING 1) "
    "SELECT (SELECT count(*) FROM requeued) + (SELECT count(*) FROM queued)";

}  // namespace

template <>
Result<PgJobUpsert> PgJobUpsert::create(pg::Connection& db) {
  if (auto prepared = prepare_once(db, kPgQueueJob, kPgQueueJobSql); !prepared) return fail(prepared);
  return PgJobUpsert(PgJobUpsertState{&db});
}

template <>
Result<bool> PgJobUpsert::run(std::string_view kind, std::string_view key, int64_t now_ms, int64_t seq,
                              std::string_view payload, std::optional<std::string_view> user) {
  auto written =
      state_.db->run(kPgQueueJob, pg::Params().add(kind).add(key).add(now_ms).add(seq).add(payload).add(user));
  if (!written) return fail(written);
  return !written->empty() && written->integer(0, 0) > 0;
}

}  // namespace hh::store
