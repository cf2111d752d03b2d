#include "replay/output_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace hh::replay {

namespace {

Error failed_with(const std::string& name, int error) { return fail(name + ": " + std::strerror(error)); }

// `path` is none of `keep`: not the same file (device and inode, so through links and hard
// links), nor, for one that does not exist yet, the same name once links are followed.
Result<void> none_of(const std::string& path, std::span<const std::string> keep) {
  struct stat info {};
  const bool there = ::stat(path.c_str(), &info) == 0;
  std::error_code ec;
  const auto name = std::filesystem::weakly_canonical(path, ec);
  for (const std::string& kept : keep) {
    struct stat kept_info {};
    const bool same_file = there && ::stat(kept.c_str(), &kept_info) == 0 && kept_info.st_dev == info.st_dev &&
                           kept_info.st_ino == info.st_ino;
    std::error_code kept_ec;
    const auto kept_name = std::filesystem::weakly_canonical(kept, kept_ec);
    if (same_file || (!ec && !kept_ec && kept_name == name)) {
      return fail(path + ": it is the store's own " + kept + "; write the export to another path");
    }
  }
  return {};
}

}  // namespace

// `name` opened and truncated where it is: a device or a FIFO (as it is), or a regular file
// in a folder this user cannot write (made private; synced on close).
Result<OutputFile> OutputFile::open_in_place(const std::string& name, bool regular) {
  const int fd = ::open(name.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return failed_with(name, errno);
  if (regular && ::fchmod(fd, 0600) != 0) {
    const int error = errno;
    ::close(fd);
    return failed_with(name, error);
  }
  return OutputFile(fd, true, name, {}, regular);
}

Result<OutputFile> OutputFile::open(const std::string& path, std::span<const std::string> keep) {
  if (path.empty() || path == "-") return OutputFile(STDOUT_FILENO, false, "<stdout>");
  if (auto other = none_of(path, keep); !other) return fail(other);
  // What this process's stdout or stderr already is (/dev/stdout, /dev/fd/2, a link to
  // either, the file a shell redirected it to): written through that descriptor, where it
  // stands (appended after a >>, a socket, a pipe), never replaced through a partial file.
  struct stat info {};
  const bool there = ::stat(path.c_str(), &info) == 0;  // through links
  for (const auto& [fd, name] : {std::pair{STDOUT_FILENO, "<stdout>"}, std::pair{STDERR_FILENO, "<stderr>"}}) {
    struct stat open_file {};
    if (there && ::fstat(fd, &open_file) == 0 && open_file.st_dev == info.st_dev && open_file.st_ino == info.st_ino) {
      return OutputFile(fd, false, name);
    }
  }
  // A device, a FIFO or a pipe, through a link too (a link to /proc/self/fd/N of a pipe
  // leads to "pipe:[…]", which has no path to resolve, only the open file behind it).
  if (there && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) return open_in_place(path, false);
  // A link: the file it leads to takes the export (the link stays a link).
  std::string name = path;
  if (::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
    std::error_code ec;
    const auto target = std::filesystem::canonical(path, ec);
    if (ec) return fail(path + ": a symbolic link that leads nowhere");
    name = target.string();
  }
  const bool exists = ::stat(name.c_str(), &info) == 0;
  if (exists && S_ISDIR(info.st_mode)) return fail(path + ": it is a folder");
  // A device or a FIFO (/dev/null, a pipe a reader waits on) is not ours to replace or change.
  if (exists && !S_ISREG(info.st_mode)) return open_in_place(name, false);
  std::string partial = name + ".partial";
  // Never through a link someone put at FILE.partial; an existing one (a killed export's)
  // is reused only once locked: a live export holds its lock until its rename.
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    if (error == ELOOP) return fail(partial + ": a symbolic link, not written through");
    if ((error == EACCES || error == EPERM || error == EROFS) && exists && ::access(name.c_str(), W_OK) == 0) {
      return open_in_place(name, true);  // a folder this user cannot write, a file they can
    }
    // The export is written beside FILE and renamed: the folder is what must be writable.
    if (error == EACCES || error == EPERM || error == EROFS) {
      return fail(path + ": cannot write the export: its folder is not writable by this user (" +
                  std::strerror(error) + ")");
    }
    return failed_with(partial, error);
  }
  const auto refuse = [&](std::string why) {
    ::close(fd);
    return fail(std::move(why));
  };
  if (::fstat(fd, &info) != 0) return refuse(partial + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return refuse(partial + ": not a regular file");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) return refuse(path + ": another export is writing it (" + partial + ")");
  if (::ftruncate(fd, 0) != 0 || ::fchmod(fd, 0600) != 0) return refuse(partial + ": " + std::strerror(errno));
  return OutputFile(fd, true, name, std::move(partial));
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : fd_(other.fd_),
      owns_(other.owns_),
      sync_(other.sync_),
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
  if ((sync_ || !partial.empty()) && ::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(partial.c_str());
    return fail(partial + ": " + std::strerror(error));
  }
  if (partial.empty()) {
    if (::close(fd) != 0) return fail(name_ + ": " + std::strerror(errno));
    return {};
  }
  // Renamed while this export still holds the lock: no other takes the .partial meanwhile.
  if (::rename(partial.c_str(), name_.c_str()) != 0) {
    const int error = errno;
    ::unlink(partial.c_str());
    ::close(fd);
    return fail(name_ + ": " + std::strerror(error));
  }
  if (::close(fd) != 0) return fail(name_ + ": " + std::strerror(errno));
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
