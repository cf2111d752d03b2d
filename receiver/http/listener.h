#pragma once
// Accepts connections and runs one session coroutine per connection on the shared
// io_context. When more than one thread runs it, each session gets its own strand, so
// its coroutine and its stream's timer never run on two threads at once; with one thread
// that holds anyway, and sessions use the io_context's executor directly (a strand there
// only costs: its queue and locks on every handler).
//
// Limits (spec §2): at most max_connections sessions, max_connections_per_ip from one
// client address, and, once connections grow scarce, at most kMaxWaitingPerAddress from
// one address that have not yet sent an acceptable request. When all sessions are taken, a new connection takes the place of
// the oldest one that has waited kMinWaitBeforeEviction or more without sending an
// acceptable request (an idle socket, a slowloris client: what an attacker holds), which
// is closed; only when there is none is the new connection closed at once. So sockets that never send a request cannot lock the service
// out, however many there are. When accept() fails (out of file descriptors), accepting
// pauses for kAcceptPause, so the loop never spins. Every refusal is counted, not logged
// (refusals.h).
//
// Stop (SIGTERM/SIGINT): stop() closes the acceptor and the idle keep-alive connections;
// sessions in the middle of a request finish it (their commit included), answer with
// "Connection: close" and end. close_all() ends the rest (a drain's deadline). Sessions
// share the connection table with the listener, so a session that ends after the
// listener is gone (the io_context destroyed last) touches nothing freed.
#include <boost/asio/ssl.hpp>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "common/result.h"
#include "receiver/http/refusals.h"
#include "receiver/http/router.h"
#include "receiver/http/session.h"

namespace hh::http {

inline constexpr std::chrono::milliseconds kAcceptPause{100};
// A connection makes room for a newcomer only after it has waited this long for its first
// request: sockets that reconnect as soon as they are closed then turn over at most once
// per this interval each, not as fast as the listener can close them.
inline constexpr std::chrono::milliseconds kMinWaitBeforeEviction{1000};
// Connections from one address that have not yet sent an acceptable request, once half of
// max_connections are taken. The service's connections send their request at once;
// sockets that only wait are an attacker's, and then one address cannot hold more than
// this many of them. (Below half, a burst of new connections from one address is let in
// whole.) Behind a proxy every connection has the proxy's address: raise
// max_connections_per_ip there; a proxy sends complete requests, so this rule still holds.
inline constexpr size_t kMaxWaitingPerAddress = 8;

struct ConnectionLimits {
  size_t max_connections = 1024;
  size_t max_connections_per_ip = 64;
};

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
  struct Table;  // the sessions and their per-address counts, shared with each session
  net::awaitable<void> accept_loop();
  net::awaitable<void> run_session(net::ip::tcp::socket socket, net::ip::address peer);
  std::shared_ptr<net::ssl::context> tls() const;

  net::io_context& io_;
  const bool strand_per_session_;
  const Router& router_;
  const SessionLimits limits_;
  const ConnectionLimits connections_;
  net::ip::tcp::acceptor acceptor_;
  net::steady_timer accept_pause_;
  std::shared_ptr<std::atomic<bool>> stopping_;  // shared with sessions, which read it
  std::shared_ptr<Table> table_;

  mutable std::mutex tls_mutex_;
  std::shared_ptr<net::ssl::context> tls_;  // GUARDED_BY(tls_mutex_)
};

}  // namespace hh::http
