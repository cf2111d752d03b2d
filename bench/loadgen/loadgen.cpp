// loadgen: sends signed webhook deliveries to a running receiver over keep-alive
// connections and reports acknowledged deliveries/s, ack latency percentiles, non-2xx
// answers, and the server's peak RSS. See bench/README.md for the commands behind each
// figure.
//
// Requests are prepared before the clock starts (bodies from realistic templates, ids,
// signatures), so the generator spends its time on the wire, not on HMAC.
#include <sqlite3.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include "bench/loadgen/bodies.h"
#include "config/secrets.h"
#include "receiver/signature/webhook_signature.h"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;
  std::string path = "/webhooks";
  std::string secret_file = "secret";
  std::string kind = "sleep";  // sleep (~1 KiB) | heartrate (~20 KiB)
  int connections = 64;
  double duration_s = 10;
  double warmup_s = 1;
  double rate = 0;             // requests/s over all connections; 0 = as fast as acks allow
  double dup_ratio = 0;        // share of requests that resend an earlier delivery (retries)
  size_t body_pool = 2048;     // distinct bodies prepared
  size_t max_requests = 400000;
  int users = 64;              // heartrate: distinct users (series)
  int server_pid = 0;          // read VmHWM of this process at the end
  std::string database;        // sample processor lag from this file every second
  std::string id_prefix;       // default: a random prefix, so reruns on one database are new
};

struct Prepared {
  std::string id;
  std::string timestamp;
  std::string signature;
  const std::string* body;
};

struct ConnectionStats {
  std::vector<uint32_t> latencies_us;
  std::map<int, uint64_t> statuses;
  uint64_t errors = 0;
  uint64_t bytes = 0;
};

int64_t read_vm_hwm_kib(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// Processor lag in deliveries and seconds (oldest unapplied delivery's age).
std::pair<int64_t, double> sample_lag(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  const char* sql =
      "SELECT (SELECT coalesce(max(seq),0) FROM deliveries) - p.applied_seq, "
      "(SELECT received_at FROM deliveries WHERE seq > p.applied_seq ORDER BY seq LIMIT 1) "
      "FROM processor_state p";
  std::pair<int64_t, double> lag{-1, -1};
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    lag.first = sqlite3_column_int64(stmt, 0);
    if (sqlite3_column_type(stmt, 1) != SQLITE_NULL) {
      const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
      lag.second = static_cast<double>(now_ms - sqlite3_column_int64(stmt, 1)) / 1000.0;
    } else {
      lag.second = 0;
    }
  }
  sqlite3_finalize(stmt);
  return lag;
}

net::awaitable<void> run_connection(const Options& options, const std::vector<Prepared>& requests,
                                    std::atomic<size_t>& next, Clock::time_point start, Clock::time_point measure_from,
                                    Clock::time_point stop, int index, ConnectionStats& stats) {
  auto executor = co_await net::this_coro::executor;
  beast::tcp_stream stream(executor);
  beast::flat_buffer buffer;
  buffer.reserve(64 * 1024);
  net::steady_timer pacer(executor);
  const auto endpoint = net::ip::tcp::endpoint(net::ip::make_address(options.host), options.port);
  bool connected = false;
  // Open loop with --rate: connection i sends at start + (i + k·connections)/rate.
  const double interval_s = options.rate > 0 ? options.connections / options.rate : 0;
  uint64_t k = 0;
  for (;;) {
    Clock::time_point scheduled = Clock::now();
    if (interval_s > 0) {
      scheduled = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                              (static_cast<double>(index) / options.connections + static_cast<double>(k++)) * interval_s));
      if (scheduled >= stop) break;
      pacer.expires_at(scheduled);
      co_await pacer.async_wait(net::as_tuple(net::use_awaitable));
    }
    if (Clock::now() >= stop) break;
    const size_t i = next.fetch_add(1);
    if (i >= requests.size()) break;
    const Prepared& r = requests[i];
    if (!connected) {
      auto [ec] = co_await stream.async_connect(endpoint, net::as_tuple(net::use_awaitable));
      if (ec) {
        ++stats.errors;
        continue;
      }
      stream.socket().set_option(net::ip::tcp::no_delay(true));
      connected = true;
    }
    http::request<http::span_body<const char>> req{http::verb::post, options.path, 11};
    req.set(http::field::host, options.host);
    req.set(http::field::content_type, "application/json");
    req.set("svix-id", r.id);
    req.set("svix-timestamp", r.timestamp);
    req.set("svix-signature", r.signature);
    req.body() = {r.body->data(), r.body->size()};
    req.prepare_payload();
    req.keep_alive(true);
    const auto sent = interval_s > 0 ? scheduled : Clock::now();
    auto [wec, wn] = co_await http::async_write(stream, req, net::as_tuple(net::use_awaitable));
    http::response<http::string_body> res;
    beast::error_code rec;
    if (!wec) {
      auto [ec, n] = co_await http::async_read(stream, buffer, res, net::as_tuple(net::use_awaitable));
      rec = ec;
    }
    if (wec || rec) {
      ++stats.errors;
      stream.close();
      connected = false;
      continue;
    }
    const auto done = Clock::now();
    if (sent >= measure_from) {
      stats.latencies_us.push_back(
          static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::microseconds>(done - sent).count()));
      ++stats.statuses[static_cast<int>(res.result_int())];
      stats.bytes += r.body->size();
    }
    if (!res.keep_alive()) {
      stream.close();
      connected = false;
    }
  }
  beast::error_code ignored;
  stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
}

