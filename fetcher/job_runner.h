#pragma once
// Runs one claimed job to an outcome: fetch its next page, check it, store it with the
// job's progress (one transaction), repeat until the job is done, fails, or the fetcher
// stops. Logs one JSON line per outcome (never the API key).
//
// Outcomes:
//   done        every page stored; the job is `done`
//   retry       a page failed; the job is `queued` again with backoff (or Retry-After). Also
//               a job held back, no attempt counted, while its service is paused: a 429
//               or 503 from a service pauses every job going to it (same base URL and key)
//               until the answer's Retry-After (or the backoff) has passed, and so does
//               the provider list's (service_pauses.h); a held-back job is due when the
//               pause ends, plus jitter (retry_policy.h retry_after_ms)
//   dead        final failure or attempts used up; the job is `dead` with last_error
//   superseded  re-triggered while running: left to the new trigger, nothing written
//   stopped     the fetcher is stopping: the job went back to `queued`, no attempt counted
//   stuck       the writer could not record the outcome; the job stays `running` and is
//               re-queued at the next start
#include <atomic>
#include <chrono>
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <random>
#include <string>
#include <unordered_map>

#include "fetcher/https_client.h"
#include "fetcher/service_clients.h"
#include "fetcher/service_pauses.h"
#include "fetcher/service_values.h"
#include "fetcher/writer_link.h"
#include "store/jobs/retry_policy.h"

namespace hh::fetcher {

struct JobOutcome {
  enum class Kind { done, retry, dead, superseded, stopped, stuck };
  Kind kind = Kind::done;
  int64_t job_id = 0;
  int64_t pages = 0;             // pages stored in this run
  uint64_t body_bytes = 0;       // decoded bytes stored in this run
  int64_t attempts = 0;          // the job's failed attempts after this run
  int64_t next_attempt_at_ms = 0;  // retry
  std::string error;             // retry, dead, stuck
};
std::string_view outcome_name(JobOutcome::Kind kind);

// Called once per GET with its outcome label (failure_policy.h request_outcome) and its
// duration from connect to the last body byte; runs on the fetcher's io thread.
using RequestObserver = std::function<void(std::string_view outcome, double seconds)>;

struct RunnerOptions {
  store::RetryPolicy retry;
  std::function<int64_t()> now_ms;  // Unix ms; tests pass a fake clock
  RequestObserver observe_request;  // may be empty
  // How often a claimed job's lease is renewed while its page is being fetched (a third of
  // the queue's lease, store::JobQueue::lease); zero: claims never expire (SQLite). A fetch
  // may take longer than the lease; the job stays this instance's meanwhile.
  std::chrono::milliseconds lease_renewal{0};
  // Largest answer applied as one JSON document (events::ParseLimits::max_document_bytes);
  // a larger one, other than a workout stream's, ends its job dead. 0: no bound here.
  uint64_t max_page_bytes = 0;
  // Most pages one job reads along a chain of next_cursor (service_values.h kMaxCursorPages):
  // past them the job ends dead. A summary backfill's window steps are no chain: not counted.
  int64_t max_pages = kMaxCursorPages;
};

class JobRunner {
 public:
  // `clients`, `writer` and `pauses` must outlive the runner; `stopping` is read between
  // pages. A job goes to the client of its user's team (ClaimedJob::team_id), else the
  // primary. `pauses` is shared with the provider list's sync.
  JobRunner(ServiceClients& clients, WriterLink& writer, ServicePauses& pauses, RunnerOptions options,
            const std::atomic<bool>& stopping);

  boost::asio::awaitable<JobOutcome> run(store::ClaimedJob job);

 private:
  boost::asio::awaitable<JobOutcome> fail_job(store::ClaimedJob& job, JobOutcome outcome, bool final,
                                              std::optional<int64_t> retry_after_s, std::string error,
                                              HttpsClient* paused_service);
  // `job` is not sent while its service is paused: queued again for the pause's end (plus
  // jitter), its attempts unchanged.
  boost::asio::awaitable<JobOutcome> hold_back(store::ClaimedJob& job, JobOutcome outcome, int64_t until_ms,
                                               std::string cause);
  // Records `decision` for `job` and logs the outcome (retry, dead, superseded or stuck).
  boost::asio::awaitable<JobOutcome> record(store::ClaimedJob& job, JobOutcome outcome, store::RetryDecision decision,
                                            std::string error, int64_t now);
  boost::asio::awaitable<JobOutcome> release(store::ClaimedJob& job, JobOutcome outcome);
  // client.get(target), renewing `job`'s lease every lease_renewal until it has answered.
  boost::asio::awaitable<FetchResult> fetch_holding_lease(HttpsClient& client, std::string target,
                                                          const store::ClaimedJob& job);
  // Renews `job`'s lease every lease_renewal; ends only when cancelled.
  boost::asio::awaitable<void> keep_lease(store::ClaimedJob job);

  ServiceClients& clients_;
  WriterLink& writer_;
  RunnerOptions options_;
  const std::atomic<bool>& stopping_;
  ServicePauses& pauses_;
  std::mt19937_64 random_;
};

}  // namespace hh::fetcher
