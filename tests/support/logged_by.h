#pragma once
// What an in-process step logs: stderr (where log lines go) goes to a file while `step`
// runs, and the file's text is returned. For tests of parts that log from this process
// (a ServerProcess's log is read with log_lines() instead).
#include <boost/test/unit_test.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace hh::test {

template <typename Step>
std::string logged_by(Step step) {
  TempDir dir;
  const std::string path = dir.file("stderr");
  const int saved = ::dup(STDERR_FILENO);
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  BOOST_REQUIRE(saved >= 0 && file >= 0);
  ::dup2(file, STDERR_FILENO);
  ::close(file);
  step();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace hh::test
