#pragma once
// The writer thread: the one owner of the write connection. Deliveries submitted from any
// thread are committed by group commit: everything queued when the writer becomes free
// goes into one transaction with one sync (no artificial wait), then each submitter's
// completion runs with its own outcome. Between batches the writer runs background work
// (the processor, job updates) on the same connection, one bounded transaction at a time,
// so the inbox is never blocked for longer than one such step.
//
// With a CommitSync (sync_commits_with), commits do not sync inside COMMIT: the completions
// run on the sync thread once the commit is on disk, while this thread goes on
// (store/durability.h).
// Background work is then given only the rows already on disk (durable_seq()): a row
// committed but not yet synced can still be lost to a power failure, and then its seq is
// given to the next delivery; had the processor applied it, a reader of the change feed
// (whose cursor is the seq) would have seen changes that vanish and would skip the ones
// that replace them. Rows on disk are applied the same way after a restart, so what a
// reader has seen stays true.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "store/background_work.h"
#include "store/durability.h"
#include "store/inbox.h"
#include "store/repeated_failure_log.h"

namespace hh::store {

struct AppendOutcome {
  enum class Kind { stored, duplicate, too_large, unavailable };
  Kind kind;
  int64_t seq = 0;        // stored / duplicate
  std::string error;      // unavailable: why the commit failed
};

// Runs on the writer thread (on the sync thread with a CommitSync); must not block for long.
using Completion = std::function<void(const AppendOutcome&)>;

struct WriterOptions {
  size_t high_water = 4096;                     // queued deliveries; above: refuse (503)
  size_t high_water_bytes = 64 * 1024 * 1024;   // queued body bytes; above: refuse (503)
  std::chrono::milliseconds idle_wakeup{1000};  // background work runs at least this often
  std::string disk_path;                        // folder whose free space is watched ("" = don't)
  uint64_t min_free_disk_bytes = 0;             // below: refuse (503) before the store fails
  // max_database_mib (0: none): a commit that fails full while the disk had room for it
  // reached this cap, and says so (the log, /readyz) instead of "database or disk is full".
  int64_t max_database_mib = 0;
  // A commit running longer than this is stalled (a database that stopped answering):
  // /readyz says not ready while it runs, as the deliveries waiting on it get 503s.
  std::chrono::milliseconds stalled_commit{5000};
};

class InboxWriter {
 public:
  // `inbox` is used only on the writer thread and must outlive this object.
  InboxWriter(Inbox& inbox, WriterOptions options);
  InboxWriter(const InboxWriter&) = delete;
  InboxWriter& operator=(const InboxWriter&) = delete;
  ~InboxWriter();

  // Before start(): work to run between batches, in the order added.
  void add_background(BackgroundWork* work);
  // Before start(): completions wait for `sync` instead of a sync inside each commit
  // (Store::sync_commits_on_thread() made the commits stop syncing). stop() stops it last.
  void sync_commits_with(std::unique_ptr<CommitSync> sync);
  void start();
  // Stops accepting, commits everything already queued, runs posted tasks, joins.
  void stop();

  enum class Admission { queued, over_high_water, disk_low, stopped };
  // Thread-safe. On `queued`, `done` runs exactly once on the writer thread.
  Admission submit(NewDelivery delivery, Completion done);

  // Runs `task` on the writer thread between batches (thread-safe).
  void post(std::function<void()> task);
  // Asks the writer to run background work soon (e.g. a job became due).
  void wake();
  // The newest inbox seq whose commit is on disk: every row up to it survives a power
  // failure. Without a CommitSync each COMMIT syncs, so it is the newest committed seq (then
  // call it on the writer thread only; with one it is an atomic load).
  int64_t durable_seq() const;

  size_t queue_depth() const { return queued_count_.load(std::memory_order_relaxed); }
  // False after a failed commit, until one succeeds; for good after a failed sync of the CommitSync.
  bool last_commit_ok() const;
  // Why, when known better than "the last commit failed": "max_database_mib (N MiB)
  // reached" while the last commit failed at that cap; "" otherwise.
  std::string last_commit_problem() const;
  // fdatasync calls of the sync thread (0 without one: then COMMIT syncs).
  uint64_t wal_syncs() const { return commit_sync_ ? commit_sync_->syncs() : 0; }
  // Why the sync thread's fdatasync failed, "" while it has not (then last_commit_ok() is
  // false for good: a restart is the way back, store/durability.h says why).
  // One atomic load while none has (/readyz may be polled often; the text takes a lock).
  std::string wal_sync_failure() const {
    return commit_sync_ && commit_sync_->failed() ? commit_sync_->failure() : std::string();
  }
  bool disk_low() const { return disk_low_.load(std::memory_order_relaxed); }
  bool accepting() const;  // below the marks, disk not low, not stopping
  // How long the commit running now has run, when longer than options.stalled_commit.
  std::optional<std::chrono::milliseconds> commit_stalled() const;

