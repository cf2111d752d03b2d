#pragma once
// Open file descriptors of a process (/proc/PID/fd): tests that check nothing is left open.
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>

namespace hh::test {

inline size_t open_files(pid_t pid) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    ++n;
  }
  return n;
}

}  // namespace hh::test
