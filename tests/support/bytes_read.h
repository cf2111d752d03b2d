#pragma once
// Bytes this process has read through read()/pread() so far (/proc/self/io, rchar): what a
// fresh SQLite connection's statements read of the file, since its page cache starts empty.
// Tests that a repeated statement reads what it returns, not the table, count it around one
// call (a bound on bytes, not on time).
#include <boost/test/unit_test.hpp>
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
  return -1;  // no /proc/self/io
}

// The bytes read while `call()` ran.
template <typename Call>
int64_t bytes_read_by(Call&& call) {
  const int64_t before = bytes_read_so_far();
  BOOST_REQUIRE_MESSAGE(before >= 0, "no rchar in /proc/self/io");
  call();
  return bytes_read_so_far() - before;
}

}  // namespace hh::test
