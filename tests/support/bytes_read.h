#pragma once
// Bytes this process has read through read()/pread() so far (/proc/self/io, rchar): what a
// fresh SQLite connection's statements read of the file, since its page cache starts empty.
// Tests that a repeated statement reads what it returns, not the table, count it around one
// call (a bound on bytes, not on time).
#include <cstdint>
#include <fstream>
#include <string>

namespace hh::test {

inline int64_t bytes_read_so_far() {
  std::ifstream io("/proc/self/io");
  std::string name;
  int64_t value = 0;
  while (io >> name >> value) {
    if (name == "rchar:") return value;
  }
  return -1;  // no /proc/self/io: callers require >= 0
}

}  // namespace hh::test
