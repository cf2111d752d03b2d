#pragma once
// Queues follow-up fetches in `jobs` (003-jobs.sql) for the fetcher to execute. The job
// contract shared with the fetcher:
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
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/jobs/backfill_job.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class FollowUpJobs {
 public:
  static Result<FollowUpJobs> create(sqlite::Connection& db);

  // True when the job was queued or re-queued; false when a job with an equal or
  // higher trigger_seq already exists.
  Result<bool> queue_workout_stream(std::string_view workout_id, std::optional<std::string_view> user_id,
                                    std::optional<std::string_view> provider, int64_t seq, int64_t now_ms);
  Result<bool> queue_backfill(const rows::BackfillNotice& notice, int64_t seq, int64_t now_ms);
  Result<bool> queue_parsing_job(std::string_view job_id, std::optional<std::string_view> user_id, int64_t seq,
                                 int64_t now_ms);

 private:
  FollowUpJobs(sqlite::Connection& db, sqlite::Statement upsert) : db_(&db), upsert_(std::move(upsert)) {}
  // `user`: whom the job fetches for (jobs.user_id; `purge-user` finds the job by it).
  Result<bool> queue(std::string_view kind, std::string_view key, std::optional<std::string_view> user, int64_t seq,
                     int64_t now_ms);

  sqlite::Connection* db_;
  sqlite::Statement upsert_;
  std::string key_;      // reused buffers
  std::string payload_;
};

}  // namespace hh::store
