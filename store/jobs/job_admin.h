#pragma once
// `healthhook jobs`: reading and re-queueing follow-up jobs from outside the server, on a
// connection of its own while `serve` may be writing. Each write is one short transaction
// that waits for the writer's (up to the store's busy timeout) instead of failing.
// One implementation per backend; store/open_store.h opens it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

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

class JobAdmin {
 public:
  virtual ~JobAdmin() = default;
  // All jobs, or those in `state` (queued|running|done|dead), by job_id.
  virtual Result<std::vector<JobRow>> list(const std::optional<std::string>& state) = 0;
  virtual Result<std::optional<JobRow>> find(int64_t job_id) = 0;
  // queued/done/dead → queued, due now, attempts 0. A done backfill starts its window
  // again (its progress keys are removed; `page` keeps counting, so the refetched pages
  // get new message ids and are stored). A running job is left alone.
  virtual Result<RequeueStatus> requeue(int64_t job_id, int64_t now_ms) = 0;
  // Every dead job → queued, due now, attempts 0 (continuing where it stopped). Returns how many.
  virtual Result<int64_t> requeue_dead(int64_t now_ms) = 0;
};

}  // namespace hh::store
