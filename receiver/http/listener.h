#pragma once
// Accepts connections and runs one session coroutine per connection on the shared
// io_context. When more than one thread runs it, each session gets its own strand, so
// its coroutine and its stream's timer never run on two threads at once; with one thread
// that holds anyway, and sessions use the io_context's executor directly (a strand there
// only costs: its queue and locks on every handler, 5-10 % of the io thread's time per
// 1 KiB delivery, bench/README.md "Measured").
//
// Stop (SIGTERM/SIGINT): stop() closes the acceptor and the idle keep-alive connections;
// sessions in the middle of a request finish it (their commit included), answer with
// "Connection: close" and end. The io_context then runs out of work.
#include <boost/asio/ssl.hpp>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "common/result.h"
#include "receiver/http/router.h"
#include "receiver/http/session.h"

namespace hh::http {

class Listener {
 public:
  // `router` must outlive the listener and every session. `io_threads`: how many threads
  // run `io` (io_context::run), which decides whether sessions need strands.
  Listener(net::io_context& io, unsigned io_threads, const Router& router, SessionLimits limits,
           size_t max_connections);

  // Binds and listens now, so "port in use" fails at start-up with a clear message.
  // `host_port`: "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:0" (0 = any free port).
  Result<void> listen(const std::string& host_port);
  net::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

  // TLS for new connections (nullptr: plain HTTP). May be swapped while running
  // (certificate reload on SIGHUP); sessions already open keep their context.
  void set_tls(std::shared_ptr<net::ssl::context> context);

  void start();
  void stop();  // thread-safe; idempotent
  bool stopping() const { return stopping_.load(); }
  size_t active_sessions() const { return active_.load(); }

 private:
  net::awaitable<void> accept_loop();
  net::awaitable<void> run_session(net::ip::tcp::socket socket);
  std::shared_ptr<net::ssl::context> tls() const;

  net::io_context& io_;
  const bool strand_per_session_;
  const Router& router_;
  const SessionLimits limits_;
  const size_t max_connections_;
  net::ip::tcp::acceptor acceptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> active_{0};

  mutable std::mutex mutex_;
  std::set<std::shared_ptr<SessionControl>> sessions_;  // GUARDED_BY(mutex_)
  std::shared_ptr<net::ssl::context> tls_;               // GUARDED_BY(mutex_)
};

}  // namespace hh::http
