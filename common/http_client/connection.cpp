#include "common/http_client/connection.h"

#include "common/http_url.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <optional>
#include <type_traits>

#include "common/asio_token.h"

namespace hh::http_client {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// Room reserved in a connection's read buffer: Beast reads at most the free capacity of
// a flat_buffer (at least 512 bytes), so without it a large body arrives 512 bytes a read.
constexpr size_t kReadBufferBytes = 64 * 1024;

bool is_ip_literal(const std::string& host) {
  error_code ec;
  (void)net::ip::make_address(host, ec);
  return !ec;
}

// SNI and the name the certificate must carry (RFC 6125 via OpenSSL's X509_check_host).
// IP literals get no SNI (RFC 6066 forbids it) and are matched against IP SANs.
bool configure_peer_check(SSL* ssl, const std::string& host) {
  if (is_ip_literal(host)) {
    return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1;
  }
  if (SSL_set_tlsext_host_name(ssl, host.c_str()) != 1) return false;
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return SSL_set1_host(ssl, host.c_str()) == 1;
}

bool is_closed_by_peer(const error_code& ec) {
  return ec == bhttp::error::partial_message || ec == bhttp::error::end_of_stream || ec == net::error::eof ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe;
}

std::string ms_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

}  // namespace

// The stream (exactly one of plain and tls) and the bytes read past the last response.
// The functions that start an operation are not coroutines: they hand back Beast's own
// awaitable, so choosing the stream costs no coroutine frame per request.
struct Connection::Transport {
  Transport(const net::any_io_executor& executor, ssl::context* context) {
    if (context) {
      tls.emplace(executor, *context);
    } else {
      plain.emplace(executor);
    }
    buffer.reserve(kReadBufferBytes);
  }

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }

  template <typename Body>
  auto async_write(const bhttp::request<Body>& request) {
    if (tls) return bhttp::async_write(*tls, request, use_tuple);
    return bhttp::async_write(*plain, request, use_tuple);
  }

  template <typename Body>
  auto async_write_header(bhttp::request_serializer<Body>& serializer) {
    if (tls) return bhttp::async_write_header(*tls, serializer, use_tuple);
    return bhttp::async_write_header(*plain, serializer, use_tuple);
  }

  template <typename Body>
  auto async_write_rest(bhttp::request_serializer<Body>& serializer) {
    if (tls) return bhttp::async_write(*tls, serializer, use_tuple);
    return bhttp::async_write(*plain, serializer, use_tuple);
  }

  template <typename Body>
  auto async_read_some(bhttp::response_parser<Body>& parser) {
    if (tls) return bhttp::async_read_some(*tls, buffer, parser, use_tuple);
    return bhttp::async_read_some(*plain, buffer, parser, use_tuple);
  }

  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  std::optional<beast::tcp_stream> plain;
  beast::flat_buffer buffer;  // bytes read past the last message stay here for the next one
};

Connection::Connection(net::any_io_executor executor, Peer peer, Options options)
    : executor_(std::move(executor)), peer_(std::move(peer)), options_(options) {}

Connection::~Connection() { shut(); }

bool Connection::is_open() const { return transport_ && transport_->lowest().socket().is_open(); }

bool Connection::reusable() const {
  if (!reusable_ || !is_open()) return false;
  // Anything that arrived after the answer was read (in the socket, or read by TLS and not
  // yet taken) was asked for by no request.
  error_code ec;
  if (transport_->lowest().socket().available(ec) > 0 || ec) return false;
  return !transport_->tls || SSL_pending(transport_->tls->native_handle()) == 0;
}

void Connection::shut() {
  reusable_ = false;
  if (resolver_) resolver_->cancel();
  if (transport_) {
    error_code ignored;
    transport_->lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    transport_->lowest().close();  // also cancels the stream's deadline
  }
}

void Connection::close() {
  closed_ = true;
  shut();
}

void Connection::reset() {
  shut();
  transport_.reset();
  closed_ = false;
}

Outcome Connection::failed(Step step, const error_code& code) const {
  Outcome outcome;
  outcome.step = step;
  outcome.code = code;
  if (closed_) {
    outcome.failure = Failure::cancelled;
  } else if (step == Step::resolve || step == Step::connect) {
    outcome.failure = Failure::connect;
  } else if (step == Step::handshake) {
    outcome.failure = code == beast::error::timeout ? Failure::connect : Failure::tls;
  } else if (code == beast::error::timeout) {
    outcome.failure = Failure::timeout;
  } else if (code == bhttp::error::body_limit) {
    outcome.failure = Failure::too_large;
  } else if (is_closed_by_peer(code) || code == ssl::error::stream_truncated) {
    outcome.failure = Failure::transport;
  } else if (code.category() == bhttp::make_error_code(bhttp::error::need_buffer).category()) {
    outcome.failure = Failure::protocol;
  } else {
    outcome.failure = Failure::transport;
  }
  return outcome;
}

