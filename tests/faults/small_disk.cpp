#include "tests/faults/small_disk.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace hh::test {
namespace {

// Moves this process into a mount namespace of its own whose mounts do not propagate
// back. Once per process; "" on success.
std::string enter_private_mount_namespace() {
  static std::string error = [] {
    if (::unshare(CLONE_NEWNS) != 0) return std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return std::string("making mounts private: ") + std::strerror(errno);
    }
    return std::string();
  }();
  return error;
}

std::string mount_tmpfs(const std::string& folder, uint64_t bytes) {
  const std::string options = "size=" + std::to_string(bytes) + ",mode=0755";
  if (::mount("healthhook-test", folder.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    return "mounting a tmpfs on " + folder + ": " + std::strerror(errno);
  }
  return {};
}

}  // namespace

std::string small_disk_unavailable() {
  // In a child: it is single-threaded (unshare needs that) and its namespace dies with it.
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(pipe_fds[0]);
    char folder[] = "/tmp/healthhook-disk-probe-XXXXXX";
    std::string error = ::mkdtemp(folder) ? enter_private_mount_namespace() : "mkdtemp failed";
    if (error.empty()) error = mount_tmpfs(folder, 1 << 20);
    if (error.empty()) ::umount2(folder, MNT_DETACH);
    ::rmdir(folder);
    (void)!::write(pipe_fds[1], error.data(), error.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string reason;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) reason.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return reason;
}

SmallDisk::SmallDisk(const std::string& folder, uint64_t bytes) : folder_(folder) {
  std::string error = enter_private_mount_namespace();
  if (error.empty()) error = mount_tmpfs(folder, bytes);
  if (!error.empty()) throw std::runtime_error(error);
}

SmallDisk::~SmallDisk() { ::umount2(folder_.c_str(), MNT_DETACH); }

uint64_t SmallDisk::free_bytes() const {
  struct statvfs fs {};
  if (::statvfs(folder_.c_str(), &fs) != 0) return 0;
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

std::string SmallDisk::fill(uint64_t leave_bytes) const {
  const std::string path = folder_ + "/filler";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  const std::vector<char> block(4096, 'f');
  while (free_bytes() > leave_bytes + block.size()) {
    if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) break;
  }
  ::close(fd);
  return path;
}

}  // namespace hh::test
