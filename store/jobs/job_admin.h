#pragma once
// `healthhook jobs` and `healthhook backfill`: reading, re-queueing and queueing follow-up
// jobs from outside the server, on a connection of its own while `serve` may be writing.
// Each write is one short transaction that waits for the writer's (up to the store's busy
// timeout) instead of failing.
// One implementation per backend; store/open_store.h opens it.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/jobs/backfill_job.h"

namespace hh::store {

// One follow-up job, as stored (the job queue: store/jobs/job_queue.h).
struct JobRow {
  int64_t job_id = 0;
  std::string kind, job_key, state;
  int64_t attempts = 0;
  int64_t next_attempt_at = 0;
  std::optional<std::string> last_error;
  int64_t trigger_seq = 0;
  std::string payload;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

enum class RequeueStatus { requeued, not_found, running };

// What queue_backfills did with one window.
struct QueuedBackfill {
  enum class Outcome {
    queued,    // a new job
    requeued,  // the job had ended (done or dead): queued again, as requeue() does
    pending,   // the job is still queued or running: left as it is
  };
  int64_t job_id = 0;
  std::string job_key;
  Outcome outcome = Outcome::queued;
  std::string previous_state;  // requeued, pending: the state the job was in
};

class JobAdmin {
 public:
  virtual ~JobAdmin() = default;
  // All jobs, or those in `state` (queued|running|done|dead), by job_id; the first
  // `at_most` of them when given (a page: done jobs stay until their user is erased, so a
  // state's list grows); a negative `at_most` is 0.
  virtual Result<std::vector<JobRow>> list(const std::optional<std::string>& state,
                                           std::optional<int64_t> at_most) = 0;
  Result<std::vector<JobRow>> list(const std::optional<std::string>& state) { return list(state, std::nullopt); }
  virtual Result<std::optional<JobRow>> find(int64_t job_id) = 0;
  // queued/done/dead → queued, due now, attempts 0. A done backfill starts its window
  // again (its progress keys are removed; `page` keeps counting, so the refetched pages
  // get new message ids and are stored). A running job is left alone.
  virtual Result<RequeueStatus> requeue(int64_t job_id, int64_t now_ms) = 0;
  // Every dead job → queued, due now, attempts 0 (continuing where it stopped). Returns how many.
  virtual Result<int64_t> requeue_dead(int64_t now_ms) = 0;
  // Backfill jobs for `windows`, keyed and shaped as a historical.data.* notice queues them
  // (store/jobs/backfill_job.h), so a window asked for twice, or by a notice and by hand,
  // is one job. All in one transaction; one result per window, in order. A new job is due
  // now and its trigger_seq is the newest stored delivery's seq: a later notice for the
  // window re-queues it like any job, and an earlier one applied again (rebuild) does not.
  virtual Result<std::vector<QueuedBackfill>> queue_backfills(std::span<const BackfillWindow> windows,
                                                              int64_t now_ms) = 0;
};

}  // namespace hh::store
