#include "store/inbox_writer.h"

#include <sys/statvfs.h>

#include "common/log.h"
#include "common/thread_name.h"

namespace hh::store {

InboxWriter::InboxWriter(Inbox& inbox, WriterOptions options) : inbox_(inbox), options_(std::move(options)) {
  check_disk();
}

InboxWriter::~InboxWriter() { stop(); }

void InboxWriter::add_background(BackgroundWork* work) { background_.push_back(work); }

void InboxWriter::sync_commits_with(std::unique_ptr<CommitSync> sync) { commit_sync_ = std::move(sync); }

void InboxWriter::on_commit(std::function<void(size_t, double, bool)> observer) {
  commit_observer_ = std::move(observer);
}

void InboxWriter::start() {
  // Rows already in the file were committed by an earlier process: the kernel has them
  // (after a crash of the machine, they are what SQLite's recovery kept).
  durable_seq_.store(inbox_.last_seq(), std::memory_order_relaxed);
  sync_requested_seq_ = inbox_.last_seq();
  thread_ = start_named_thread("hh-inbox-writer", [this] { run(); });
}

void InboxWriter::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_one();
  if (thread_.joinable()) thread_.join();
  if (commit_sync_) commit_sync_->stop();  // the acks of the last batches
}

bool InboxWriter::last_commit_ok() const {
  return last_commit_ok_.load(std::memory_order_relaxed) && !(commit_sync_ && commit_sync_->failed());
}

std::string InboxWriter::last_commit_problem() const {
  if (last_commit_ok_.load(std::memory_order_relaxed) || !cap_reached_.load(std::memory_order_relaxed)) return {};
  return "max_database_mib (" + std::to_string(options_.max_database_mib) + " MiB) reached";
}

bool InboxWriter::accepting() const {
  std::lock_guard lock(mutex_);
  return !stopping_ && queue_.size() < options_.high_water && queued_bytes_ < options_.high_water_bytes &&
         !disk_low();
}

InboxWriter::Admission InboxWriter::submit(NewDelivery delivery, Completion done) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return Admission::stopped;
    if (disk_low()) return Admission::disk_low;
    if (queue_.size() >= options_.high_water || queued_bytes_ >= options_.high_water_bytes) {
      return Admission::over_high_water;
    }
    queued_bytes_ += delivery.body.size();
    queue_.push_back({std::move(delivery), std::move(done)});
    queued_count_.store(queue_.size(), std::memory_order_relaxed);
  }
  wakeup_.notify_one();
  return Admission::queued;
}

void InboxWriter::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wakeup_.notify_one();
}

void InboxWriter::wake() {
  {
    std::lock_guard lock(mutex_);
    wake_requested_ = true;
  }
  wakeup_.notify_one();
}

int64_t InboxWriter::durable_seq() const {
  // Without a WalSync this is only called on the writer thread (inbox_ is not thread-safe).
  return commit_sync_ ? durable_seq_.load(std::memory_order_acquire) : inbox_.last_seq();
}

void InboxWriter::mark_durable(int64_t seq) {
  // The sync thread runs its callbacks in order, so seq only grows; max() keeps it so
  // should that change. No wake-up: the writer looks again within kDurablePoll (run()).
  int64_t known = durable_seq_.load(std::memory_order_relaxed);
  while (known < seq && !durable_seq_.compare_exchange_weak(known, seq, std::memory_order_release)) {
  }
}

void InboxWriter::sync_rows_committed_by_tasks() {
  const int64_t covered = inbox_.last_seq();
  sync_requested_seq_ = covered;
  commit_sync_->after_commit([this, covered](bool synced, const std::string&) {
    if (synced) mark_durable(covered);  // a failure is reported by every ack from now on (wal_sync.h)
  });
}