net::awaitable<Outcome> Connection::connect() {
  reset();
  const auto deadline = std::chrono::steady_clock::now() + options_.connect_timeout;
  // Every host goes through the resolver, IP literals too (getaddrinfo answers those
  // without asking DNS): one path whatever the host, and so the same threads, Asio's
  // resolver thread among them (tests/ops/thread_names_test.cpp counts them).
  //
  // The resolver knows no deadline of its own: a timer cancels it. The timer's handler
  // shares the resolver, so a handler that runs after this frame is gone touches nothing
  // freed.
  auto resolver = std::make_shared<tcp::resolver>(executor_);
  resolver_ = resolver;
  net::steady_timer timer(executor_, deadline);
  timer.async_wait([resolver](const error_code& ec) {
    if (!ec) resolver->cancel();
  });
  const std::string service = std::to_string(peer_.port);  // named: no temporaries in a co_await (GCC PR 100611)
  auto [ec, results] = co_await resolver->async_resolve(peer_.host, service, use_tuple);
  timer.cancel();
  resolver_.reset();
  if (ec == net::error::operation_aborted && !closed_) ec = beast::error::timeout;  // the timer cancelled it
  if (ec) {
    shut();
    co_return failed(Step::resolve, ec);
  }
  std::vector<tcp::endpoint> endpoints;
  endpoints.reserve(results.size());
  for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  co_return co_await open(endpoints, deadline);
}

net::awaitable<Outcome> Connection::connect(const std::vector<tcp::endpoint>& endpoints) {
  reset();
  co_return co_await open(endpoints, std::chrono::steady_clock::now() + options_.connect_timeout);
}

net::awaitable<Outcome> Connection::open(const std::vector<tcp::endpoint>& endpoints,
                                         std::chrono::steady_clock::time_point deadline) {
  transport_ = std::make_unique<Transport>(executor_, peer_.tls.get());
  Transport& transport = *transport_;
  // One deadline for connect + handshake: the stream applies it to every operation.
  transport.lowest().expires_at(deadline);
  auto [connect_ec, endpoint] = co_await transport.lowest().async_connect(endpoints, use_tuple);
  (void)endpoint;
  if (connect_ec) {
    shut();
    co_return failed(Step::connect, connect_ec);
  }
  error_code ignored;
  transport.lowest().socket().set_option(tcp::no_delay(true), ignored);  // requests are written whole
  if (transport.tls) {
    SSL* ssl = transport.tls->native_handle();
    if (!configure_peer_check(ssl, peer_.host)) {
      shut();
      Outcome outcome;
      outcome.failure = Failure::tls;
      outcome.step = Step::handshake;
      co_return outcome;
    }
    auto [handshake_ec] = co_await transport.tls->async_handshake(ssl::stream_base::client, use_tuple);
    if (handshake_ec) {
      Outcome outcome = failed(Step::handshake, handshake_ec);
      const long verify = SSL_get_verify_result(ssl);
      if (outcome.failure != Failure::cancelled && verify != X509_V_OK) {
        outcome.failure = Failure::certificate;
        outcome.verify_result = verify;
      }
      shut();
      co_return outcome;
    }
  }
  transport.lowest().expires_never();
  co_return Outcome{};
}

template <typename Body>
net::awaitable<Outcome> Connection::write(const bhttp::request<Body>& request) {
  reusable_ = false;  // until the response to this request is read to its end
  if (!transport_) co_return failed(Step::write, net::error::not_connected);
  transport_->lowest().expires_after(options_.read_timeout);
  auto [ec, written] = co_await transport_->async_write(request);
  (void)written;
  request_sent_ = !ec;
  if (ec) co_return failed(Step::write, ec);
  co_return Outcome{};
}

