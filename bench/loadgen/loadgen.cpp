// loadgen: sends webhook deliveries (or plain GETs) to a running receiver over keep-alive
// connections and reports acknowledged deliveries/s, ack latency percentiles, answers
// other than the expected ones, and the server's RSS and open file descriptors. See
// bench/README.md for the commands behind each figure.
//
// Closed loop (each connection sends its next request when the previous one is answered)
// or open loop (--rate: request k of the run is due at start + k/rate, and its latency
// counts from when it was due, so a stalled server cannot hide its queue).
// --report-every prints one line per interval (the soak run); --until-caught-up waits
// after the last ack until the processor has applied everything (end-to-end rate).
//
// Requests are prepared before the clock starts (bench/loadgen/request_plan.h), so the
// generator spends its time on the wire, not on HMAC, unless signed at send time. A run
// that sends more than --max-requests goes round them again with fresh ids, signed at
// send time: it never stops before its --duration. The
// connections are common/http_client/connection.h's: a request is written from the
// prepared body in place (span_body), and each answer is read with a parser on the
// coroutine's frame.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <iostream>
#include <map>
#include <thread>

#include "bench/loadgen/process_probe.h"
#include "bench/loadgen/request_plan.h"
#include "common/http_client/connection.h"
#include "config/secrets.h"

namespace net = boost::asio;
namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kDeadline = std::chrono::seconds(30);  // connect; no byte written or read for this long
constexpr uint64_t kMaxAnswerBytes = 1024 * 1024;     // answers are small JSON objects
constexpr double kSignAtSendAfterS = 120;  // longer runs sign at send time (tolerance is 300 s)

struct Options {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;
  std::string path = "/webhooks";
  std::string method = "POST";
  std::string secret_file = "secret";
  int connections = 64;
  double duration_s = 10;
  double warmup_s = 1;
  double rate = 0;             // requests/s over all connections; 0 = as fast as answers allow
  size_t max_requests = 400000;
  size_t count = 0;            // send exactly this many, then stop (0: run for the duration)
  int server_pid = 0;          // read this process's RSS and open fds
  std::string database;        // sample processor lag from this file
  double report_every_s = 0;   // one report line per interval
  bool until_caught_up = false;
  double catch_up_timeout_s = 600;
  bool sign_at_send = false;
  hh::bench::PlanOptions plan;
};

// Answers of one connection, over the measured span or over the current report interval.
struct Tally {
  std::vector<uint32_t> latencies_us;
  std::map<int, uint64_t> statuses;
  uint64_t ok = 0;            // 2xx for a correctly signed request
  uint64_t intended_401 = 0;  // 401 for a request signed wrongly on purpose
  uint64_t unexpected = 0;    // any other answer
  uint64_t errors = 0;        // connect, write or read failures
  uint64_t bytes = 0;
  uint64_t samples = 0;

  void record(uint32_t latency_us, int status, const hh::bench::PlannedRequest& r) {
    latencies_us.push_back(latency_us);
    ++statuses[status];
    const bool success = status >= 200 && status < 300;
    if (r.bad_signature ? status == 401 : success) {
      (r.bad_signature ? intended_401 : ok) += 1;
      if (!r.bad_signature) samples += r.samples;
    } else {
      ++unexpected;
    }
    if (r.body) bytes += r.body->size();
  }

  void merge_from(Tally& other) {
    latencies_us.insert(latencies_us.end(), other.latencies_us.begin(), other.latencies_us.end());
    for (auto [status, n] : other.statuses) statuses[status] += n;
    ok += other.ok;
    intended_401 += other.intended_401;
    unexpected += other.unexpected;
    errors += other.errors;
    bytes += other.bytes;
    samples += other.samples;
  }
};

struct ConnectionStats {
  Tally measured;  // after the warm-up
  Tally interval;  // since the last report line (emptied by the reporter)
};

struct Run {
  const Options& options;
  hh::bench::RequestPlan& plan;
  std::atomic<size_t> next{0};
  Clock::time_point start{}, measure_from{}, stop{};
  std::vector<ConnectionStats> stats{};
  hh::bench::LagProbe lag{};
};

