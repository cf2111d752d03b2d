#pragma once
// Makes the inbox writer's commits durable on a thread of its own, then runs their acks.
//
// With `synchronous = "full"` every ingest commit used to sync the WAL inside COMMIT, on
// the writer thread: the processor step that follows each batch, and the next batch,
// waited behind that fsync (docs/decisions/001-wal-sync-thread.md). Instead the write connection
// commits with synchronous = NORMAL (SQLite writes the WAL frames but does not sync
// them) and hands the batch's acks to this object, which calls fdatasync() on the WAL
// file and only then runs them. The writer meanwhile applies the batch and commits the
// next one; one fdatasync covers every commit that returned before it began (group
// sync). Still true: no 2xx before the delivery's frames are on disk.
//
// Why that is as durable as SQLite's own sync at COMMIT: fdatasync on any descriptor of
// the WAL file flushes all of the file's written data, i.e. every frame committed before
// the call; SQLite recovers the WAL as a prefix of valid frames (checksums chain from the
// header), and frames are overwritten only after a checkpoint has copied them into the
// database and synced it (SQLite syncs checkpoints at NORMAL too, and the WAL header
// when the log restarts).
//
// A failed sync fails every later one too, until a restart: after an fdatasync error
// Linux may have dropped the dirty pages and report the next fdatasync as a success, and
// the failed batch is committed as far as SQLite can tell, so a retry would be answered
// "duplicate" for a delivery that may not be on disk. So from then on every delivery
// gets 503 and /readyz says why; after a restart SQLite recovers the WAL that really is
// on disk and the service's retries bring the rest (PostgreSQL stops for the same reason).
//
// The WAL file must stay the same file while this object lives: SQLite removes it only
// when the last connection closes, and `serve` keeps its connections open. A database (or
// its WAL) removed, moved or replaced while serving fails the sync the same way: what it
// committed since would be lost to the next start.
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "store/durability.h"

namespace hh::store {

class WalSync final : public CommitSync {
 public:
  // Syncs the file behind the descriptor; returns "" or why not (tests inject failures).
  using SyncFile = std::function<std::string(int fd)>;

  // `wal_path`: the database's "-wal" file, which must exist (the database is open in
  // WAL mode and has been read).
  static Result<std::unique_ptr<WalSync>> open(const std::string& wal_path, SyncFile sync_file = {});
  ~WalSync() override;  // stop()
  WalSync(const WalSync&) = delete;
  WalSync& operator=(const WalSync&) = delete;

  // Thread-safe; call after the commit returned. `after` runs exactly once, after a sync
  // that began later (or, after stop(), at once with synced = false).
  void after_commit(AfterSync after) override;
  // Syncs and runs everything handed over so far, then joins the thread.
  void stop() override;

  // Syncs of the file so far (counted before the acks they release run).
  uint64_t syncs() const override;
  // A sync has failed: every later ack is refused until this object is destroyed.
  bool failed() const override { return failed_.load(std::memory_order_relaxed); }
  // Why the first failed sync failed ("" while none has): for /readyz, off the hot path.
  std::string failure() const override;

 private:
  WalSync(int fd, std::string database_path, dev_t database_dev, ino_t database_ino, SyncFile sync_file);
  void run();
  // "" while the database file is still the one at its path and the WAL is linked; else why.
  std::string files_removed() const;

  const int fd_;
  const std::string database_path_;  // watched by path and identity (files_removed())
  const dev_t database_dev_;
  const ino_t database_ino_;
  const SyncFile sync_file_;
  mutable std::mutex mutex_;
  std::condition_variable wakeup_;
  std::vector<AfterSync> waiting_;  // GUARDED_BY(mutex_)
  bool stopping_ = false;           // GUARDED_BY(mutex_)
  uint64_t syncs_ = 0;              // GUARDED_BY(mutex_)
  std::string failure_;             // GUARDED_BY(mutex_): the first sync failure
  std::atomic<bool> failed_{false};  // failure_ is set (read without the mutex: /readyz, /metrics)
  std::thread thread_;
};

}  // namespace hh::store
