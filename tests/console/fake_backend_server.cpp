// The fake backend of tests/forward/fake_backend.h as a process, for the console's browser
// test (console_browser_test.py), which is Python: it verifies signatures and records what
// it accepted exactly as in the C++ tests.
//
//   fake_backend_server --secret-file FILE [--status N]
//
// Prints "port N" on its first line, then one JSON line per accepted (2xx) request:
// {"id":…,"body":…,"duplicate":…}. Reads commands on standard input, one a line:
// "status N" answers every later request with N (e.g. 410 to make entries dead); "quit"
// or the end of input stops it.
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "common/json_writer.h"
#include "tests/forward/fake_backend.h"

int main(int argc, char** argv) {
  std::string secret_file;
  unsigned status = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--secret-file") secret_file = argv[i + 1];
    if (flag == "--status") status = static_cast<unsigned>(std::stoul(argv[i + 1]));
  }
  std::ifstream in(secret_file);
  std::string secret;
  std::getline(in, secret);
  if (secret.empty()) {
    std::cerr << "fake_backend_server: --secret-file is missing or empty\n";
    return 2;
  }
  std::mutex mutex;
  unsigned current = status;
  std::mutex out_mutex;
  hh::test::FakeBackend backend({.port = 0, .tls = false, .secret = secret, .path = "/hooks"});
  backend.set_plan([&](const hh::test::BackendRequest& request) {
    hh::test::BackendFault fault;
    {
      std::lock_guard lock(mutex);
      fault.status = current;
    }
    if (fault.status >= 200 && fault.status < 300) {
      std::string line;
      hh::json::ObjectWriter(line).string("id", request.id).string("body", request.body).close();
      std::lock_guard lock(out_mutex);
      std::cout << line << std::endl;
    }
    return fault;
  });
  {
    std::lock_guard lock(out_mutex);
    std::cout << "port " << backend.port() << std::endl;
  }
  std::string command;
  while (std::getline(std::cin, command)) {
    if (command == "quit") break;
    if (command.rfind("status ", 0) == 0) {
      std::lock_guard lock(mutex);
      current = static_cast<unsigned>(std::stoul(command.substr(7)));
    }
  }
  backend.stop();
  return 0;
}
