// `top -H`, `ps -L` and perf show each of serve's threads by what it does; the main
// thread keeps the process name that `pgrep healthhook` and systemd look for.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "tests/fake_service/fake_service.h"
#include "tests/support/server_process.h"
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

}  // namespace

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
