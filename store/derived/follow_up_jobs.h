#pragma once
// Queues follow-up fetches in `jobs` for the fetcher to execute, for every backend. The
// job contract shared with the fetcher:
//
//   kind 'workout_stream'  job_key = workout_id
//                          payload {"workout_id":…,"user_id":…,"provider":…}
//   kind 'backfill'        job_key and payload of store/jobs/backfill_job.h (shared with
//                          `healthhook backfill`, store/jobs/job_admin.h)
//   kind 'parsing_job'     job_key = the lab report parsing job's id
//                          payload {"job_id":…,"user_id":…} (a completed job whose webhook
//                          carried no results: GET /lab_report/v1/parser/job/{job_id})
//
// A job is (re)queued only by a delivery with a higher seq than the one that last queued
// it (`trigger_seq`): a new notice re-queues a done job with attempts reset, while the
// same notice applied again (rebuild keeps `jobs`) leaves it as it is.
//
// Times: created_at, updated_at and next_attempt_at are the triggering delivery's
// received_at, not the clock. So a rebuild writes exactly what live processing wrote, and
// a job queued from a backlog is due at once (its time is in the past), which is what
// "due now" means anyway.
//
// `Statement` is the backend's one statement that writes a job by those rules, a
// JobUpsertOf<its state> (below; store/sqlite/derived/job_upsert.h,
// store/postgres/derived/pg_job_upsert.h).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/jobs/backfill_job.h"
#include "store/jobs/claimed_job.h"

namespace hh::store {

// One job written by the rules above. `State` is what the backend's statement needs: its
// `Connection` type and the connection (and the statement, where the engine keeps one).
// The backend defines create() and run() for its State (explicit specialisations,
// declared in its header, defined in its .cpp).
template <typename State>
class JobUpsertOf {
 public:
  static Result<JobUpsertOf> create(typename State::Connection& db);
  // True when it queued or re-queued the job. `user`: whom the job fetches for
  // (jobs.user_id; `purge-user` finds the job by it).
  Result<bool> run(std::string_view kind, std::string_view key, int64_t now_ms, int64_t seq, std::string_view payload,
                   std::optional<std::string_view> user);

 private:
  explicit JobUpsertOf(State state) : state_(std::move(state)) {}
  State state_;
};

template <typename Statement>
class FollowUpJobsOf {
 public:
  template <typename Connection>
  static Result<FollowUpJobsOf> create(Connection& db) {
    auto statement = Statement::create(db);
    if (!statement) return fail(statement);
    return FollowUpJobsOf(std::move(*statement));
  }

  // True when the job was queued or re-queued; false when a job with an equal or
  // higher trigger_seq already exists.
  Result<bool> queue_workout_stream(std::string_view workout_id, std::optional<std::string_view> user_id,
                                    std::optional<std::string_view> provider, int64_t seq, int64_t now_ms) {
    workout_stream_job_payload(payload_, workout_id, user_id, provider);
    return statement_.run("workout_stream", workout_id, now_ms, seq, payload_, user_id);
  }
  Result<bool> queue_backfill(const rows::BackfillNotice& notice, int64_t seq, int64_t now_ms) {
    const BackfillWindow window = backfill_window(notice);
    backfill_job_payload(payload_, window);
    backfill_job_key(key_, window);
    return statement_.run("backfill", key_, now_ms, seq, payload_, notice.user_id);
  }
  Result<bool> queue_parsing_job(std::string_view job_id, std::optional<std::string_view> user_id, int64_t seq,
                                 int64_t now_ms) {
    parsing_job_payload(payload_, job_id, user_id);
    return statement_.run(kKindParsingJob, job_id, now_ms, seq, payload_, user_id);
  }

 private:
  explicit FollowUpJobsOf(Statement statement) : statement_(std::move(statement)) {}

  Statement statement_;
  std::string key_;  // reused buffers
  std::string payload_;
};

}  // namespace hh::store
