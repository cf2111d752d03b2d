#include "replay/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hh::replay {

Result<OutputFile> OutputFile::open(const std::string& path) {
  if (path.empty() || path == "-") return OutputFile(STDOUT_FILENO, false, "<stdout>");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail(path + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return fail(path + ": " + std::strerror(error));
  }
  // An existing file keeps its mode through O_TRUNC: it holds health data now. Only a
  // regular file: a device or a pipe (/dev/null, a FIFO a reader waits on) is not ours to
  // change, and has no data of its own to sync.
  const bool regular = S_ISREG(info.st_mode);
  if (regular && ::fchmod(fd, 0600) != 0) {
    const int error = errno;
    ::close(fd);
    return fail(path + ": " + std::strerror(error));
  }
  return OutputFile(fd, true, path, regular);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : fd_(other.fd_),
      owns_(other.owns_),
      regular_(other.regular_),
      name_(std::move(other.name_)),
      buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
  other.owns_ = false;
}

OutputFile::~OutputFile() {
  if (owns_ && fd_ >= 0) ::close(fd_);
}

Result<void> OutputFile::flush() {
  size_t written = 0;
  while (written < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + written, buffer_.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(name_ + ": " + std::strerror(errno));
    written += static_cast<size_t>(n);
  }
  buffer_.clear();
  return {};
}

Result<void> OutputFile::close() {
  if (auto flushed = flush(); !flushed) return flushed;
  if (!owns_) return {};
  const int fd = fd_;
  fd_ = -1;
  owns_ = false;
  if (regular_ && ::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    return fail(name_ + ": " + std::strerror(error));
  }
  if (::close(fd) != 0) return fail(name_ + ": " + std::strerror(errno));
  return {};
}

}  // namespace hh::replay
