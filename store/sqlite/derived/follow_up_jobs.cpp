#include "store/sqlite/derived/follow_up_jobs.h"

#include "store/jobs/claimed_job.h"

namespace hh::store {

Result<FollowUpJobs> FollowUpJobs::create(sqlite::Connection& db) {
  auto upsert = db.prepare(
      "INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, updated_at, "
      "user_id) VALUES (?1, ?2, 'queued', 0, ?3, ?4, ?5, ?3, ?3, ?6) "
      "ON CONFLICT (kind, job_key) DO UPDATE SET state = 'queued', attempts = 0, last_error = NULL, "
      "next_attempt_at = excluded.next_attempt_at, trigger_seq = excluded.trigger_seq, payload = excluded.payload, "
      "updated_at = excluded.updated_at, user_id = excluded.user_id WHERE excluded.trigger_seq > jobs.trigger_seq");
  if (!upsert) return fail(upsert.error());
  return FollowUpJobs(db, std::move(*upsert));
}

Result<bool> FollowUpJobs::queue_workout_stream(std::string_view workout_id, std::optional<std::string_view> user_id,
                                                std::optional<std::string_view> provider, int64_t seq,
                                                int64_t now_ms) {
  workout_stream_job_payload(payload_, workout_id, user_id, provider);
  return queue("workout_stream", workout_id, user_id, seq, now_ms);
}

Result<bool> FollowUpJobs::queue_backfill(const rows::BackfillNotice& notice, int64_t seq, int64_t now_ms) {
  const BackfillWindow window = backfill_window(notice);
  backfill_job_payload(payload_, window);
  backfill_job_key(key_, window);
  return queue("backfill", key_, notice.user_id, seq, now_ms);
}

Result<bool> FollowUpJobs::queue_parsing_job(std::string_view job_id, std::optional<std::string_view> user_id,
                                   int64_t seq, int64_t now_ms) {
  parsing_job_payload(payload_, job_id, user_id);
  return queue(kKindParsingJob, job_id, user_id, seq, now_ms);
}

Result<bool> FollowUpJobs::queue(std::string_view kind, std::string_view key, std::optional<std::string_view> user,
                                 int64_t seq, int64_t now_ms) {
  upsert_.bind_static(1, kind).bind_static(2, key).bind(3, now_ms).bind(4, seq).bind_static(5, payload_);
  upsert_.bind(6, user);
  if (auto done = upsert_.run(); !done) return fail(done.error());
  return db_->changes() > 0;
}

}  // namespace hh::store
