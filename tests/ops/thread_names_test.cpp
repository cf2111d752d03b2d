// `top -H`, `ps -L` and perf show each of serve's threads by what it does; the main
// thread keeps the process name that `pgrep healthhook` and systemd look for.
#include <boost/test/unit_test.hpp>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "tests/fake_service/fake_service.h"
#include "tests/support/server_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(thread_names_test)

using namespace hh::test;

namespace {

// Thread name (/proc/PID/task/TID/comm) -> how many threads carry it.
std::map<std::string, int> thread_names(pid_t pid) {
  std::map<std::string, int> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name)) ++names[name];
  }
  return names;
}

// Runs `command` in a shell; its exit status and what it wrote (stdout and stderr).
std::pair<int, std::string> shell(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "cannot run " + command};
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

}  // namespace

// A tasks limit (ulimit -u, systemd's TasksMax) that leaves serve fewer threads than it
// starts: a thread it can do without is done without (a warning), one it cannot is one
// error line and exit 1, never an abort (a std::thread left joinable by the failure
// ended the process with "terminate called"). A limit applies to a user that is not root:
// serve runs as a uid of its own, so no other process counts against it.
BOOST_AUTO_TEST_CASE(a_thread_the_system_refuses_is_one_line_or_done_without) {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/setpriv")) {
    BOOST_TEST_MESSAGE("skipped: needs root to run serve as another user (setpriv)");
    return;
  }
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  const std::string binary = dir.file("healthhook");
  std::filesystem::copy_file(healthhook_binary(), binary);  // its build folder may be closed to others
  std::filesystem::permissions(dir.write("secret", "whsec_" + std::string(32, 'A') + "\n"),
                               std::filesystem::perms::owner_read | std::filesystem::perms::others_read);
  int started = 0, refused = 0;
  for (int limit = 1; limit <= 9; ++limit) {
    std::filesystem::remove(dir.file("x.db"));
    for (const char* suffix : {"-wal", "-shm", "-processor.lock"}) std::filesystem::remove(dir.file("x.db") + suffix);
    // The leak checker stops the world with a thread of its own: not under this limit.
    const auto [status, out] = shell(
        "cd " + dir.path().string() + " && ASAN_OPTIONS=detect_leaks=0 timeout -s TERM 3 setpriv --reuid=54321 "
        "--regid=54321 --clear-groups bash -c 'ulimit -u " + std::to_string(limit) + "; exec ./healthhook serve "
        "--database x.db --listen 127.0.0.1:0 --set threads=4 --set signing_secret_files=secret'");
    BOOST_TEST(out.find("terminate called") == std::string::npos, "limit " << limit << ": " << out);
    if (status == 1) {
      ++refused;
      BOOST_TEST(out.find("healthhook serve: ") != std::string::npos, out);
      BOOST_TEST(out.find("cannot start a thread") != std::string::npos, out);
    } else {
      ++started;
      BOOST_TEST(status == 124, "limit " << limit << ": exit " << status << ": " << out);  // stopped by timeout
      BOOST_TEST(out.find("\"event\":\"listening\"") != std::string::npos, out);
    }
  }
  // Both sides of the line were crossed.
  BOOST_TEST(refused > 0);
  BOOST_TEST(started > 0);
}

BOOST_AUTO_TEST_CASE(every_thread_of_serve_is_named_for_its_job) {
  hh::fake::FakeService service;  // configured so that the fetcher runs too
  TempDir dir;
  dir.write("api-key", "test-api-key\n");
  ServerProcess server(dir, "threads = 3\n[service]\nbase_url = \"" + service.base_url() +
                                "\"\napi_key_file = \"api-key\"\n");
  const std::map<std::string, int> expected = {
      {"healthhook", 1},       // main: runs io, keeps the process name
      {"hh-io", 2},            // threads = 3: the main thread and two more
      {"hh-inbox-writer", 1},  // commits deliveries and, between them, processor steps
      {"hh-wal-sync", 1},      // fdatasyncs the WAL before the acks
      {"hh-checkpoint", 1},    // copies the WAL into the database file
      {"hh-fetch", 2},         // follow-up fetches and the provider list; Asio resolves names
                               // (getaddrinfo) on a thread of its own, which inherits the name
      {"hh-blocking", 2},      // database reads of /metrics and the read API, off the io threads
      {"hh-reload", 1},        // SIGHUP's reloads, off every thread that answers requests
  };  // and "hh-parse", which parses ahead only while a backlog is caught up (processor.h)
  // Each thread is named by its starter right after it starts; the io threads start just
  // after "listening" is logged, so look again for a while (bounded) before judging.
  auto names = thread_names(server.pid());
  for (int i = 0; i < 250 && names != expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    names = thread_names(server.pid());
  }
  std::string seen;
  for (const auto& [name, count] : names) seen += name + " x" + std::to_string(count) + "; ";
  BOOST_TEST((names == expected), "threads: " << seen);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // thread_names_test