void InboxWriter::run() {
  std::vector<Pending> batch;
  std::deque<std::function<void()>> tasks;
  bool more_background = true;  // run once at start: catch up on what a restart left
  int64_t given_seq = -1;       // the durable seq background work was last given
  for (;;) {
    bool stopping = false;
    {
      // Committed rows that background work has not been given wait for their sync:
      // look again soon rather than be woken by the sync thread. Under load the next
      // batch comes first, and the step then runs right after its commit, while that
      // commit's sync runs; a step run as soon as a sync returned (a wake-up) made the
      // deliveries arriving with the acks wait behind it
      // (docs/decisions/005-live-steps-apply-durable-rows.md).
      const bool rows_wait =
          commit_sync_ && !commit_sync_->failed() && inbox_.last_seq() > given_seq && !background_.empty();
      // Background work waits while a held lock failed the last commit (below): then it
      // is no reason to wake, or this loop would spin until the lock goes.
      const bool background_due = more_background && !lock_held();
      std::unique_lock lock(mutex_);
      const bool woke = wakeup_.wait_for(lock, rows_wait ? kDurablePoll : options_.idle_wakeup, [&] {
        return !queue_.empty() || !tasks_.empty() || stopping_ || wake_requested_ || background_due;
      });
      // An idle wake-up lets background work look for due work; wake() asks for it.
      if (!woke || wake_requested_) more_background = true;
      wake_requested_ = false;
      batch.swap(queue_);
      tasks.swap(tasks_);
      queued_bytes_ = 0;
      queued_count_.store(0, std::memory_order_relaxed);
      stopping = stopping_;
    }
    if (!batch.empty()) {
      commit_batch(batch);
      batch.clear();
      more_background = true;
    }
    while (!tasks.empty()) {
      tasks.front()();
      tasks.pop_front();
    }
    if (commit_sync_ && inbox_.last_seq() > sync_requested_seq_) sync_rows_committed_by_tasks();
    if (stopping) {
      std::lock_guard lock(mutex_);
      if (queue_.empty() && tasks_.empty()) break;
      continue;  // drain what arrived while committing
    }
    // Not while a lock held past commit_deadline_ms failed the last commit: a processor
    // step would wait that long for it too, and the deliveries arriving behind it (and the
    // watchdog's ping) with it. The probe below says when the lock is gone.
    if (more_background && !lock_held()) {
      more_background = false;
      given_seq = durable_seq();
      for (BackgroundWork* work : background_) {
        if (work->run_once(given_seq)) more_background = true;
      }
    }
    check_disk();
    probe_after_failure();
  }
}

bool InboxWriter::lock_held() const {
  return !last_commit_ok_.load(std::memory_order_relaxed) && last_failure_kind_ == ErrorKind::busy;
}

void InboxWriter::probe_after_failure() {
  constexpr auto kProbeInterval = std::chrono::milliseconds(500);
  if (last_commit_ok_.load(std::memory_order_relaxed)) return;
  const bool full = last_failure_kind_ == ErrorKind::full;
  if (last_failure_kind_ != ErrorKind::busy && last_failure_kind_ != ErrorKind::unavailable && !full) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_probe_ < kProbeInterval) return;
  last_probe_ = now;
  // A full disk: an empty transaction writes nothing and would pass while the disk is
  // still full. Space is what was missing: once the folder has room for the batch that
  // failed, twice over and a MiB more, than it had then, commits are tried again (a load
  // balancer that follows /readyz sends no delivery to find out). A cap that is not
  // space (max_database_mib, a file-size limit) still waits for a delivery to commit.
  if (full) {
    // The disk had that room when the commit failed: a cap (max_database_mib is SQLite's
    // max_page_count, SQLITE_FULL too), not space.
    const uint64_t room = 2 * failed_batch_bytes_ + (1u << 20);
    if (!free_at_full_ || *free_at_full_ >= room) return;
    const auto free_bytes = free_disk_bytes();
    if (!free_bytes || *free_bytes < *free_at_full_ + room) return;
  }
  if (!inbox_.probe_write()) return;  // still failing: the failed commit said why
  last_commit_ok_.store(true, std::memory_order_relaxed);
  commit_failures_.succeeded();
}

std::optional<std::chrono::milliseconds> InboxWriter::commit_stalled() const {
  const int64_t started = commit_started_ns_.load(std::memory_order_relaxed);
  if (started == 0) return std::nullopt;
  const auto running = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(started)));
  if (running <= options_.stalled_commit) return std::nullopt;
  return running;
}

