#pragma once
// Queues follow-up fetches in `jobs` on PostgreSQL: the contract and re-queue rules of
// store/sqlite/derived/follow_up_jobs.h (a job is queued again only by a delivery with a
// higher seq than its trigger_seq; times are the triggering delivery's received_at), in
// one statement: an UPDATE of an older job and an INSERT of a missing one. Not
// `INSERT … ON CONFLICT DO UPDATE`: that takes a job_id from the identity for every
// attempt, even one that only finds the job, and job ids would then leave gaps SQLite's
// have not. A re-queued job's lease (lease_until, PostgreSQL only) is cleared with its
// state: it is not running any more.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/postgres/connection.h"

namespace hh::store {

class PgFollowUpJobs {
 public:
  static Result<PgFollowUpJobs> create(pg::Connection& db);

  // True when the job was queued or re-queued; false when a job with an equal or
  // higher trigger_seq already exists.
  Result<bool> queue_workout_stream(std::string_view workout_id, std::optional<std::string_view> user_id,
                                    std::optional<std::string_view> provider, int64_t seq, int64_t now_ms);
  Result<bool> queue_backfill(const rows::BackfillNotice& notice, int64_t seq, int64_t now_ms);
  Result<bool> queue_parsing_job(std::string_view job_id, std::optional<std::string_view> user_id, int64_t seq,
                                 int64_t now_ms);

 private:
  explicit PgFollowUpJobs(pg::Connection& db) : db_(&db) {}
  // `user`: whom the job fetches for (jobs.user_id; `purge-user` finds the job by it).
  Result<bool> queue(std::string_view kind, std::string_view key, std::optional<std::string_view> user, int64_t seq,
                     int64_t now_ms);

  pg::Connection* db_;
  std::string key_;  // reused buffers
  std::string payload_;
};

}  // namespace hh::store