net::awaitable<Outcome> Connection::send_expecting_continue(const bhttp::request<bhttp::span_body<const char>>& request,
                                                            std::optional<bhttp::response_parser<bhttp::string_body>>& answer,
                                                            std::chrono::milliseconds wait) {
  reusable_ = false;
  request_sent_ = false;
  if (!transport_) co_return failed(Step::write, net::error::not_connected);
  bhttp::request_serializer<bhttp::span_body<const char>> serializer(request);
  transport_->lowest().expires_after(options_.read_timeout);
  {
    auto [ec, written] = co_await transport_->async_write_header(serializer);
    (void)written;
    if (ec) co_return failed(Step::write, ec);
  }
  // The answer's heads are read beside the body's write (a stream takes one read and one
  // write at a time). The reader ends at 100 Continue or at the final answer's head; every
  // path below waits for it to end before this frame, which it refers to, is left. Its
  // reads wait without a deadline while the body may still be sent (the peer answers once
  // it has the body, however long that takes to send); `wait` bounds the first second,
  // and read_timeout, counted from the body's last byte, the rest.
  struct Reading {
    bool done = false;
    bool got_continue = false;
    Outcome outcome;
  };
  Reading reading;
  awaiting_body_ = true;
  net::steady_timer signal(executor_, wait);  // expires after `wait`; cancelled when the reader ends
  net::co_spawn(
      executor_,
      [this, &answer, &reading, &signal]() -> net::awaitable<void> {
        const auto interim = [](unsigned status) { return status >= 100 && status < 200 && status != 101; };
        for (;;) {
          answer.emplace();
          reading.outcome = co_await read_until(*answer, true);
          if (!reading.outcome.ok()) break;
          const unsigned status = answer->get().result_int();
          reading.got_continue = status == 100;
          if (reading.got_continue || !interim(status)) break;  // 102 Processing, 103 Early Hints: skipped
        }
        reading.done = true;
        signal.cancel();
      },
      net::detached);
  const auto until_read = [&]() -> net::awaitable<void> {
    while (!reading.done) {
      signal.expires_at(net::steady_timer::time_point::max());
      co_await signal.async_wait(use_tuple);
    }
  };
  co_await signal.async_wait(use_tuple);  // `wait`, or less when the reader ended
  if (reading.done && !reading.got_continue) {
    // An error, or a final answer before any body byte: the body stays unsent.
    awaiting_body_ = false;
    co_return reading.outcome;
  }

  transport_->lowest().expires_after(options_.read_timeout);  // the write's (a pending read keeps its own)
  auto [write_ec, written] = co_await transport_->async_write_rest(serializer);
  (void)written;
  awaiting_body_ = false;
  request_sent_ = !write_ec;
  if (!reading.done) {
    // The read under way has no deadline: this one stands for it. Shared with its handler,
    // which may already be queued when the read ends.
    auto watching = std::make_shared<bool>(true);
    auto expired = std::make_shared<bool>(false);
    net::steady_timer watchdog(executor_, options_.read_timeout);
    watchdog.async_wait([this, watching, expired](const error_code& ec) {
      if (ec || !*watching) return;
      *expired = true;
      shut();
    });
    co_await until_read();
    *watching = false;
    watchdog.cancel();
    if (*expired && !reading.outcome.ok()) reading.outcome = failed(Step::wait, beast::error::timeout);
  }
  if (!reading.outcome.ok()) co_return write_ec ? failed(Step::write, write_ec) : reading.outcome;
  // A final answer that came while the body went (a refusal after the head: the peer may
  // have closed before taking the rest, failing the write) is the answer.
  if (!reading.got_continue) co_return Outcome{};
  if (write_ec) co_return failed(Step::write, write_ec);
  co_return co_await read_header(answer);
}

template <typename Body>
net::awaitable<Outcome> Connection::read(bhttp::response_parser<Body>& parser) {
  return read_until(parser, false);
}

template <typename Body>
net::awaitable<Outcome> Connection::read_header(std::optional<bhttp::response_parser<Body>>& parser) {
  const auto interim = [](unsigned status) { return status >= 100 && status < 200 && status != 101; };
  Outcome outcome;
  for (;;) {
    parser.emplace();
    outcome = co_await read_until(*parser, true);
    if (!outcome.ok() || !interim(parser->get().result_int())) break;
  }
  co_return outcome;
}

