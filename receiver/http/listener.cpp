#include "receiver/http/listener.h"

#include "common/log.h"
#include "receiver/http/lingering_close.h"
#include "receiver/http/tls_session.h"

namespace hh::http {

Listener::Listener(net::io_context& io, unsigned io_threads, const Router& router, SessionLimits limits,
                   ConnectionLimits connections)
    : io_(io),
      strand_per_session_(io_threads > 1),
      router_(router),
      limits_(limits),
      acceptor_(io),
      accept_pause_(io),
      stopping_(std::make_shared<std::atomic<bool>>(false)),
      table_(std::make_shared<ConnectionTable>(connections, limits.refusals)) {}

Listener::~Listener() = default;

Result<net::ip::tcp::endpoint> resolve_listen_address(net::io_context& io, const std::string& host_port) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos) return fail("listen: expected HOST:PORT, got \"" + host_port + "\"");
  std::string host = host_port.substr(0, colon);
  const std::string port = host_port.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  beast::error_code ec;
  net::ip::tcp::resolver resolver(io);
  const auto results = resolver.resolve(host, port, net::ip::resolver_base::passive, ec);
  if (ec || results.empty()) return fail("listen: cannot resolve " + host_port + ": " + ec.message());
  return results.begin()->endpoint();
}

namespace {

// Opens `acceptor` on `host_port` and binds it as `serve` does (SO_REUSEADDR).
Result<beast::error_code> open_and_bind(net::io_context& io, net::ip::tcp::acceptor& acceptor,
                                        const std::string& host_port) {
  auto resolved = resolve_listen_address(io, host_port);
  if (!resolved) return fail(resolved);
  beast::error_code ec;
  acceptor.open(resolved->protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(*resolved, ec);
  return ec;
}

}  // namespace

Result<BindCheck> check_listen_address(net::io_context& io, const std::string& host_port) {
  net::ip::tcp::acceptor acceptor(io);
  auto bound = open_and_bind(io, acceptor, host_port);
  if (!bound) return fail(bound);
  if (*bound == net::error::address_in_use) return BindCheck::in_use;
  if (*bound) return fail("listen: cannot bind " + host_port + ": " + bound->message());
  return BindCheck::bindable;
}

Result<void> Listener::listen(const std::string& host_port) {
  auto bound = open_and_bind(io_, acceptor_, host_port);
  if (!bound) return fail(bound);
  beast::error_code ec = *bound;
  if (ec) return fail("listen: cannot bind " + host_port + ": " + ec.message());
  acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen: cannot listen on " + host_port + ": " + ec.message());
  return {};
}

void Listener::set_tls(std::shared_ptr<net::ssl::context> context) {
  std::lock_guard lock(tls_mutex_);
  tls_ = std::move(context);
}

std::shared_ptr<net::ssl::context> Listener::tls() const {
  std::lock_guard lock(tls_mutex_);
  return tls_;
}

size_t Listener::active_sessions() const { return table_->size(); }

void Listener::start() { net::co_spawn(acceptor_.get_executor(), accept_loop(), net::detached); }

void Listener::stop() {
  if (stopping_->exchange(true)) return;
  net::post(acceptor_.get_executor(), [this] {
    beast::error_code ec;
    acceptor_.close(ec);
    accept_pause_.cancel();
  });
  table_->for_each([](SessionControl& control) {
    if (control.transport && control.idle) control.transport->socket().cancel();
    if (control.refusal_pause) control.refusal_pause->cancel();
  });
}

void Listener::close_all() {
  table_->for_each([](SessionControl& control) {
    if (control.transport) control.transport->close();
    if (control.refusal_pause) control.refusal_pause->cancel();
  });
}

net::awaitable<void> Listener::accept_loop() {
  Refusals* refusals = limits_.refusals;
  for (;;) {
    // The session's executor (listener.h: a strand only when several threads run io_).
    const net::any_io_executor executor =
        strand_per_session_ ? net::any_io_executor(net::make_strand(io_)) : net::any_io_executor(io_.get_executor());
    auto [ec, socket] = co_await acceptor_.async_accept(executor, use_tuple);
    if (ec) {
      if (stopping_->load() || ec == net::error::operation_aborted) co_return;
      // Out of descriptors (EMFILE/ENFILE) or memory: accepting again at once would fail
      // again at once. Pause; connections waiting meanwhile stay in the kernel's backlog.
      if (refusals) refusals->count(Refusal::accept_failed);
      accept_pause_.expires_after(kAcceptPause);
      co_await accept_pause_.async_wait(use_tuple);
      if (stopping_->load()) co_return;
      continue;
    }
    beast::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    if (peer_ec) continue;  // reset before we looked: nothing to serve
    socket.set_option(net::ip::tcp::no_delay(true), peer_ec);
    net::co_spawn(socket.get_executor(), run_session(std::move(socket), peer.address()), net::detached);
  }
}

net::awaitable<void> Listener::run_session(net::ip::tcp::socket socket, net::ip::address peer) {
  auto control = std::make_shared<SessionControl>(socket.get_executor());
  if (const auto refused = table_->admit(control, peer)) {
    if (limits_.refusals) limits_.refusals->count(*refused);
    beast::error_code ignored;
    socket.close(ignored);
    co_return;
  }
  // Shares the table, not the listener: see listener.h.
  struct Deregister {
    std::shared_ptr<ConnectionTable> table;
    std::shared_ptr<SessionControl> control;
    ~Deregister() {
      control->transport = nullptr;
      control->table = nullptr;
      table->remove(*control);
    }
  } deregister{table_, control};
  control->table = table_.get();
  const std::shared_ptr<const std::atomic<bool>> stopping = stopping_;
  const SessionLimits limits = limits_;  // the frame's own copy, like the table above

  beast::tcp_stream transport(std::move(socket));
  control->transport = &transport;
  if (auto context = tls()) {  // held by this frame: a reload swaps the listener's, not this one
    co_await serve_tls_connection(transport, *context, router_, limits, *control, *stopping);
    co_return;
  }
  co_await serve_requests(transport, router_, limits, *control, *stopping);
  beast::error_code ec;
  transport.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  if (control->unread_bytes > 0 && !ec) {
    co_await drop_what_still_arrives(transport, control->unread_bytes, limits.drop_allowance, *control, *stopping);
  }
}

}  // namespace hh::http
