// On a terminal, replay draws a progress line on stderr; a line error or a log line
// written while it shows was glued to it ("…ETA 0scap.jsonl:1: not valid JSON",
// "…ETA 0s{"level":"warn",…}"). Whatever goes to stderr now clears the progress line
// first; the next update draws it again. Replay's stderr is a pseudo-terminal here, as it
// is for an operator.
#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/progress.h"
#include "replay/capture_file.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(progress_line_test)

using namespace hh::test;

namespace {

// What `healthhook args…` writes to its stderr when that is a terminal (its stdout is
// dropped), and its exit status.
std::pair<std::string, int> stderr_on_a_terminal(const std::vector<std::string>& args) {
  int terminal = -1, child_side = -1;
  BOOST_REQUIRE(::openpty(&terminal, &child_side, nullptr, nullptr, nullptr) == 0);
  const std::string binary = healthhook_binary();
  std::vector<std::string> argv_text = {binary};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(child_side, STDERR_FILENO);
    ::close(terminal);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(child_side);
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(terminal, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child's side is closed
    }
  }
  ::close(terminal);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {text, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_line_error_clears_the_progress_line_first) {
  TempDir dir;
  std::string good;
  hh::replay::append_capture_line(good, "g1", 1700000000, {}, "{}");
  const std::string capture = dir.write("cap.jsonl", "not json\n" + good);
  const auto ran = stderr_on_a_terminal({"replay", capture, "--database", dir.file("out.db")});
  const std::string& text = ran.first;
  BOOST_TEST(ran.second == 1, text);
  BOOST_TEST(text.find("replay bytes") != std::string::npos, text);  // the progress line was drawn
  const size_t reported = text.find(capture + ":1: ");
  BOOST_REQUIRE_MESSAGE(reported != std::string::npos, text);
  BOOST_TEST(text.substr(0, reported).ends_with("\r\033[K"), text);  // cleared, not glued to it
}

BOOST_AUTO_TEST_CASE(a_log_line_clears_the_progress_line_first) {
  // stderr into a pipe for the length of the test; Progress is told it is a terminal.
  int pipe_ends[2];
  BOOST_REQUIRE(::pipe(pipe_ends) == 0);
  const int saved = ::dup(STDERR_FILENO);
  ::fflush(stderr);
  ::dup2(pipe_ends[1], STDERR_FILENO);
  {
    hh::Progress progress("rebuild", 100, true);
    progress.update(10);
    hh::log::warn("something_to_say").num("n", 1);
    progress.finish();
  }
  ::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(pipe_ends[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_ends[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  ::close(pipe_ends[0]);
  const size_t logged = text.find(R"({"level":"warn","event":"something_to_say")");
  BOOST_REQUIRE_MESSAGE(logged != std::string::npos, text);
  BOOST_TEST(text.substr(0, logged).find("rebuild 10/100") != std::string::npos, text);  // drawn
  BOOST_TEST(text.substr(0, logged).ends_with("\r\033[K"), text);                        // then cleared
}

BOOST_AUTO_TEST_SUITE_END()