  // Counters for metrics (monotonic).
  struct Stats {
    std::atomic<uint64_t> batches{0};
    std::atomic<uint64_t> stored{0};
    std::atomic<uint64_t> duplicates{0};
    std::atomic<uint64_t> failed{0};
    std::atomic<uint64_t> commit_micros_total{0};
  };
  const Stats& stats() const { return stats_; }
  // Optional observer of each batch commit (size, seconds), called on the writer thread.
  void on_commit(std::function<void(size_t batch_size, double seconds, bool ok)> observer);

 private:
  struct Pending {
    NewDelivery delivery;
    Completion done;
  };
  // How soon the writer looks again for rows whose sync has returned, while some wait.
  static constexpr std::chrono::milliseconds kDurablePoll{1};
  void run();
  void commit_batch(std::vector<Pending>& batch);
  // Runs the batch's completions (on the sync thread when there is one).
  void complete(std::vector<Pending>& batch, const std::vector<AppendOutcome>& outcomes);
  // With a CommitSync: rows committed by posted tasks (the fetcher's pages) get no ack, so
  // nothing else asks for their sync; this does, so that they become durable_seq().
  void sync_rows_committed_by_tasks();
  // On the sync thread: every row up to `seq` is on disk; background work may apply them.
  void mark_durable(int64_t seq);
  void check_disk();
  // Free bytes in disk_path's file system; nullopt when not watched or not readable.
  std::optional<uint64_t> free_disk_bytes() const;
  // After a commit failed busy or unavailable, once a kProbeInterval while no delivery
  // commits: a write that stores nothing (Inbox::probe_write()); its success makes
  // last_commit_ok() true again. After a full disk, the same once the space the failed
  // batch needed is there; after a size cap (max_database_mib, a file-size limit), only a
  // commit does.
  void probe_after_failure();
  // The last commit failed on a lock another connection holds, and no probe found it gone.
  bool lock_held() const;

  Inbox& inbox_;
  const WriterOptions options_;
  std::vector<BackgroundWork*> background_;
  std::unique_ptr<CommitSync> commit_sync_;
  std::function<void(size_t, double, bool)> commit_observer_;

  mutable std::mutex mutex_;
  std::condition_variable wakeup_;
  std::vector<Pending> queue_;                  // GUARDED_BY(mutex_)
  std::deque<std::function<void()>> tasks_;     // GUARDED_BY(mutex_)
  size_t queued_bytes_ = 0;                     // GUARDED_BY(mutex_)
  bool stopping_ = false;                       // GUARDED_BY(mutex_)
  bool wake_requested_ = false;                 // GUARDED_BY(mutex_)

  std::atomic<size_t> queued_count_{0};
  std::atomic<int64_t> durable_seq_{0};  // with a CommitSync: set by the sync thread
  int64_t sync_requested_seq_ = 0;       // with a CommitSync, writer thread: newest seq a sync was asked for
  std::atomic<bool> last_commit_ok_{true};
  std::atomic<int64_t> commit_started_ns_{0};  // steady clock of the commit running now; 0: none
  std::chrono::steady_clock::time_point last_probe_{};
  ErrorKind last_failure_kind_ = ErrorKind::other;  // of the last failed commit (writer thread)
  std::atomic<bool> disk_low_{false};
  std::optional<uint64_t> free_at_full_;  // free bytes when a commit last failed full (writer thread)
  std::atomic<bool> cap_reached_{false};  // the last failed commit failed at max_database_mib
  uint64_t failed_batch_bytes_ = 0;       // and the bytes of that batch
  std::chrono::steady_clock::time_point last_disk_check_{};
  std::optional<uint64_t> free_at_check_;  // free bytes at last_disk_check_ (writer thread)
  uint64_t committed_since_check_ = 0;     // delivery bytes committed since then (writer thread)
  // Commits failing in a row (a full disk, max_database_mib: writer thread) and WAL syncs
  // (the sync thread): a few log lines while it lasts, not one per batch.
  RepeatedFailureLog commit_failures_{"inbox_commit_failed", "inbox_commit_recovered"};
  RepeatedFailureLog sync_failures_{"inbox_sync_failed", "inbox_sync_recovered"};
  Stats stats_;
  std::thread thread_;
};

}  // namespace hh::store
