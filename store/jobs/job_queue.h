#pragma once
// The follow-up job queue (spec §5: the `jobs` table), as the fetcher uses it from the
// writer thread (store/inbox_writer.h: InboxWriter::post). One implementation per backend.
//
// State machine:
//   queued --claim_due--> running --record_progress(complete)--> done
//                            |--record_progress--> running (a backfill page stored)
//                            |--record_failure--> queued (backoff) | dead (final / attempts used up)
//                            '--release--> queued (we stopped; no attempt counted)
//   running at start-up (a crash) --requeue_interrupted--> queued | dead (counts as a failed attempt)
// The processor re-queues any state when a newer trigger arrives (trigger_seq grows).
// So every update of a claimed job is conditional on state = running and the trigger_seq
// it was claimed with: a job re-triggered meanwhile is left to its new trigger, and the
// method reports `false` ("superseded").
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/jobs/claimed_job.h"
#include "store/jobs/retry_policy.h"

namespace hh::store {

// What a stored page changes in a job.
struct JobProgress {
  int64_t page = 0;                      // pages stored so far for this trigger (the next page's number)
  std::optional<std::string> cursor;     // backfill (timeseries): the next page's cursor
  std::optional<int64_t> next_start_ms;  // backfill (summaries): the next slice's start
  bool complete = false;                 // nothing left to fetch: the job is `done`
};

class JobQueue {
 public:
  virtual ~JobQueue() = default;

  // Jobs a crash left `running` go back to `queued` (due now) with one more failed attempt,
  // or to `dead` when that uses up `max_attempts` (a job that kills the process must not
  // loop for ever). Call once at start-up, before the first claim. Returns how many.
  virtual Result<int64_t> requeue_interrupted(int64_t now_ms, int64_t max_attempts) = 0;

  // Marks up to `limit` due jobs (queued, next_attempt_at <= now) `running` and returns
  // them, oldest due first; ids in `busy` (still running in this process after a
  // re-trigger) are skipped. One transaction.
  virtual Result<std::vector<ClaimedJob>> claim_due(int64_t now_ms, size_t limit, std::span<const int64_t> busy) = 0;

  // Records a stored page. Must run INSIDE the transaction that appends the page's inbox
  // row (Inbox::append_with), so the row and the progress commit together. Resets the
  // failed-attempt count (the job makes progress) and clears last_error.
  // false: the job was re-triggered or re-queued meanwhile (the caller rolls back).
  virtual Result<bool> record_progress_in_transaction(const ClaimedJob& job, const JobProgress& progress,
                                                      int64_t now_ms) = 0;

  // A failed attempt: `decision` from decide_retry. Own transaction. false: superseded.
  virtual Result<bool> record_failure(const ClaimedJob& job, const RetryDecision& decision, std::string_view error,
                                      int64_t now_ms) = 0;

  // Back to `queued`, due now, no attempt counted (this process is stopping). Own
  // transaction. false: superseded.
  virtual Result<bool> release(const ClaimedJob& job, int64_t now_ms) = 0;

  // Leases (a queue shared by several processes, PostgreSQL): how long a claim holds a job
  // without a renewal before another process may take it over; nullopt where claims never
  // expire (one process owns the queue: SQLite). Fixed when the queue is opened; may be
  // read from any thread.
  virtual std::optional<std::chrono::milliseconds> lease() const { return std::nullopt; }
  // Extends a claimed job's lease to now + lease(), own transaction: the fetcher calls it
  // while a fetch is in flight (a stored page renews it too). false: superseded (re-triggered,
  // or taken over after the lease had passed).
  virtual Result<bool> renew_lease(const ClaimedJob&, int64_t /*now_ms*/) { return true; }
};

}  // namespace hh::store
