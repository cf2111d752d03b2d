#pragma once
// The follow-up fetcher (spec §5): polls the `jobs` queue and runs due jobs over HTTPS,
// at most service.concurrency at once, on an io thread of its own. Once started it also
// keeps the provider list current (providers_sync.h).
//
// Reads (is anything due?) use a read connection of its own; every write goes through
// the writer thread (writer_link.h). Start-up re-queues jobs a crash left `running`.
//
// Stop: no new claims; jobs in flight get `drain_timeout` to finish (a backfill stops
// after the page it is on); then their connections are closed and they go back to
// `queued` without an attempt counted. Anything that still cannot be recorded stays
// `running` and is re-queued at the next start.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "config/settings.h"
#include "fetcher/job_runner.h"
#include "fetcher/service_clients.h"
#include "store/database_location.h"
#include "store/inbox_writer.h"
#include "store/jobs/job_queue.h"
#include "store/inbox.h"

namespace hh::fetcher {

struct FetcherOptions {
  store::Database database;                   // for the fetcher's read connection
  config::ServiceSettings service;            // base URL, key header, CA, limits, retry policy
  std::string api_key;                        // the key itself (config/secrets.h); never logged
  std::vector<TeamAccess> teams;              // [[service.teams]] with their keys: jobs of their users go there
  std::string base_dir = ".";                 // a relative service.ca_file is read from here (the config's folder)
  std::chrono::milliseconds poll_interval{1000};  // longest wait before looking for due jobs again
  std::chrono::milliseconds drain_timeout{5000};
  std::function<int64_t()> now_ms;            // Unix ms; default: the system clock (tests pass a fake)
  RequestObserver observe_request;            // per GET, e.g. metrics (may be empty)
  uint64_t max_page_bytes = 0;                // RunnerOptions::max_page_bytes
  int64_t max_pages = kMaxCursorPages;        // RunnerOptions::max_pages
  // Finer than the settings' seconds, for tests of deadlines.
  std::optional<std::chrono::milliseconds> connect_timeout, read_timeout, fetch_timeout;
};

// Client settings from [service] (ms resolution overrides from `options`).
ClientOptions client_options(const FetcherOptions& options);
store::RetryPolicy retry_policy(const config::ServiceSettings& service);

class Fetcher {
 public:
  // `writer`, `inbox` and `jobs` (all on the write connection) must outlive the fetcher,
  // and the writer must run until stop() returned.
  static Result<std::unique_ptr<Fetcher>> create(FetcherOptions options, store::InboxWriter& writer,
                                                 store::Inbox& inbox, store::JobQueue& jobs);
  ~Fetcher();  // stop()
  Fetcher(const Fetcher&) = delete;
  Fetcher& operator=(const Fetcher&) = delete;

  // Starts the io thread: re-queue interrupted jobs, then poll; and the provider list's
  // sync (at once, then daily).
  void start();
  // See above; blocks until the io thread ended. Safe to call twice.
  void stop();
  // Look for due jobs now (thread-safe), e.g. after the processor queued one.
  void wake();

  // Without the io thread (tests, tools): claims the jobs due now and runs them to their
  // outcomes on the calling thread. The first call re-queues interrupted jobs, as start()
  // does. Not while started.
  std::vector<JobOutcome> run_due_now();

  struct Stats {
    std::atomic<uint64_t> jobs_done{0}, jobs_retried{0}, jobs_dead{0}, pages_stored{0}, bytes_stored{0};
  };
  const Stats& stats() const { return stats_; }
  uint64_t connections_opened() const;

 private:
  struct Impl;
  explicit Fetcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  Stats stats_;
};

}  // namespace hh::fetcher
