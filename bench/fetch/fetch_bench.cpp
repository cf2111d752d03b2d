// fetch_bench: the follow-up fetcher's throughput and memory against the fake service
// running as a separate process (tests/fake_service/main.cpp), so only the fetcher's side
// is measured: jobs claimed, streams downloaded (HTTPS optional, gzip optional), checked,
// and stored as inbox rows through the writer thread; with --process also applied by the
// processor into stream_points.
//
//   fetch_bench [--streams 200] [--points 10000] [--concurrency 4] [--tls] [--gzip] [--process]
//               [--cache-mib 64] [--synchronous full|normal]
//
// Prints one JSON line: streams/s, points/s, MB/s, and the process's RSS before the
// fetch and at its peak (getrusage ru_maxrss).
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <string>
#include <thread>

#include "common/json_writer.h"
#include "processor/processor.h"
#include "fetcher/fetcher.h"
#include "store/sqlite/database.h"
#include "store/inbox_writer.h"
#include "store/sqlite/jobs/job_store.h"
#include "store/sqlite/sqlite_inbox.h"
#include "store/sqlite/sqlite_processing_store.h"

namespace {

constexpr const char* kKey = "bench-api-key";

struct FakeProcess {
  pid_t pid = -1;
  uint16_t port = 0;
  ~FakeProcess() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

// Starts the fake service and reads "port N" from its stdout.
FakeProcess start_fake(size_t points, bool tls, bool gzip, const std::string& ca_out) {
  int out[2];
  if (::pipe(out) != 0) throw std::runtime_error("pipe");
  FakeProcess fake;
  fake.pid = ::fork();
  if (fake.pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    std::vector<std::string> args = {FAKE_SERVICE_BINARY, "--api-key", kKey, "--points", std::to_string(points)};
    if (tls) args.insert(args.end(), {"--tls", "--ca-out", ca_out});
    if (gzip) args.push_back("--gzip");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line;
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  ::close(out[0]);
  if (!line.starts_with("port ")) throw std::runtime_error("fake_service did not start: " + line);
  fake.port = static_cast<uint16_t>(std::stoi(line.substr(5)));
  return fake;
}

int64_t rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::stoll(line.substr(6));
  }
  return 0;
}

int64_t peak_rss_kib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

template <typename T>
T must(hh::Result<T> result, const char* what) {
  if (!result) throw std::runtime_error(std::string(what) + ": " + result.error());
  return std::move(result.value());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fetch_bench: follow-up fetcher throughput and memory against the fake service"};
  size_t streams = 200, points = 10000;
  int64_t concurrency = 4;
  bool tls = false, gzip = false, process = false;
  int64_t cache_mib = 64;
  std::string synchronous = "full";
  app.add_option("--streams", streams, "Workout stream jobs to run");
  app.add_option("--points", points, "Points per stream");
  app.add_option("--concurrency", concurrency, "service.concurrency");
  app.add_flag("--tls", tls, "HTTPS (certificate from a test CA)");
  app.add_flag("--gzip", gzip, "The fake sends gzip bodies");
  app.add_flag("--process", process, "Also run the processor (stream_points rows)");
  app.add_option("--cache-mib", cache_mib, "SQLite page cache of the write connection (serve: cache_size_mib)");
  app.add_option("--synchronous", synchronous, "full (serve's default) or normal")->check(CLI::IsMember({"full", "normal"}));
  CLI11_PARSE(app, argc, argv);

  char dir_template[] = "/tmp/fetch_bench.XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  const std::string database = dir + "/bench.db";
  FakeProcess fake = start_fake(points, tls, gzip, dir + "/ca.pem");

  hh::store::StoreOptions store_options;
  store_options.sqlite.cache_size_mib = cache_mib;
  store_options.sqlite.synchronous_full = synchronous == "full";
  auto db = must(hh::store::open_for_writing(database, store_options), "open");
  auto inbox = must(hh::store::SqliteInbox::create(db), "inbox");
  auto jobs = must(hh::store::JobStore::create(db), "jobs");
  std::unique_ptr<hh::processor::Processor> processor;
  if (process) processor = must(hh::processor::Processor::create(must(hh::store::open_sqlite_processing(db), "processing"), {}), "processor");
  {
    // Jobs as the processor queues them, due now.
    auto txn = must(hh::sqlite::Transaction::begin(db), "begin");
    auto insert = must(db.prepare("INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, "
                                  "payload, created_at, updated_at) VALUES ('workout_stream', ?1, 'queued', 0, 0, 1, "
                                  "?2, 0, 0)"),
                       "prepare");
    for (size_t i = 0; i < streams; ++i) {
      const std::string id = "w-" + std::to_string(i);
      const std::string payload = "{\"workout_id\":\"" + id + "\",\"user_id\":\"u\",\"provider\":\"garmin\"}";
      insert.bind(1, std::string_view(id)).bind(2, std::string_view(payload));
      if (auto ran = insert.run(); !ran) throw std::runtime_error(ran.error());
    }
    if (auto done = txn.commit(); !done) throw std::runtime_error(done.error());
  }
  hh::store::InboxWriter writer(inbox, {});
  if (processor) writer.add_background(processor.get());

  hh::fetcher::FetcherOptions options;
  options.database = database;
  options.service.base_url = (tls ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(fake.port);
  options.service.ca_file = tls ? dir + "/ca.pem" : "";
  options.service.concurrency = concurrency;
  options.api_key = kKey;
  options.poll_interval = std::chrono::milliseconds(100);
  auto fetcher = must(hh::fetcher::Fetcher::create(options, writer, inbox, jobs), "fetcher");

  const int64_t rss_before = rss_kib();
  writer.start();
  const auto started = std::chrono::steady_clock::now();
  fetcher->start();
  while (fetcher->stats().jobs_done + fetcher->stats().jobs_dead < streams) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double fetch_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fetcher->stop();
  double seconds = fetch_seconds;
  if (processor) {
    while (processor->applied_seq() < static_cast<int64_t>(streams)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  writer.stop();

  std::string out;
  hh::json::ObjectWriter line(out);
  line.integer("streams", static_cast<int64_t>(streams)).integer("points_per_stream", static_cast<int64_t>(points));
  line.integer("cache_mib", cache_mib).string("synchronous", synchronous);
  line.integer("concurrency", concurrency).boolean("tls", tls).boolean("gzip", gzip).boolean("process", process);
  line.integer("done", static_cast<int64_t>(fetcher->stats().jobs_done.load()));
  line.number("seconds", seconds);
  line.number("streams_per_s", static_cast<double>(streams) / seconds);
  line.number("points_per_s", static_cast<double>(streams * points) / seconds);
  line.number("body_mb_per_s", static_cast<double>(fetcher->stats().bytes_stored.load()) / 1e6 / seconds);
  line.integer("body_bytes_per_stream", static_cast<int64_t>(fetcher->stats().bytes_stored.load() / streams));
  line.integer("rss_before_kib", rss_before).integer("peak_rss_kib", peak_rss_kib());
  line.close();
  std::cout << out << std::endl;
  std::filesystem::remove_all(dir);
  return fetcher->stats().jobs_done.load() == streams ? 0 : 1;
}
