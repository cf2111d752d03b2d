#include "replay/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace hh::replay {

Result<OutputFile> OutputFile::open(const std::string& path) {
  if (path.empty() || path == "-") return OutputFile(STDOUT_FILENO, false, "<stdout>");
  // A device, a FIFO (/dev/null, a pipe a reader waits on) or a link is not ours to
  // replace or change: written in place, as it is.
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    if (S_ISDIR(info.st_mode)) return fail(path + ": it is a folder");
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return fail(path + ": " + std::strerror(errno));
    return OutputFile(fd, true, path);
  }
  std::string partial = path + ".partial";
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail(partial + ": " + std::strerror(errno));
  // A .partial left by a killed export keeps its mode through O_TRUNC.
  if (::fchmod(fd, 0600) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(partial.c_str());
    return fail(partial + ": " + std::strerror(error));
  }
  return OutputFile(fd, true, path, std::move(partial));
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : fd_(other.fd_),
      owns_(other.owns_),
      name_(std::move(other.name_)),
      partial_(std::move(other.partial_)),
      buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
  other.owns_ = false;
  other.partial_.clear();
}

OutputFile::~OutputFile() {
  if (owns_ && fd_ >= 0) ::close(fd_);
  if (owns_ && !partial_.empty()) ::unlink(partial_.c_str());  // never closed: an export that failed
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
  const std::string partial = std::move(partial_);
  partial_.clear();
  if (!partial.empty() && ::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(partial.c_str());
    return fail(partial + ": " + std::strerror(error));
  }
  if (::close(fd) != 0) {
    const int error = errno;
    if (!partial.empty()) ::unlink(partial.c_str());
    return fail(name_ + ": " + std::strerror(error));
  }
  if (partial.empty()) return {};
  if (::rename(partial.c_str(), name_.c_str()) != 0) {
    const int error = errno;
    ::unlink(partial.c_str());
    return fail(name_ + ": " + std::strerror(error));
  }
  // The rename itself survives a power loss once the folder is synced.
  const std::string folder = std::filesystem::path(name_).parent_path().string();
  const int dir = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

}  // namespace hh::replay
