// hostile_clients: what an unauthenticated client can throw at the webhook port, all at
// once, for a bounded time (bench/hostile/run; loopback only):
//   --idle N        sockets that connect and never send (reconnect when closed)
//   --slowloris N   clients that send a request head one short line per second
//   --uploaders N   unauthenticated 4 MiB uploads, one after another on each
//   --flood N       connections sending small unsigned POSTs as fast as answered (401s)
//   --get-bodies N  GETs of /healthz announcing a 4 MiB body that never comes (400s)
//   --keepalive N   connections that make one GET /healthz, then stay open and idle
// Each kind comes from its own loopback addresses (127.0.K.x, at most 50 sockets per
// address), as an attack from many hosts would; the legitimate client is left 127.0.0.1.
// Prints key=value counts when the time is up.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <boost/asio.hpp>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "common/asio_token.h"

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using hh::use_tuple;

namespace {

constexpr int kSocketsPerAddress = 50;
constexpr size_t kUploadBytes = 4 * 1024 * 1024;

struct Counts {
  uint64_t connects = 0, connect_failures = 0, closed_by_server = 0, answers = 0, answers_401 = 0,
           answers_other = 0, upload_bytes = 0;
};

struct Attack {
  net::io_context& io;
  tcp::endpoint target;
  Clock::time_point until;
  Counts counts;

  bool running() const { return Clock::now() < until; }

  // The `index`-th socket of kind `kind`: address 127.0.kind.(1 + index / 50).
  net::awaitable<bool> connect(tcp::socket& socket, int kind, int index) {
    boost::system::error_code ec;
    socket = tcp::socket(io);
    socket.open(tcp::v4(), ec);
    const auto source = net::ip::make_address_v4("127.0." + std::to_string(kind) + "." +
                                                 std::to_string(1 + index / kSocketsPerAddress));
    if (!ec) socket.bind(tcp::endpoint(source, 0), ec);
    if (!ec) std::tie(ec) = co_await socket.async_connect(target, use_tuple);
    if (ec) {
      ++counts.connect_failures;
      net::steady_timer pause(io, 100ms);  // refused (backlog full): try again a little later
      co_await pause.async_wait(use_tuple);
      co_return false;
    }
    ++counts.connects;
    co_return true;
  }

  // Reads until the server closes or `deadline`; counts the status line if one came.
  net::awaitable<void> read_answer(tcp::socket& socket, Clock::time_point deadline) {
    std::string received;
    char buffer[4096];
    // The timer's handler may already be queued when the read ends: it must not touch the
    // socket once this frame has moved on.
    auto reading = std::make_shared<bool>(true);
    net::steady_timer timer(io, deadline);
    timer.async_wait([&socket, reading](boost::system::error_code ec) {
      if (!ec && *reading) socket.close(ec);
    });
    for (;;) {
      auto [ec, n] = co_await socket.async_read_some(net::buffer(buffer), use_tuple);
      if (received.size() < 64) received.append(buffer, n);
      if (ec) break;
    }
    *reading = false;
    timer.cancel();
    ++counts.closed_by_server;
    if (received.starts_with("HTTP/1.1 ")) {
      ++counts.answers;
      ++(received.starts_with("HTTP/1.1 401") ? counts.answers_401 : counts.answers_other);
    }
  }

  net::awaitable<void> idle(int index) {
    while (running()) {
      tcp::socket socket(io);
      if (!co_await connect(socket, 1, index)) continue;
      co_await read_answer(socket, until);  // nothing sent: wait to be closed
    }
  }

  net::awaitable<void> slowloris(int index) {
    while (running()) {
      tcp::socket socket(io);
      if (!co_await connect(socket, 2, index)) continue;
      std::string line = "POST /webhooks HTTP/1.1\r\n";
      for (int n = 0; running(); ++n) {
        auto [ec, written] = co_await net::async_write(socket, net::buffer(line), use_tuple);
        if (ec) break;
        line = "X-Slow-" + std::to_string(n) + ": a\r\n";
        net::steady_timer pause(io, 1s);
        co_await pause.async_wait(use_tuple);
      }
      ++counts.closed_by_server;
    }
  }