template <typename Body>
net::awaitable<Outcome> Connection::read_until(bhttp::response_parser<Body>& parser, bool header_only) {
  if (!transport_) co_return failed(Step::wait, net::error::not_connected);
  Transport& transport = *transport_;
  if (!parser.got_some()) {
    parser.header_limit(options_.max_header_bytes);
    parser.body_limit(options_.max_body_bytes);  // a larger Content-Length fails with the header
  }
  // Not eager: Beast's eager parse, having taken a chunk, asks for the next chunk's
  // header within the same read_some, so a chunked body would arrive whole under the one
  // deadline armed below; parsed an element at a time, every read that brings bytes
  // re-arms it (read_timeout is for the next bytes; fetch_timeout bounds the whole).
  parser.eager(false);
  for (;;) {
    if (header_only ? parser.is_header_done() : parser.is_done()) break;
    if constexpr (std::is_same_v<Body, bhttp::buffer_body>) {
      if (parser.is_header_done() && !header_only && parser.get().body().size == 0) break;  // the caller's turn
    }
    if (awaiting_body_) {
      transport.lowest().expires_at(net::steady_timer::time_point::max());  // send_expecting_continue()'s
    } else {
      transport.lowest().expires_after(options_.read_timeout);  // inactivity: re-armed per read
    }
    auto [ec, parsed] = co_await transport.async_read_some(parser);
    (void)parsed;
    if (ec == bhttp::error::need_buffer) break;
    if (ec) {
      const Step step = !parser.got_some() ? Step::wait : !parser.is_header_done() ? Step::header : Step::body;
      co_return failed(step, ec);
    }
  }
  // Bytes past a complete answer, before the next request was even sent, are not the next
  // answer (a peer that answered twice, or garbage): such a connection is not used again.
  // (After an interim 1xx answer they are the final one; its own read decides.)
  if (parser.is_done()) reusable_ = request_sent_ && parser.keep_alive() && transport.buffer.size() == 0;
  co_return Outcome{};
}

std::string Connection::describe(const Outcome& outcome) const {
  if (outcome.ok()) return {};
  if (outcome.failure == Failure::cancelled) return "cancelled";
  const bool timed_out = outcome.code == beast::error::timeout;
  const std::string where = host_port(peer_.host, peer_.port);
  switch (outcome.step) {
    case Step::resolve:
      return "cannot resolve " + peer_.host + ": " +
             (timed_out ? "timed out after " + ms_text(options_.connect_timeout) : outcome.code.message());
    case Step::connect:
      return timed_out ? "connecting to " + where + " timed out after " + ms_text(options_.connect_timeout)
                       : "cannot connect to " + where + ": " + outcome.code.message();
    case Step::handshake:
      if (outcome.failure == Failure::certificate) {
        return "TLS certificate of " + peer_.host + " rejected: " +
               X509_verify_cert_error_string(outcome.verify_result);
      }
      if (!outcome.code) return "TLS: cannot set the expected host name " + peer_.host;
      return timed_out ? "TLS handshake with " + where + " timed out after " + ms_text(options_.connect_timeout)
                       : "TLS handshake with " + where + " failed: " + outcome.code.message();
    case Step::write:
    case Step::wait:
    case Step::header:
    case Step::body: break;
  }
  const std::string doing = outcome.step == Step::write  ? "sending the request"
                            : outcome.step == Step::body ? "reading the response body"
                                                         : "waiting for the response";
  if (outcome.failure == Failure::too_large) {
    return "response body over the limit of " + std::to_string(options_.max_body_bytes) + " bytes";
  }
  if (timed_out && outcome.step == Step::header) {
    // read_timeout bounds the head whole (one read takes it, however it trickles in): a
    // head that arrives a line a second never completes, yet data never stopped, so say
    // which of the deadline's two jobs it failed.
    return doing + ": status line and headers not complete within " + ms_text(options_.read_timeout);
  }
  if (timed_out) return doing + ": no data for " + ms_text(options_.read_timeout);
  // Not ignorable here: the message is incomplete (style.md).
  if (outcome.code == ssl::error::stream_truncated) return doing + ": TLS stream truncated";
  if (is_closed_by_peer(outcome.code)) {
    return doing + ": connection closed by the server (" + outcome.code.message() + ")";
  }
  if (outcome.failure == Failure::protocol) return doing + ": malformed HTTP (" + outcome.code.message() + ")";
  return doing + ": " + outcome.code.message();
}

template net::awaitable<Outcome> Connection::write(const bhttp::request<bhttp::empty_body>&);
template net::awaitable<Outcome> Connection::write(const bhttp::request<bhttp::string_body>&);
template net::awaitable<Outcome> Connection::write(const bhttp::request<bhttp::span_body<const char>>&);
template net::awaitable<Outcome> Connection::read(bhttp::response_parser<bhttp::string_body>&);
template net::awaitable<Outcome> Connection::read_header(std::optional<bhttp::response_parser<bhttp::buffer_body>>&);
template net::awaitable<Outcome> Connection::read_header(std::optional<bhttp::response_parser<bhttp::string_body>>&);
template net::awaitable<Outcome> Connection::read(bhttp::response_parser<bhttp::buffer_body>&);

}  // namespace hh::http_client