Clock::time_point after(Clock::time_point t, double seconds) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double percentile_ms(const std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t at = std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())));
  return sorted[at] / 1000.0;
}

int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// g++ 12 reports Asio's coroutine-frame allocator (aligned_alloc, freed by the frame's
// own operator delete, boost/asio/detail/memory.hpp) as a mismatch once it inlines the
// ramp of this coroutine into main(): a false positive (as in fetcher/job_runner.cpp),
// silenced for this function only. The frame is allocated once per connection.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
net::awaitable<void> run_connection(Run& run, int index) {
  const Options& options = run.options;
  ConnectionStats& stats = run.stats[static_cast<size_t>(index)];
  auto& requests = run.plan.requests();
  auto executor = co_await net::this_coro::executor;
  hh::http_client::Options connection_options;
  connection_options.connect_timeout = kDeadline;
  connection_options.read_timeout = kDeadline;
  connection_options.max_body_bytes = kMaxAnswerBytes;
  hh::http_client::Connection connection(executor, {options.host, options.port, nullptr}, connection_options);
  net::steady_timer pacer(executor);
  const auto verb = options.method == "GET" ? http::verb::get : http::verb::post;
  // Open loop: connection i sends at start + (i/connections + k)·interval.
  const double interval_s = options.rate > 0 ? options.connections / options.rate : 0;
  uint64_t k = 0;
  for (;;) {
    Clock::time_point scheduled = Clock::now();
    if (interval_s > 0) {
      scheduled = after(run.start, (static_cast<double>(index) / options.connections + static_cast<double>(k++)) * interval_s);
      if (scheduled >= run.stop) break;
      pacer.expires_at(scheduled);
      co_await pacer.async_wait(net::as_tuple(net::use_awaitable));
    }
    if (Clock::now() >= run.stop) break;
    const size_t i = run.next.fetch_add(1);
    if (options.count > 0 && i >= requests.size()) break;
    // Past the plan's end the run goes round it again with fresh ids (request_plan.h),
    // so it sends for its whole duration at any rate.
    const bool recycled = i >= requests.size();
    hh::bench::PlannedRequest recycled_request;
    if (recycled) recycled_request = run.plan.request(i);
    hh::bench::PlannedRequest& r = recycled ? recycled_request : requests[i];
    if (options.sign_at_send || recycled) run.plan.sign(r, unix_seconds());
    if (!connection.is_open()) {
      if (!(co_await connection.connect()).ok()) {
        ++stats.measured.errors;
        ++stats.interval.errors;
        continue;
      }
    }
    http::request<http::span_body<const char>> req{verb, options.path, 11};
    req.set(http::field::host, options.host);
    if (r.body) {
      req.set(http::field::content_type, "application/json");
      req.set("svix-id", r.id);
      req.set("svix-timestamp", r.timestamp);
      req.set("svix-signature", r.signature);
      req.body() = {r.body->data(), r.body->size()};
    }
    req.prepare_payload();
    req.keep_alive(true);
    const auto sent = interval_s > 0 ? scheduled : Clock::now();
    http::response_parser<http::string_body> parser;  // one per answer (style.md: body_limit)
    auto outcome = co_await connection.write(req);
    if (outcome.ok()) outcome = co_await connection.read(parser);
    if (!outcome.ok()) {
      ++stats.measured.errors;
      ++stats.interval.errors;
      connection.close();
      continue;
    }
    const auto latency_us =
        static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - sent).count());
    const int status = static_cast<int>(parser.get().result_int());
    if (sent >= run.measure_from) stats.measured.record(latency_us, status, r);
    if (options.report_every_s > 0) stats.interval.record(latency_us, status, r);
    if (!connection.reusable()) connection.close();
  }
  connection.close();
}
#pragma GCC diagnostic pop

