#pragma once
// One processor per database file. `serve` and `rebuild` (and anything else that applies
// the inbox) take this lock first, so a rebuild cannot empty the tables under a running
// server: it is refused with a message saying so.
//
// Held as flock() on "<database>-processor.lock" next to the database. Not on the
// database file itself: closing another descriptor of a SQLite file drops SQLite's own
// POSIX locks in this process (sqlite.org/howtocorrupt.html §2.2). flock() locks are
// released when the descriptor is closed, so also when the process dies (SIGKILL too):
// a stale lock file is harmless. In-memory and temporary databases are not locked.
#include <string>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class ProcessingLock {
 public:
  // ErrorKind::in_use while another process holds it (as PostgreSQL's processing lock).
  static Result<ProcessingLock> acquire(sqlite::Connection& db);
  ProcessingLock(ProcessingLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  ProcessingLock& operator=(ProcessingLock&&) = delete;
  ~ProcessingLock();

 private:
  explicit ProcessingLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace hh::store