  net::awaitable<void> uploader(int index) {
    const std::string chunk(64 * 1024, 'x');
    const std::string head = "POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(kUploadBytes) + "\r\n\r\n";
    while (running()) {
      tcp::socket socket(io);
      if (!co_await connect(socket, 3, index)) continue;
      auto [ec, n] = co_await net::async_write(socket, net::buffer(head), use_tuple);
      for (size_t sent = 0; !ec && sent < kUploadBytes && running(); sent += chunk.size()) {
        std::tie(ec, n) = co_await net::async_write(socket, net::buffer(chunk), use_tuple);
        if (!ec) counts.upload_bytes += n;
      }
      co_await read_answer(socket, Clock::now() + 2s);
    }
  }

  // A GET announcing a body it never sends: if the announced size were taken from the
  // body budget, 16 of these would hold the default 64 MiB until the body deadline. Once
  // answered (400), it comes back a second later: this attacker holds, it does not flood
  // (--flood does).
  net::awaitable<void> get_body(int index) {
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 4194303\r\n\r\n";
    while (running()) {
      tcp::socket socket(io);
      if (!co_await connect(socket, 5, index)) continue;
      auto [ec, n] = co_await net::async_write(socket, net::buffer(request), use_tuple);
      if (!ec) co_await read_answer(socket, until);
      net::steady_timer pause(io, 1s);
      co_await pause.async_wait(use_tuple);
    }
  }

  // One request, then idle on a keep-alive connection until the server closes it (to make
  // room, or at its idle deadline); then again.
  net::awaitable<void> keepalive(int index) {
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    while (running()) {
      tcp::socket socket(io);
      if (!co_await connect(socket, 6, index)) continue;
      auto [ec, n] = co_await net::async_write(socket, net::buffer(request), use_tuple);
      if (!ec) co_await read_answer(socket, until);  // the answer, then the close
    }
  }

  net::awaitable<void> flood(int index) {
    const std::string request =
        "POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
    while (running()) {
      tcp::socket socket(io);
      if (!co_await connect(socket, 4, index)) continue;
      auto [ec, n] = co_await net::async_write(socket, net::buffer(request), use_tuple);
      if (!ec) co_await read_answer(socket, Clock::now() + 2s);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Unauthenticated clients against the webhook port, for a bounded time (bench/hostile/run)"};
  unsigned short port = 0;
  double seconds = 10;
  int idle = 1000, slowloris = 200, uploaders = 40, flood = 8, get_bodies = 32, keepalive = 100;
  app.add_option("--port", port)->required();
  app.add_option("--duration", seconds, "Seconds to attack");
  app.add_option("--idle", idle);
  app.add_option("--slowloris", slowloris);
  app.add_option("--uploaders", uploaders);
  app.add_option("--flood", flood);
  app.add_option("--get-bodies", get_bodies);
  app.add_option("--keepalive", keepalive);
  CLI11_PARSE(app, argc, argv);

  // One descriptor per socket: take what the hard limit allows.
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }

  net::io_context io(1);
  Attack attack{io, tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
                Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)), {}};
  for (int i = 0; i < idle; ++i) net::co_spawn(io, attack.idle(i), net::detached);
  for (int i = 0; i < slowloris; ++i) net::co_spawn(io, attack.slowloris(i), net::detached);
  for (int i = 0; i < uploaders; ++i) net::co_spawn(io, attack.uploader(i), net::detached);
  for (int i = 0; i < flood; ++i) net::co_spawn(io, attack.flood(i), net::detached);
  for (int i = 0; i < get_bodies; ++i) net::co_spawn(io, attack.get_body(i), net::detached);
  for (int i = 0; i < keepalive; ++i) net::co_spawn(io, attack.keepalive(i), net::detached);
  // Sockets still open at the end (idle ones the server keeps) are closed by a stop.
  net::steady_timer end(io, attack.until + 3s);
  end.async_wait([&io](boost::system::error_code) { io.stop(); });
  io.run();

  const Counts& c = attack.counts;
  std::cout << "attack_seconds=" << seconds << " connects=" << c.connects << " connect_failures=" << c.connect_failures
            << " closed_by_server=" << c.closed_by_server << " answers=" << c.answers << " answers_401=" << c.answers_401
            << " answers_other=" << c.answers_other << " upload_mib=" << c.upload_bytes / (1024 * 1024) << "\n";
  return 0;
}
