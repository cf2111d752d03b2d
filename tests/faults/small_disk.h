#pragma once
// A really full disk, without filling the machine's: a tmpfs of a few MiB mounted on a
// folder, in a mount namespace private to the test process (the server, its child,
// inherits it; nobody else sees the mount, and it cannot outlive the test process).
// Needs CAP_SYS_ADMIN (root, in practice) and a process without other threads.
#include <cstdint>
#include <string>

namespace hh::test {

// Why a small disk cannot be mounted here ("" when it can): probes in a child process.
std::string small_disk_unavailable();

class SmallDisk {
 public:
  // Mounts a tmpfs of `bytes` on `folder` (which must exist). Throws std::runtime_error
  // with the reason when it cannot.
  SmallDisk(const std::string& folder, uint64_t bytes);
  ~SmallDisk();  // unmounts, so the folder can be removed
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  // Writes a filler file that leaves about `leave_bytes` free; returns its path.
  std::string fill(uint64_t leave_bytes) const;
  uint64_t free_bytes() const;

 private:
  std::string folder_;
};

}  // namespace hh::test
