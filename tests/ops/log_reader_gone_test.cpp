// serve's stderr is a pipe whose reader went away (`serve 2>&1 | head -n 1`, a log shipper
// that exited): the next log line must not kill serve with SIGPIPE (exit 141, no drain). The
// line is dropped; deliveries are still acknowledged and stored, and SIGTERM drains and
// exits 0.
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "tests/support/database_probe.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(log_reader_gone_test)

using namespace hh::test;

namespace {

const std::string kSteps =
    R"({"event_type":"daily.data.steps.created","data":{"data":[{"timestamp":"2023-05-16T10:00:00+00:00","unit":"count","value":237}],"source":{"provider":"oura","type":"ring"},"user_id":"u1"},"user_id":"u1"})";

// Reads `fd` until the "listening" line; the port it names, 0 if the pipe ended first.
unsigned short read_until_listening(int fd) {
  std::string text;
  char buf[4096];
  for (;;) {
    const auto line = text.find("\"event\":\"listening\"");
    if (line != std::string::npos && text.find('\n', line) != std::string::npos) {
      const auto key = text.find("\"address\":\"", line);
      const auto end = text.find('"', key + 11);
      const std::string address = text.substr(key + 11, end - key - 11);
      return static_cast<unsigned short>(std::stoi(address.substr(address.rfind(':') + 1)));
    }
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return 0;
    text.append(buf, static_cast<size_t>(n));
  }
}

// waitpid, bounded: the exit code (128+N for signal N), -1 if still running after `limit`.
int wait_exit(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

BOOST_AUTO_TEST_CASE(serve_outlives_its_log_reader) {
  TempDir dir;
  const std::string secret = random_secret();
  dir.write("secret", secret + "\n");
  const std::string database = dir.file("healthhook.db");
  const std::string config = dir.write("healthhook.toml", "listen = \"127.0.0.1:0\"\ndatabase = \"" + database +
                                                              "\"\nsigning_secret_files = [\"secret\"]\n");
  int err_pipe[2];
  BOOST_REQUIRE(::pipe2(err_pipe, O_CLOEXEC) == 0);
  const std::string binary = healthhook_binary();
  const pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    // Default SIGPIPE disposition, as a shell gives it (the test runner may ignore it).
    ::signal(SIGPIPE, SIG_DFL);
    const int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::dup2(err_pipe[1], 2);
    ::execl(binary.c_str(), binary.c_str(), "serve", "--config", config.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  const unsigned short port = read_until_listening(err_pipe[0]);
  ::close(err_pipe[0]);  // the reader goes away: every later log line meets a closed pipe
  BOOST_REQUIRE(port != 0);

  ::kill(pid, SIGHUP);  // a reload logs a line (it was the end of serve)
  HttpClient client(port);
  BOOST_TEST(client.post_webhook(secret, "msg_1", kSteps).status / 100 == 2);
  BOOST_TEST(client.get("/healthz").status == 200);
  client.close();

  ::kill(pid, SIGTERM);  // "stopping", "stopped": more lines nobody reads
  BOOST_TEST(wait_exit(pid, std::chrono::seconds(60)) == 0);
  BOOST_TEST(query_int(database, "SELECT count(*) FROM deliveries WHERE message_id = 'msg_1'") == 1);
}

BOOST_AUTO_TEST_SUITE_END()