// One line per interval: answers and latency in that interval, the server's memory and
// fds at its end, the processor's lag.
net::awaitable<void> report_periodically(Run& run) {
  auto executor = co_await net::this_coro::executor;
  net::steady_timer timer(executor);
  const double every = run.options.report_every_s;
  for (int tick = 1;; ++tick) {
    const auto due = after(run.start, tick * every);
    if (due > after(run.stop, every / 2)) break;
    timer.expires_at(due);
    co_await timer.async_wait(net::as_tuple(net::use_awaitable));
    Tally interval;
    for (auto& s : run.stats) {
      interval.merge_from(s.interval);
      s.interval = Tally{};
    }
    std::sort(interval.latencies_us.begin(), interval.latencies_us.end());
    std::printf("report t_s=%.0f acked_per_s=%.0f samples_per_s=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f "
                "intended_401=%llu unexpected=%llu errors=%llu",
                tick * every, static_cast<double>(interval.ok) / every, static_cast<double>(interval.samples) / every,
                percentile_ms(interval.latencies_us, 0.5), percentile_ms(interval.latencies_us, 0.99),
                interval.latencies_us.empty() ? 0.0 : interval.latencies_us.back() / 1000.0,
                static_cast<unsigned long long>(interval.intended_401),
                static_cast<unsigned long long>(interval.unexpected), static_cast<unsigned long long>(interval.errors));
    if (run.options.server_pid > 0) {
      std::printf(" rss_mib=%.1f fds=%lld", static_cast<double>(hh::bench::read_status_kib(run.options.server_pid, "VmRSS")) / 1024.0,
                  static_cast<long long>(hh::bench::count_open_fds(run.options.server_pid)));
    }
    if (run.lag.is_open()) {
      const auto lag = run.lag.sample();
      std::printf(" lag_deliveries=%lld lag_s=%.2f", static_cast<long long>(lag.deliveries), lag.seconds);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"loadgen: signed webhook load for healthhook"};
  app.add_option("--host", o.host);
  app.add_option("--port", o.port)->required();
  app.add_option("--path", o.path);
  app.add_option("--method", o.method, "POST (signed deliveries) or GET (no body, unsigned, e.g. --path /healthz)")
      ->check(CLI::IsMember({"POST", "GET"}));
  app.add_option("--secret-file", o.secret_file, "File holding the whsec_… signing secret");
  app.add_option("--kind", o.plan.kind,
                 "sleep (~1 KiB summary), heartrate (~20 KiB, 180 samples) or mixed (--heartrate-share of heartrate)")
      ->check(CLI::IsMember({"sleep", "heartrate", "mixed"}));
  app.add_option("--connections", o.connections, "Connections; 0 with --until-caught-up: only wait for the processor");
  app.add_option("--duration", o.duration_s, "Seconds measured (after the warm-up); with --count, an upper bound");
  app.add_option("--warmup", o.warmup_s, "Seconds sent before measuring");
  app.add_option("--rate", o.rate, "Requests/s in total (open loop); 0 = closed loop");
  app.add_option("--count", o.count, "Send exactly this many requests, then stop");
  app.add_option("--dup-ratio", o.plan.dup_ratio, "Share of requests that resend an earlier delivery (retries)");
  app.add_option("--bad-signature-ratio", o.plan.bad_signature_ratio,
                 "Share of requests signed wrongly on purpose (401 expected, not counted as a failure)");
  app.add_option("--versions", o.plan.versions,
                 "sleep: versions of each summary, sent in shuffled order (1: every summary new)");
  app.add_option("--heartrate-share", o.plan.heartrate_share, "mixed: share of heartrate batches");
  app.add_option("--body-pool", o.plan.body_pool, "Distinct bodies prepared per kind");
  app.add_option("--max-requests", o.max_requests,
                 "Requests prepared; a longer run goes round them again with fresh ids (signed at send)");
  app.add_option("--users", o.plan.users, "heartrate: distinct users");
  app.add_option("--first-user", o.plan.first_user, "heartrate: the first user's number (users follow it)");
  app.add_option("--server-pid", o.server_pid, "Report this process's peak RSS (and RSS, fds per report)");
  app.add_option("--database", o.database, "Sample processor lag from this database");
  app.add_option("--report-every", o.report_every_s, "Seconds between report lines (0: none)");
  app.add_flag("--until-caught-up", o.until_caught_up,
               "After the last answer, wait until the processor applied every delivery (needs --database)");
  app.add_option("--catch-up-timeout", o.catch_up_timeout_s, "Seconds to wait for the processor at most");
  app.add_flag("--sign-at-send", o.sign_at_send, "Sign each request when it is sent (automatic for runs over 120 s)");
  app.add_option("--id-prefix", o.plan.id_prefix);
  CLI11_PARSE(app, argc, argv);
  if (o.until_caught_up && o.database.empty()) {
    std::cerr << "loadgen: --until-caught-up needs --database\n";
    return 2;
  }

  std::string secret;
  if (o.method == "GET") {
    o.plan.kind = "get";
  } else {
    auto read = hh::config::read_secret_file(o.secret_file, ".");
    if (!read) {
      std::cerr << "loadgen: " << read.error() << "\n";
      return 2;
    }
    secret = std::move(*read);
    if (o.warmup_s + o.duration_s > kSignAtSendAfterS && o.count == 0) o.sign_at_send = true;
  }
  std::mt19937_64 random(std::random_device{}());
  if (o.plan.id_prefix.empty()) o.plan.id_prefix = "lg" + std::to_string(random() % 1000000000) + "_";
  if (o.count > 0) {
    o.plan.count = o.count;
  } else {
    const double expected = o.rate > 0 ? o.rate * (o.duration_s + o.warmup_s) * 1.05 : 0;
    o.plan.count = o.rate > 0 ? std::min(o.max_requests, static_cast<size_t>(expected) + 1) : o.max_requests;
  }
  o.plan.sign_at_send = o.sign_at_send;
  hh::bench::RequestPlan plan(o.plan, secret, random);
  if (plan.distinct_bodies() > 0) {
    std::cerr << "loadgen: prepared " << plan.requests().size() << " requests (" << plan.distinct_bodies()
              << " bodies, the first of " << plan.first_body_size() << " bytes"
              << (o.sign_at_send ? "; signed at send" : "") << ")\n";
  }

  Run run{o, plan};
  if (!o.database.empty() && !run.lag.open(o.database)) return 2;
  net::io_context io(1);
  run.start = Clock::now();
  run.measure_from = after(run.start, o.warmup_s);
  run.stop = after(run.measure_from, o.duration_s);
  run.stats.resize(static_cast<size_t>(o.connections));
  for (int c = 0; c < o.connections; ++c) net::co_spawn(io, run_connection(run, c), net::detached);
  // The server's CPU time from the start of the measured span to its end (with
  // --until-caught-up: until the processor has applied the last delivery).
  int64_t server_cpu_at_start = -1;
  net::steady_timer measure_timer(io, run.measure_from);
  if (o.server_pid > 0) {
    measure_timer.async_wait([&](boost::system::error_code) { server_cpu_at_start = hh::bench::read_cpu_ms(o.server_pid); });
  }
  if (o.report_every_s > 0) net::co_spawn(io, report_periodically(run), net::detached);
  // Without report lines, the lag is sampled every second on a thread of its own.
  std::atomic<bool> running{true};
  std::thread lag_sampler;
  if (run.lag.is_open() && o.report_every_s <= 0 && !o.until_caught_up) {
    lag_sampler = std::thread([&] {
      for (int second = 1; running; ++second) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        const auto lag = run.lag.sample();
        std::printf("lag t=%ds deliveries=%lld seconds=%.2f\n", second, static_cast<long long>(lag.deliveries), lag.seconds);
      }
    });
  }
  io.run();
  const auto last_answer = std::min(Clock::now(), run.stop);
  running = false;
  if (lag_sampler.joinable()) lag_sampler.join();

  double caught_up_s = -1;
  if (o.until_caught_up) {
    const auto give_up = after(Clock::now(), o.catch_up_timeout_s);
    while (Clock::now() < give_up) {
      if (run.lag.sample().deliveries == 0) {
        caught_up_s = std::chrono::duration<double>(Clock::now() - run.start).count();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  const int64_t server_cpu_at_end = o.server_pid > 0 ? hh::bench::read_cpu_ms(o.server_pid) : -1;
  const double elapsed = std::max(1e-6, std::chrono::duration<double>(last_answer - run.measure_from).count());
  Tally total;
  for (auto& s : run.stats) total.merge_from(s.measured);
  std::sort(total.latencies_us.begin(), total.latencies_us.end());
  if (o.count == 0 && run.next.load() > plan.requests().size()) {
    std::cerr << "loadgen: sent " << run.next.load() << " requests, going round the " << plan.requests().size()
              << " prepared with fresh ids\n";
  }
  uint64_t non_2xx = 0;
  for (auto [status, n] : total.statuses) non_2xx += status >= 200 && status < 300 ? 0 : n;

  std::printf("kind=%s method=%s connections=%d rate=%s seconds=%.2f\n", o.plan.kind.c_str(), o.method.c_str(),
              o.connections, o.rate > 0 ? std::to_string(static_cast<int>(o.rate)).c_str() : "max", elapsed);
  std::printf("acked_per_s=%.0f samples_per_s=%.0f MB_per_s=%.1f p50_ms=%.2f p99_ms=%.2f p999_ms=%.2f max_ms=%.2f\n",
              static_cast<double>(total.ok) / elapsed, static_cast<double>(total.samples) / elapsed,
              static_cast<double>(total.bytes) / elapsed / 1e6, percentile_ms(total.latencies_us, 0.5),
              percentile_ms(total.latencies_us, 0.99), percentile_ms(total.latencies_us, 0.999),
              total.latencies_us.empty() ? 0.0 : total.latencies_us.back() / 1000.0);
  std::printf("acked=%llu samples=%llu non_2xx=%llu intended_401=%llu unexpected=%llu errors=%llu",
              static_cast<unsigned long long>(total.ok), static_cast<unsigned long long>(total.samples),
              static_cast<unsigned long long>(non_2xx), static_cast<unsigned long long>(total.intended_401),
              static_cast<unsigned long long>(total.unexpected), static_cast<unsigned long long>(total.errors));
  for (auto [status, n] : total.statuses) {
    if (status < 200 || status >= 300) std::printf(" status_%d=%llu", status, static_cast<unsigned long long>(n));
  }
  std::printf("\n");
  if (o.server_pid > 0) {
    std::printf("server_peak_rss_mib=%.1f server_rss_mib=%.1f server_fds=%lld\n",
                static_cast<double>(hh::bench::read_status_kib(o.server_pid, "VmHWM")) / 1024.0,
                static_cast<double>(hh::bench::read_status_kib(o.server_pid, "VmRSS")) / 1024.0,
                static_cast<long long>(hh::bench::count_open_fds(o.server_pid)));
    if (server_cpu_at_start >= 0 && server_cpu_at_end >= server_cpu_at_start && total.ok > 0) {
      const double cpu_ms = static_cast<double>(server_cpu_at_end - server_cpu_at_start);
      std::printf("server_cpu_ms=%.0f server_cpu_us_per_ack=%.1f\n", cpu_ms, cpu_ms * 1000.0 / static_cast<double>(total.ok));
    }
  }
  if (run.lag.is_open()) {
    const auto lag = run.lag.sample();
    std::printf("final_lag_deliveries=%lld final_lag_seconds=%.2f\n", static_cast<long long>(lag.deliveries), lag.seconds);
  }
  if (o.until_caught_up) {
    if (caught_up_s < 0) {
      std::printf("caught_up=no\n");
    } else {
      std::printf("caught_up_s=%.2f e2e_deliveries_per_s=%.0f e2e_samples_per_s=%.0f\n", caught_up_s,
                  static_cast<double>(total.ok) / caught_up_s, static_cast<double>(total.samples) / caught_up_s);
    }
  }
  const bool clean = total.unexpected == 0 && total.errors == 0 && (!o.until_caught_up || caught_up_s >= 0);
  return clean ? 0 : 1;
}
