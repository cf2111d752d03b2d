#pragma once
// One processor per database file. `serve` and `rebuild` (and anything else that applies
// the inbox: `replay` into a store, `purge-user`, `migrate`'s source) take this lock first,
// so a rebuild cannot empty the tables under a running server and two servers never write
// one file: the second is refused with a message saying so.
//
// Two flock() locks, both released when their descriptor closes, so also when the process
// dies (SIGKILL too):
//  - on the database file itself, i.e. on its identity (device and inode), not its name: a
//    hard link, a symlink or a bind mount all reach the same lock. flock() and SQLite's
//    POSIX (fcntl) locks do not interact on Linux. A second descriptor on a SQLite file
//    must not be closed while a connection of this process has the file open, though:
//    close() drops all of the process's POSIX locks on it (sqlite.org/howtocorrupt.html
//    §2.2). So the descriptor is kept per file for the process (processing_lock.cpp) and
//    closed only once no other descriptor of the process refers to the file. Not meant for
//    network filesystems (NFS emulates flock() with POSIX locks), which WAL does not
//    support either.
//  - on "<database>-processor.lock" next to it, as versions before this one locked: a
//    `rebuild` of this version is still refused beside a `serve` started before an upgrade.
//    A stale lock file is harmless.
// In-memory and temporary databases are not locked.
#include <string>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class ProcessingLock {
 public:
  // ErrorKind::in_use while another process, or another store of this process, holds it
  // (as PostgreSQL's processing lock).
  static Result<ProcessingLock> acquire(sqlite::Connection& db);
  ProcessingLock(ProcessingLock&& other) noexcept : path_fd_(other.path_fd_), file_fd_(other.file_fd_) {
    other.path_fd_ = -1;
    other.file_fd_ = -1;
  }
  ProcessingLock& operator=(ProcessingLock&&) = delete;
  ~ProcessingLock();

 private:
  ProcessingLock(int path_fd, int file_fd) : path_fd_(path_fd), file_fd_(file_fd) {}
  int path_fd_;  // the lock file's descriptor, closed with this object
  int file_fd_;  // the database file's descriptor: unlocked with this object, kept (see above)
};

}  // namespace hh::store
