#include "store/postgres/derived/pg_follow_up_jobs.h"

#include "store/derived/derived_parts.h"
#include "store/jobs/claimed_job.h"
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

Result<PgFollowUpJobs> PgFollowUpJobs::create(pg::Connection& db) {
  if (auto prepared = prepare_once(db, kPgQueueJob, kPgQueueJobSql); !prepared) {
    return fail(prepared.error_kind(), prepared.error());
  }
  return PgFollowUpJobs(db);
}

Result<bool> PgFollowUpJobs::queue_workout_stream(std::string_view workout_id,
                                                  std::optional<std::string_view> user_id,
                                                  std::optional<std::string_view> provider, int64_t seq,
                                                  int64_t now_ms) {
  workout_stream_job_payload(payload_, workout_id, user_id, provider);
  return queue("workout_stream", workout_id, user_id, seq, now_ms);
}

Result<bool> PgFollowUpJobs::queue_backfill(const rows::BackfillNotice& notice, int64_t seq, int64_t now_ms) {
  const BackfillWindow window = backfill_window(notice);
  backfill_job_payload(payload_, window);
  backfill_job_key(key_, window);
  return queue("backfill", key_, notice.user_id, seq, now_ms);
}

Result<bool> PgFollowUpJobs::queue_parsing_job(std::string_view job_id, std::optional<std::string_view> user_id,
                                   int64_t seq, int64_t now_ms) {
  parsing_job_payload(payload_, job_id, user_id);
  return queue(kKindParsingJob, job_id, user_id, seq, now_ms);
}

Result<bool> PgFollowUpJobs::queue(std::string_view kind, std::string_view key, std::optional<std::string_view> user,
                                   int64_t seq, int64_t now_ms) {
  auto written =
      db_->run(kPgQueueJob, pg::Params().add(kind).add(key).add(now_ms).add(seq).add(payload_).add(user));
  if (!written) return fail(written.error_kind(), written.error());
  return !written->empty() && written->integer(0, 0) > 0;
}

}  // namespace hh::store
