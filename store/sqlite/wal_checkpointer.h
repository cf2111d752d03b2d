#pragma once
// Copies the write-ahead log into the database on a thread of its own, instead of inside
// the writer's commits: for the whole life of `serve`, and during a long catch-up
// (rebuild, replay).
//
// SQLite checkpoints automatically at the commit that grows the WAL past 1,000 pages, on
// the committing thread: reading the WAL, writing and syncing the database file while
// the acks of that batch wait. This object takes over the same rule: the write
// connection's WAL hook (what SQLite's autocheckpoint uses) reports the WAL's size after
// each commit, and past `checkpoint_frames` (given to start()) this thread checkpoints
// through a connection of its own, alongside the writer (WAL mode allows it). The writer
// finishes the job between two of its transactions (run_once(), as background work of
// the InboxWriter, or called by a catch-up loop): it copies the few frames committed
// since, so that its next transaction starts the WAL again from the beginning
// (wal_checkpointer.cpp says why). While this object lives the write connection's
// autocheckpoint is off; the destructor stops the thread and restores it
// (docs/decisions/002-checkpointer-thread.md).
//
// The thread also syncs the database file after each copy. SQLite syncs it only at the end
// of a checkpoint that copied the whole WAL, which under load is the writer's finish: that
// one sync then wrote everything the thread had copied, on the writer's thread while every
// ack waited (docs/decisions/003-checkpointer-syncs-database-file.md). If that
// sync of ours fails, no checkpoint runs any more until a restart: Linux may drop the pages
// a failed fdatasync could not write and report the next one as a success, so SQLite's own
// sync would pass and the WAL rewind over changes the database file does not have. The WAL
// keeps every change instead (it is synced by the acks' WalSync), and SQLite copies it
// again from the start when the next process opens the file.
//
// Lifetime: `write_db` must outlive this object; create and destroy it while no other
// thread uses `write_db` (it installs and removes the connection's WAL hook).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/result.h"
#include "store/durability.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class WalCheckpointer final : public Checkpointer {
 public:
  // Syncs the database file through the thread's connection; "" = done, else the error.
  using DatabaseSync = std::function<std::string(sqlite::Connection& own)>;

  // `checkpoint_frames`: the WAL size (in pages) that starts a checkpoint. `sync`: tests
  // replace the real sync (sync_database_file).
  static Result<std::unique_ptr<WalCheckpointer>> start(sqlite::Connection& write_db, const std::string& path,
                                                        int checkpoint_frames, DatabaseSync sync = {});
  ~WalCheckpointer() override;
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // On the writer's thread, between its transactions: when this object's thread has
  // copied a long WAL, copies what was committed since through the write connection, so
  // the writer's next transaction rewinds the WAL. One atomic load when nothing is due.
  void finish_on_writer() override;
  // BackgroundWork (the InboxWriter's thread): finish_on_writer(); never "more to do".
  bool run_once(int64_t durable_seq) override;

  // Checkpoints finished by the writer that copied the whole WAL (it rewinds next).
  uint64_t rewinds() const override { return rewinds_.load(std::memory_order_relaxed); }
  // Syncs of the database file by the thread, after its copies.
  uint64_t database_syncs() const override { return database_syncs_.load(std::memory_order_relaxed); }
  // A sync of the database file failed: no checkpoint runs until a restart.
  bool stopped_by_failure() const override { return failed_.load(std::memory_order_relaxed); }

 private:
  WalCheckpointer(sqlite::Connection& write_db, int64_t autocheckpoint, sqlite::Connection own, int checkpoint_frames,
                  DatabaseSync sync);
  static int on_commit(void* self, sqlite3* db, const char* schema, int wal_frames);
  void run();
  void checkpoint_once();

  sqlite::Connection& write_db_;
  const int64_t autocheckpoint_;  // restored on destruction
  const int checkpoint_frames_;
  sqlite::Connection own_;        // the thread's only
  const DatabaseSync sync_database_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool due_ = false;       // GUARDED_BY(mutex_): the WAL passed checkpoint_frames_
  bool stopping_ = false;  // GUARDED_BY(mutex_)
  std::atomic<bool> finish_due_{false};  // set by the thread, cleared by the writer
  std::atomic<uint64_t> rewinds_{0};
  std::atomic<uint64_t> database_syncs_{0};
  std::atomic<bool> failed_{false};  // set by the thread, for good
  int copied_before_ = 0;            // the thread's: the WAL's copied frames at its last look
  std::thread thread_;
};

}  // namespace hh::store
