#pragma once
// Makes files read-only in a way that also binds root and files already open: the
// file system's immutable flag (chattr +i). A permission change (chmod) reaches neither:
// root bypasses it, and the kernel checks it only when a file is opened, so a running
// server keeps writing through the descriptors it holds. With the flag set, ext4, XFS,
// btrfs and tmpfs refuse every write, even through an open descriptor (EPERM).
// Setting it needs CAP_LINUX_IMMUTABLE (root, in practice).
#include <string>
#include <vector>

namespace hh::test {

// Why the immutable flag cannot be used in `folder` ("" when it can): probes a scratch file.
std::string immutable_flag_unavailable(const std::string& folder);

// Sets the flag on files and folders; the destructor clears it on all of them, so the
// test's temporary folder can be removed even when a test fails half-way.
class ImmutableFiles {
 public:
  ImmutableFiles() = default;
  ~ImmutableFiles();
  ImmutableFiles(const ImmutableFiles&) = delete;
  ImmutableFiles& operator=(const ImmutableFiles&) = delete;

  // "" on success, else the reason (errno text, with the path).
  std::string protect(const std::string& path);
  // Clears the flag everywhere it was set ("writable again").
  void release();

 private:
  std::vector<std::string> protected_;
};

}  // namespace hh::test
