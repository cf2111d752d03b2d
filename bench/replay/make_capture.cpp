// make_capture: writes a capture file (replay/capture_file.h) of generated deliveries, for
// timing `healthhook replay`. Two kinds, shaped like the service's events
// (bench/loadgen/bodies.h):
//   --kind summary    ~1.3 KiB daily.data.sleep.updated events, each a new summary
//   --kind heartrate  daily.data.heartrate.created batches of --samples samples; users
//                     take turns and each batch continues its user's series, so every
//                     sample is new (an insert, not an update)
// Lines carry the headers a Svix delivery has; with --secret-file they are signed (for
// --verify-signatures), else the signature header is a placeholder.
//
//   make_capture --kind heartrate --count 100000 --samples 60 --output hr.jsonl
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "bench/loadgen/bodies.h"
#include "receiver/signature/webhook_signature.h"
#include "replay/capture_file.h"
#include "replay/output_file.h"

int main(int argc, char** argv) {
  CLI::App app{"Generate a capture file for replay benchmarks"};
  std::string kind = "summary";
  uint64_t count = 100000;
  int samples = 60;
  int users = 100;
  std::string output = "-";
  std::string secret_file;
  app.add_option("--kind", kind, "summary or heartrate")->check(CLI::IsMember({"summary", "heartrate"}));
  app.add_option("--count", count, "Deliveries");
  app.add_option("--samples", samples, "Samples per heartrate delivery");
  app.add_option("--users", users, "Users the heartrate deliveries rotate through");
  app.add_option("--output", output, "Capture file (default: standard output)");
  app.add_option("--secret-file", secret_file, "Sign every line with this whsec_ secret");
  CLI11_PARSE(app, argc, argv);

  std::string secret;
  if (!secret_file.empty()) {
    std::ifstream in(secret_file);
    std::getline(in, secret);
  }
  auto out = hh::replay::OutputFile::open(output);
  if (!out) {
    std::cerr << out.error() << "\n";
    return 1;
  }
  const int64_t first_timestamp = 1715853600;  // 2024-05-16T10:00:00Z
  std::vector<hh::replay::CaptureHeader> headers;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string body =
        kind == "summary" ? hh::bench::sleep_summary_body(i)
                          : hh::bench::heartrate_body(i, static_cast<int>(i % static_cast<uint64_t>(users)),
                                                      static_cast<int64_t>(i / static_cast<uint64_t>(users)) * samples,
                                                      samples);
    char id[40];
    std::snprintf(id, sizeof id, "msg_bench%018llu", static_cast<unsigned long long>(i));
    const int64_t timestamp = first_timestamp + static_cast<int64_t>(i / 100);
    const std::string timestamp_text = std::to_string(timestamp);
    std::string signature = "v1,placeholder";
    if (!secret.empty()) signature = hh::signature::sign(secret, id, timestamp_text, body).value();
    headers = {{"host", "receiver.example"},
               {"user-agent", "Svix-Webhooks/1.24.0"},
               {"content-length", std::to_string(body.size())},
               {"accept", "*/*"},
               {"content-type", "application/json"},
               {"svix-id", id},
               {"svix-timestamp", timestamp_text},
               {"svix-signature", signature}};
    hh::replay::append_capture_line(out->buffer(), id, timestamp, headers, body);
    if (auto flushed = out->flush_if_full(); !flushed) {
      std::cerr << flushed.error() << "\n";
      return 1;
    }
  }
  if (auto closed = out->close(); !closed) {
    std::cerr << closed.error() << "\n";
    return 1;
  }
  return 0;
}
