#include "store/sqlite/wal_sync.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/thread_name.h"

namespace hh::store {
namespace {

std::string fdatasync_file(int fd) {
  if (::fdatasync(fd) == 0) return {};
  return std::string("fdatasync of the WAL: ") + std::strerror(errno);
}

}  // namespace

Result<std::unique_ptr<WalSync>> WalSync::open(const std::string& wal_path, SyncFile sync_file) {
  // No O_CREAT: a WAL that does not exist yet means the database is not open in WAL mode.
  const int fd = ::open(wal_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return fail("open " + wal_path + ": " + std::strerror(errno));
  // The database file is watched by its path and identity, never through a descriptor of
  // its own: closing one would drop every POSIX lock this process holds on the file,
  // SQLite's included (its "how to corrupt" §2.2).
  std::string database_path = wal_path.substr(0, wal_path.size() - std::string_view("-wal").size());
  struct stat database {};
  if (::stat(database_path.c_str(), &database) != 0) {
    const std::string error = "stat " + database_path + ": " + std::strerror(errno);
    ::close(fd);
    return fail(error);
  }
  std::unique_ptr<WalSync> sync(new WalSync(fd, std::move(database_path), database.st_dev, database.st_ino,
                                            sync_file ? std::move(sync_file) : SyncFile(fdatasync_file)));
  sync->thread_ = start_named_thread("hh-wal-sync", [s = sync.get()] { s->run(); });
  return sync;
}

WalSync::WalSync(int fd, std::string database_path, dev_t database_dev, ino_t database_ino, SyncFile sync_file)
    : fd_(fd),
      database_path_(std::move(database_path)),
      database_dev_(database_dev),
      database_ino_(database_ino),
      sync_file_(std::move(sync_file)) {}

WalSync::~WalSync() {
  stop();
  ::close(fd_);
}

// A database deleted, moved or replaced while serving goes on taking commits into files
// its path no longer reaches, lost to the next start: no delivery may be acked then. A
// stat() and an fstat() per sync, beside an fdatasync().
// Only a path that names no file, or another file, counts: a stat() that fails otherwise
// (a folder's permissions changed a moment, an NFS hiccup) proves nothing, and a sync
// failure is for good.
std::string WalSync::files_removed() const {
  struct stat st {};
  if (::stat(database_path_.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return "the database file was removed, moved or replaced while serving (its commits would be lost)";
    }
  } else if (st.st_dev != database_dev_ || st.st_ino != database_ino_) {
    return "the database file was removed, moved or replaced while serving (its commits would be lost)";
  }
  if (::fstat(fd_, &st) == 0 && st.st_nlink == 0) {
    return "the database's -wal file was removed while serving (its commits would be lost)";
  }
  return {};
}

void WalSync::after_commit(AfterSync after) {
  std::unique_lock lock(mutex_);
  if (stopping_) {
    lock.unlock();
    after(false, "shutting down");  // not reached by the InboxWriter, which stops us last
    return;
  }
  waiting_.push_back(std::move(after));
  // Notified after the unlock: woken under it, the sync thread would at once block on
  // the mutex this thread still holds, one more sleep and wake-up on the way to the sync.
  lock.unlock();
  wakeup_.notify_one();
}

void WalSync::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_one();
  if (thread_.joinable()) thread_.join();
}

uint64_t WalSync::syncs() const {
  std::lock_guard lock(mutex_);
  return syncs_;
}

std::string WalSync::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void WalSync::run() {
  std::vector<AfterSync> batch;
  std::unique_lock lock(mutex_);
  for (;;) {
    wakeup_.wait(lock, [this] { return !waiting_.empty() || stopping_; });
    if (waiting_.empty()) return;  // stopping, nothing left
    batch.swap(waiting_);
    std::string error = failure_;
    lock.unlock();
    if (error.empty()) {
      // Everything in `batch` was committed before it was handed over, so before this call.
      error = sync_file_(fd_);
      if (error.empty()) error = files_removed();
      lock.lock();
      ++syncs_;  // before the acks: whoever got a 2xx sees the sync counted
      if (!error.empty()) {
        failure_ = error;
        failed_.store(true, std::memory_order_relaxed);
      }
      lock.unlock();
    } else {
      error = "an earlier " + error + "; restart healthhook";
    }
    for (AfterSync& after : batch) after(error.empty(), error);
    batch.clear();
    lock.lock();
  }
}

}  // namespace hh::store