void InboxWriter::commit_batch(std::vector<Pending>& batch) {
  std::vector<const NewDelivery*> deliveries;
  deliveries.reserve(batch.size());
  for (const auto& pending : batch) deliveries.push_back(&pending.delivery);

  const auto started = std::chrono::steady_clock::now();
  commit_started_ns_.store(started.time_since_epoch().count(), std::memory_order_relaxed);
  auto appended = inbox_.append(deliveries);
  commit_started_ns_.store(0, std::memory_order_relaxed);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  stats_.batches.fetch_add(1, std::memory_order_relaxed);
  stats_.commit_micros_total.fetch_add(static_cast<uint64_t>(seconds * 1e6), std::memory_order_relaxed);
  last_commit_ok_.store(appended.ok(), std::memory_order_relaxed);
  if (commit_observer_) commit_observer_(batch.size(), seconds, appended.ok());

  std::vector<AppendOutcome> outcomes;
  outcomes.reserve(batch.size());
  if (!appended) {
    last_failure_kind_ = appended.error_kind();
    // The deliveries queued meanwhile would wait the same held lock out again before
    // their own 503, at twice commit_deadline_ms (or request_deadline_ms first): they
    // are answered with this batch. Later ones try again.
    if (appended.error_kind() == ErrorKind::busy) {
      std::lock_guard lock(mutex_);
      for (auto& queued : queue_) batch.push_back(std::move(queued));
      queue_.clear();
      queued_bytes_ = 0;
      queued_count_.store(0, std::memory_order_relaxed);
    }
    last_disk_check_ = {};  // a full disk is the usual cause: re-check now
    std::string error = appended.error();
    cap_reached_.store(false, std::memory_order_relaxed);
    if (appended.error_kind() == ErrorKind::full) {
      free_at_full_ = free_disk_bytes();
      failed_batch_bytes_ = 0;
      for (const auto* delivery : deliveries) failed_batch_bytes_ += delivery->body.size() + delivery->headers_json.size();
      // SQLite says "database or disk is full" for both; with the cap set and the room the
      // batch needed free on the disk (as probe_after_failure() reads it), the cap it was.
      const uint64_t room = 2 * failed_batch_bytes_ + (1u << 20);
      if (options_.max_database_mib > 0 && free_at_full_ && *free_at_full_ >= room) {
        cap_reached_.store(true, std::memory_order_relaxed);
        error = last_commit_problem() + " (" + error + ")";
      }
    }
    commit_failures_.failed(error, batch.size());
    outcomes.assign(batch.size(), AppendOutcome{AppendOutcome::Kind::unavailable, 0, error});
    complete(batch, outcomes);
    return;
  }
  commit_failures_.succeeded();
  for (const auto* delivery : deliveries) committed_since_check_ += delivery->body.size() + delivery->headers_json.size();
  for (const Appended& result : *appended) {
    switch (result.status) {
      case AppendStatus::stored: outcomes.push_back({AppendOutcome::Kind::stored, result.seq, {}}); break;
      case AppendStatus::duplicate: outcomes.push_back({AppendOutcome::Kind::duplicate, result.seq, {}}); break;
      case AppendStatus::too_large: outcomes.push_back({AppendOutcome::Kind::too_large, 0, {}}); break;
    }
  }
  if (!commit_sync_) {
    complete(batch, outcomes);
    return;
  }
  // The batch (bodies and completions) moves to the sync thread; `batch` is left empty.
  // The sync covers every row committed so far, fetched pages included.
  const int64_t covered = inbox_.last_seq();
  sync_requested_seq_ = covered;
  commit_sync_->after_commit([this, covered, pending = std::move(batch), outcomes = std::move(outcomes)](
                              bool synced, const std::string& error) mutable {
    if (synced) {
      sync_failures_.succeeded();
      mark_durable(covered);
    } else {
      // Committed but maybe not on disk: no 2xx (wal_sync.h: why it stays so).
      sync_failures_.failed(error, pending.size());
      outcomes.assign(pending.size(), AppendOutcome{AppendOutcome::Kind::unavailable, 0, error});
    }
    complete(pending, outcomes);
  });
  batch.clear();
}

void InboxWriter::complete(std::vector<Pending>& batch, const std::vector<AppendOutcome>& outcomes) {
  for (size_t i = 0; i < batch.size(); ++i) {
    const AppendOutcome& outcome = outcomes[i];
    switch (outcome.kind) {
      case AppendOutcome::Kind::stored: stats_.stored.fetch_add(1, std::memory_order_relaxed); break;
      case AppendOutcome::Kind::duplicate: stats_.duplicates.fetch_add(1, std::memory_order_relaxed); break;
      case AppendOutcome::Kind::too_large:
      case AppendOutcome::Kind::unavailable: stats_.failed.fetch_add(1, std::memory_order_relaxed); break;
    }
    batch[i].done(outcome);
  }
}

std::optional<uint64_t> InboxWriter::free_disk_bytes() const {
  struct statvfs fs {};
  if (options_.disk_path.empty() || ::statvfs(options_.disk_path.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

void InboxWriter::check_disk() {
  if (options_.disk_path.empty() || options_.min_free_disk_bytes == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_disk_check_ < std::chrono::milliseconds(250)) {
    // Between reads of the free space, a burst of commits can write through the margin
    // before the next one: the space read last, less what was committed since (times
    // kSpentPerByte), says when to read it again now. The decision is always on a real read.
    constexpr uint64_t kSpentPerByte = 4;  // the WAL's frames, the file's pages at the checkpoint, derived rows
    const uint64_t spent = kSpentPerByte * committed_since_check_;
    if (!free_at_check_ || disk_low_.load(std::memory_order_relaxed)) return;
    if (*free_at_check_ >= spent && *free_at_check_ - spent >= options_.min_free_disk_bytes) return;
  }
  last_disk_check_ = now;
  committed_since_check_ = 0;
  free_at_check_ = free_disk_bytes();
  if (!free_at_check_) return;
  const uint64_t free_bytes = *free_at_check_;
  const bool low = free_bytes < options_.min_free_disk_bytes;
  if (low != disk_low_.exchange(low)) {
    (low ? log::warn("disk_low") : log::info("disk_ok")).num("free_bytes", static_cast<int64_t>(free_bytes));
  }
}

}  // namespace hh::store