double percentile(std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t at = std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())));
  return sorted[at] / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"loadgen: signed webhook load for healthhook"};
  app.add_option("--host", o.host);
  app.add_option("--port", o.port)->required();
  app.add_option("--path", o.path);
  app.add_option("--secret-file", o.secret_file, "File holding the whsec_… signing secret");
  app.add_option("--kind", o.kind, "sleep (~1 KiB summary) or heartrate (~20 KiB, 180 samples)")
      ->check(CLI::IsMember({"sleep", "heartrate"}));
  app.add_option("--connections", o.connections);
  app.add_option("--duration", o.duration_s, "Seconds measured (after the warm-up)");
  app.add_option("--warmup", o.warmup_s, "Seconds sent before measuring");
  app.add_option("--rate", o.rate, "Requests/s in total (open loop); 0 = closed loop");
  app.add_option("--dup-ratio", o.dup_ratio, "Share of requests that resend an earlier delivery");
  app.add_option("--body-pool", o.body_pool, "Distinct bodies prepared");
  app.add_option("--max-requests", o.max_requests, "Requests prepared (upper bound of the run)");
  app.add_option("--users", o.users, "heartrate: distinct users");
  app.add_option("--server-pid", o.server_pid, "Report this process's peak RSS (VmHWM)");
  app.add_option("--database", o.database, "Sample processor lag from this database every second");
  app.add_option("--id-prefix", o.id_prefix);
  CLI11_PARSE(app, argc, argv);

  auto secret = hh::config::read_secret_file(o.secret_file, ".");
  if (!secret) {
    std::cerr << "loadgen: " << secret.error() << "\n";
    return 2;
  }
  std::mt19937_64 random(std::random_device{}());
  if (o.id_prefix.empty()) o.id_prefix = "lg" + std::to_string(random() % 1000000000) + "_";

  // Bodies: a pool of distinct ones. Heartrate windows of 180 minutes advance by 120 per
  // body of a user: a third of each batch updates the previous batch's samples.
  std::vector<std::string> bodies;
  bodies.reserve(o.body_pool);
  for (size_t b = 0; b < o.body_pool; ++b) {
    if (o.kind == "sleep") {
      bodies.push_back(hh::bench::sleep_summary_body(random()));
    } else {
      const int user = static_cast<int>(b % static_cast<size_t>(o.users));
      const int64_t window = static_cast<int64_t>(b / static_cast<size_t>(o.users));
      bodies.push_back(hh::bench::heartrate_body(random(), user, window * 120));
    }
  }
  const double expected = o.rate > 0 ? o.rate * (o.duration_s + o.warmup_s) * 1.05 : 0;
  const size_t count = o.rate > 0 ? std::min(o.max_requests, static_cast<size_t>(expected) + 1) : o.max_requests;
  std::cerr << "loadgen: preparing " << count << " signed requests (" << bodies.size() << " bodies of ~"
            << bodies.front().size() << " bytes)\n";
  const std::string timestamp = std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  std::vector<Prepared> requests;
  requests.reserve(count);
  std::uniform_real_distribution<double> coin(0, 1);
  for (size_t i = 0; i < count; ++i) {
    if (i > 0 && coin(random) < o.dup_ratio) {
      requests.push_back(requests[std::uniform_int_distribution<size_t>(0, i - 1)(random)]);  // a retry
      continue;
    }
    Prepared p;
    p.id = o.id_prefix + std::to_string(i);
    p.timestamp = timestamp;
    p.body = &bodies[i % bodies.size()];
    p.signature = hh::signature::sign(*secret, p.id, p.timestamp, *p.body).value();
    requests.push_back(std::move(p));
  }

  sqlite3* db = nullptr;
  if (!o.database.empty() &&
      sqlite3_open_v2(o.database.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::cerr << "loadgen: cannot open " << o.database << "\n";
    return 2;
  }

  net::io_context io(1);
  std::atomic<size_t> next{0};
  const auto start = Clock::now();
  const auto measure_from = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.warmup_s));
  const auto stop = measure_from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s));
  std::vector<ConnectionStats> stats(static_cast<size_t>(o.connections));
  for (int c = 0; c < o.connections; ++c) {
    net::co_spawn(io, run_connection(o, requests, next, start, measure_from, stop, c, stats[static_cast<size_t>(c)]),
                  net::detached);
  }
  std::atomic<bool> running{true};
  std::thread sampler;
  if (db) {
    sampler = std::thread([&] {
      int second = 0;
      while (running) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        const auto [deliveries, seconds] = sample_lag(db);
        std::cout << "lag t=" << ++second << "s deliveries=" << deliveries << " seconds=" << seconds << "\n";
      }
    });
  }
  io.run();
  const double elapsed = std::chrono::duration<double>(std::min(Clock::now(), stop) - measure_from).count();
  running = false;
  if (sampler.joinable()) sampler.join();

  std::vector<uint32_t> latencies;
  std::map<int, uint64_t> statuses;
  uint64_t errors = 0, bytes = 0;
  for (auto& s : stats) {
    latencies.insert(latencies.end(), s.latencies_us.begin(), s.latencies_us.end());
    for (auto [status, n] : s.statuses) statuses[status] += n;
    errors += s.errors;
    bytes += s.bytes;
  }
  std::sort(latencies.begin(), latencies.end());
  uint64_t ok = 0, not_ok = 0;
  for (auto [status, n] : statuses) (status >= 200 && status < 300 ? ok : not_ok) += n;
  if (next.load() >= requests.size()) std::cerr << "loadgen: ran out of prepared requests; raise --max-requests\n";

  std::printf("kind=%s connections=%d rate=%s seconds=%.1f\n", o.kind.c_str(), o.connections,
              o.rate > 0 ? std::to_string(static_cast<int>(o.rate)).c_str() : "max", elapsed);
  std::printf("acked_per_s=%.0f MB_per_s=%.1f p50_ms=%.2f p99_ms=%.2f p999_ms=%.2f max_ms=%.2f\n",
              static_cast<double>(ok) / elapsed, static_cast<double>(bytes) / elapsed / 1e6, percentile(latencies, 0.5),
              percentile(latencies, 0.99), percentile(latencies, 0.999),
              latencies.empty() ? 0.0 : latencies.back() / 1000.0);
  std::printf("acked=%llu non_2xx=%llu errors=%llu", static_cast<unsigned long long>(ok),
              static_cast<unsigned long long>(not_ok), static_cast<unsigned long long>(errors));
  for (auto [status, n] : statuses) {
    if (status < 200 || status >= 300) std::printf(" status_%d=%llu", status, static_cast<unsigned long long>(n));
  }
  std::printf("\n");
  if (o.server_pid > 0) std::printf("server_peak_rss_mib=%.1f\n", static_cast<double>(read_vm_hwm_kib(o.server_pid)) / 1024.0);
  if (db) {
    const auto [deliveries, seconds] = sample_lag(db);
    std::printf("final_lag_deliveries=%lld final_lag_seconds=%.2f\n", static_cast<long long>(deliveries), seconds);
    sqlite3_close(db);
  }
  return not_ok == 0 && errors == 0 ? 0 : 1;
}
