// fake_service: the test suite's fake of the remote service as a process of its own, for
// benchmarks (its memory stays out of the measured process) and manual runs.
//
//   fake_service [--tls] [--gzip] [--chunked] [--api-key KEY] [--points N] [--ca-out FILE]
//
// Prints "port <N>" on stdout once listening, then serves until SIGTERM or SIGINT.
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>

#include "tests/fake_service/fake_service.h"

int main(int argc, char** argv) {
  hh::fake::FakeOptions options;
  std::string ca_out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--tls") options.tls = hh::fake::TlsMode::valid;
    else if (arg == "--gzip") options.gzip = true;
    else if (arg == "--chunked") options.chunked = true;
    else if (arg == "--api-key") options.api_key = next();
    else if (arg == "--points") options.default_stream_points = std::stoul(next());
    else if (arg == "--ca-out") ca_out = next();
    else {
      std::cerr << "usage: fake_service [--tls] [--gzip] [--chunked] [--api-key KEY] [--points N] [--ca-out FILE]\n";
      return 2;
    }
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // the server thread inherits the mask
  hh::fake::FakeService service(options);
  if (!ca_out.empty()) std::ofstream(ca_out) << service.ca_pem();
  std::cout << "port " << service.port() << std::endl;
  int signal = 0;
  sigwait(&signals, &signal);
  return 0;
}
