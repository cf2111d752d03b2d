#pragma once
// Copies the write-ahead log into the database on a thread of its own while a long
// catch-up writes (rebuild, replay), instead of in the writer's commits.
//
// SQLite checkpoints automatically at the commit that grows the WAL past 1000 pages, on
// the committing thread: during a rebuild that is most of each commit's time (copying
// ~10 MB and syncing the database file). A passive checkpoint from another connection
// runs alongside the writer (WAL mode allows it), so the copying overlaps with applying.
// While this object lives, the write connection's autocheckpoint is off; the destructor
// stops the thread and restores it.
//
// Lifetime: `write_db` must outlive this object.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::processor {

class WalCheckpointer {
 public:
  static Result<std::unique_ptr<WalCheckpointer>> start(sqlite::Connection& write_db, const std::string& path);
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

 private:
  WalCheckpointer(sqlite::Connection& write_db, int64_t autocheckpoint, sqlite::Connection own);
  void run();

  sqlite::Connection& write_db_;
  const int64_t autocheckpoint_;  // restored on destruction
  sqlite::Connection own_;        // the thread's only
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // GUARDED_BY(mutex_)
  std::thread thread_;
};

}  // namespace hh::processor
