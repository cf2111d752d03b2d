#include "store/sqlite/processing_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hh::store {

Result<ProcessingLock> ProcessingLock::acquire(sqlite::Connection& db) {
  const char* database = sqlite3_db_filename(db.get(), "main");
  if (database == nullptr || *database == '\0') return ProcessingLock(-1);
  const std::string path = std::string(database) + "-processor.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return fail("cannot open " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return fail(ErrorKind::in_use, std::string(database) +
                  " is being processed by another healthhook process (a running `serve`, `rebuild`, `replay` or "
                  "`purge-user`); stop it or let it finish first");
    }
    return fail("cannot lock " + path + ": " + std::strerror(error));
  }
  return ProcessingLock(fd);
}

ProcessingLock::~ProcessingLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace hh::store
