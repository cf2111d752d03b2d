#include "store/sqlite/processing_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "store/sqlite/file_access.h"

namespace hh::store {
namespace {

// The descriptors this process opened on database files to lock them, one per file
// (identity), kept after their lock is released until closing them is safe
// (processing_lock.h).
struct LockedFile {
  dev_t device;
  ino_t inode;
  int fd;
  bool held;  // by a ProcessingLock of this process: a second one is refused
};

std::mutex g_files_mutex;
std::vector<LockedFile> g_files;  // GUARDED_BY(g_files_mutex)

std::string in_use_message(const std::string& database) {
  return database +
         " is being processed by another healthhook process (a running `serve`, `rebuild`, `replay` or "
         "`purge-user`); stop it or let it finish first";
}

// Whether a descriptor of this process other than `ours` refers to the file: a SQLite
// connection's. Unknown (no /proc) counts as yes: the descriptor is then kept.
bool opened_elsewhere(const LockedFile& file) {
  std::error_code ec;
  std::filesystem::directory_iterator fds("/proc/self/fd", ec);
  if (ec) return true;
  for (const auto& entry : fds) {
    const std::string name = entry.path().filename().string();
    if (name == std::to_string(file.fd)) continue;
    struct stat st{};
    if (::stat(entry.path().c_str(), &st) == 0 && st.st_dev == file.device && st.st_ino == file.inode) return true;
  }
  return false;
}

// The lock on the file itself, under g_files_mutex: the descriptor, or why not.
Result<int> lock_file_identity(const std::string& database) {
  struct stat named{};
  if (::stat(database.c_str(), &named) != 0) return fail("cannot lock " + database + ": " + std::strerror(errno));
  LockedFile* file = nullptr;
  for (LockedFile& kept : g_files) {
    if (kept.device == named.st_dev && kept.inode == named.st_ino) file = &kept;
  }
  if (file && file->held) return fail(ErrorKind::in_use, in_use_message(database));
  if (!file) {
    const int fd = ::open(database.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("cannot open " + database + " to lock it: " + std::strerror(errno));
    g_files.push_back({named.st_dev, named.st_ino, fd, false});
    file = &g_files.back();
  }
  if (::flock(file->fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return fail(ErrorKind::in_use, in_use_message(database));
    return fail("cannot lock " + database + ": " + std::strerror(errno));
  }
  file->held = true;
  return file->fd;
}

}  // namespace

Result<ProcessingLock> ProcessingLock::acquire(sqlite::Connection& db) {
  const char* database = sqlite3_db_filename(db.get(), "main");
  if (database == nullptr || *database == '\0') return ProcessingLock(-1, -1);
  const std::string path = std::string(database) + "-processor.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    // A lock file another user owns (left by a `serve` run as root): who owns it, in the
    // words of a database file another user owns (file_access.h).
    if (error == EACCES || error == EPERM) {
      if (auto refusal = sqlite::access_refusal(path, sqlite::kLockFile, sqlite::Access::read_write, true)) {
        return fail(*refusal);
      }
    }
    return fail("cannot open " + path + ": " + std::strerror(error));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) return fail(ErrorKind::in_use, in_use_message(database));
    return fail("cannot lock " + path + ": " + std::strerror(error));
  }
  std::lock_guard guard(g_files_mutex);
  auto file_fd = lock_file_identity(database);
  if (!file_fd) {
    ::close(fd);
    return fail(file_fd);
  }
  return ProcessingLock(fd, *file_fd);
}

ProcessingLock::~ProcessingLock() {
  if (file_fd_ >= 0) {
    std::lock_guard guard(g_files_mutex);
    ::flock(file_fd_, LOCK_UN);
    for (LockedFile& file : g_files) {
      if (file.fd == file_fd_) file.held = false;
    }
    // Closes what no connection of this process has open any more, this file's or one
    // kept from before.
    std::erase_if(g_files, [](const LockedFile& file) {
      if (file.held || opened_elsewhere(file)) return false;
      ::close(file.fd);
      return true;
    });
  }
  if (path_fd_ >= 0) ::close(path_fd_);
}

}  // namespace hh::store
