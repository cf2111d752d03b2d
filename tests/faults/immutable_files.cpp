#include "tests/faults/immutable_files.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hh::test {
namespace {

// Sets or clears FS_IMMUTABLE_FL, keeping the file's other attribute flags.
std::string set_immutable(const std::string& path, bool on) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return path + ": " + std::strerror(errno);
  int flags = 0;
  std::string error;
  if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
    error = path + ": reading attribute flags: " + std::strerror(errno);
  } else {
    flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
    if (::ioctl(fd, FS_IOC_SETFLAGS, &flags) != 0) {
      error = path + ": setting the immutable flag: " + std::strerror(errno);
    }
  }
  ::close(fd);
  return error;
}

}  // namespace

std::string immutable_flag_unavailable(const std::string& folder) {
  const std::string probe = folder + "/immutable-probe";
  // Opened before the flag is set, like the files of a running server.
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return probe + ": " + std::strerror(errno);
  std::string reason = set_immutable(probe, true);
  if (reason.empty()) {
    // A file system that stored the flag without enforcing it on open descriptors would
    // let the running-server test pass for the wrong reason.
    if (::write(fd, "x", 1) == 1) reason = "the immutable flag does not stop writes through open descriptors here";
    (void)set_immutable(probe, false);
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return reason;
}

ImmutableFiles::~ImmutableFiles() { release(); }

std::string ImmutableFiles::protect(const std::string& path) {
  std::string error = set_immutable(path, true);
  if (error.empty()) protected_.push_back(path);
  return error;
}

void ImmutableFiles::release() {
  // Reverse order: a folder protected after the files in it is cleared before them.
  for (auto it = protected_.rbegin(); it != protected_.rend(); ++it) (void)set_immutable(*it, false);
  protected_.clear();
}

}  // namespace hh::test
