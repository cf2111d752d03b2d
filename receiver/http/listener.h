#pragma once
// Accepts connections and runs one session coroutine per connection on the shared
// io_context. When more than one thread runs it, each session gets its own strand, so
// its coroutine and its stream's timer never run on two threads at once; with one thread
// that holds anyway, and sessions use the io_context's executor directly (a strand there
// only costs: its queue and locks on every handler).
//
// Limits on connections (spec §2): connection_table.h. When accept() fails (out of file
// descriptors), accepting pauses for kAcceptPause, so the loop never spins. Every refusal
// is counted, not logged (refusals.h).
//
// Stop (SIGTERM/SIGINT): stop() closes the acceptor and the idle connections (waiting for a
// request, or still in their TLS handshake: tls_session.h);
// sessions in the middle of a request finish it (their commit included), answer with
// "Connection: close" and end. close_all() ends the rest (a drain's deadline). Sessions
// share the connection table with the listener, so a session that ends after the
// listener is gone (the io_context destroyed last) touches nothing freed.
#include <boost/asio/ssl.hpp>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "common/result.h"
#include "receiver/http/connection_table.h"
#include "receiver/http/refusals.h"
#include "receiver/http/router.h"
#include "receiver/http/session.h"

namespace hh::http {

inline constexpr std::chrono::milliseconds kAcceptPause{100};

// The address `listen = "HOST:PORT"` names ("127.0.0.1:8080", "[::1]:8080", "0.0.0.0:0"):
// the first the resolver gives, as Listener::listen binds it and check-config checks it.
Result<net::ip::tcp::endpoint> resolve_listen_address(net::io_context& io, const std::string& host_port);

// Whether `listen` would bind now (check-config): resolved and bound, then closed. An
// address that only another listener holds (a running `serve`, most often the one whose
// configuration is checked) is `in_use`, not an error; one this host does not have, or a
// port this user may not bind, is.
enum class BindCheck { bindable, in_use };
Result<BindCheck> check_listen_address(net::io_context& io, const std::string& host_port);

class Listener {
 public:
  // `router`, `limits.refusals` and `limits.body_budget` must outlive the listener and
  // every session. `io_threads`: how many threads run `io` (io_context::run), which
  // decides whether sessions need strands.
  Listener(net::io_context& io, unsigned io_threads, const Router& router, SessionLimits limits,
           ConnectionLimits connections);
  ~Listener();

  // Binds and listens now, so "port in use" fails at start-up with a clear message.
  // `host_port`: "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:0" (0 = any free port).
  Result<void> listen(const std::string& host_port);
  net::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

  // TLS for new connections (nullptr: plain HTTP). May be swapped while running
  // (certificate reload on SIGHUP); sessions already open keep their context.
  void set_tls(std::shared_ptr<net::ssl::context> context);

  void start();
  void stop();       // thread-safe; idempotent
  void close_all();  // thread-safe: closes every session's connection, busy or not
  bool stopping() const { return stopping_->load(); }
  size_t active_sessions() const;

 private:
  net::awaitable<void> accept_loop();
  net::awaitable<void> run_session(net::ip::tcp::socket socket, net::ip::address peer);
  std::shared_ptr<net::ssl::context> tls() const;

  net::io_context& io_;
  const bool strand_per_session_;
  const Router& router_;
  const SessionLimits limits_;
  net::ip::tcp::acceptor acceptor_;
  net::steady_timer accept_pause_;
  std::shared_ptr<std::atomic<bool>> stopping_;  // shared with sessions, which read it
  std::shared_ptr<ConnectionTable> table_;  // shared with each session

  mutable std::mutex tls_mutex_;
  std::shared_ptr<net::ssl::context> tls_;  // GUARDED_BY(tls_mutex_)
};

}  // namespace hh::http
