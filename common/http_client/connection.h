#pragma once
// One HTTP/1.1 client connection, plain TCP or TLS, driven by C++20 coroutines (Beast +
// Asio): the core that the follow-up fetcher (fetcher/https_client.h), `replay --to`
// (replay/resend.h) and bench/loadgen share. It moves one request and its response at a
// time; pooling, retries and what a failure means stay with each caller.
//
// Promises:
// - connect(): one deadline, connect_timeout, covers name resolution, the TCP connect and
//   the TLS handshake. With TLS the peer's chain is verified (tls_context.h), the host
//   name or IP literal is checked against the certificate (RFC 6125 via OpenSSL, no
//   partial wildcards), and SNI is sent for names, never for IP literals (RFC 6066). A
//   failed check fails connect() (Failure::certificate) and closes the connection, so no
//   request is ever written to an unverified peer. A TLS peer never falls back to plain
//   TCP.
// - read_timeout is an inactivity deadline: the request must be written within it, and
//   every read of the response must bring bytes within it (re-armed per read, so a large
//   body on a slow link is fine and a stalled one is not). The head (status line and
//   headers) is one read: it must be complete within read_timeout, however it trickles.
// - Limits: each response is read with a fresh parser (the caller's, one per response:
//   Beast's body_limit is per parser, beast example/advanced/server); its header may not
//   exceed max_header_bytes and its body not max_body_bytes. A Content-Length over the
//   limit fails with the header, before any body byte is read; a chunked body fails as
//   it passes the limit (Failure::too_large).
// - Nothing is followed or retried here: a 3xx is a response like any other, and a failed
//   operation is reported, never repeated.
// - reusable() is true only after a response was read to its end without an error and
//   allowed keep-alive, with no bytes after it, then or since (a peer that answered twice,
//   or whose Content-Length left bytes out: they must not pass for the next request's
//   answer). It looks at the socket each time: ask it when about to send again. After
//   anything else the caller closes the connection (or calls connect(), which closes it
//   first).
// - Errors are values (outcome.h); nothing here throws for a network event.
//
// Threading and lifetime: one operation at a time, all on the executor given at
// construction. close() may be called from another coroutine on that executor while an
// operation is pending: the operation then ends with Failure::cancelled. The connection
// must outlive its pending operation.
//
// Bodies: the member templates are compiled once, in connection.cpp, for the bodies
// listed at the end of this file; a caller with another body type adds it there.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/span_body.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/http_client/outcome.h"

namespace boost::asio::ssl {
class context;
}

namespace hh::http_client {

// Whom to talk to.
struct Peer {
  std::string host;  // a name or an IP literal, without brackets ("::1")
  uint16_t port = 0;
  // Null: plain TCP. Otherwise TLS with this context (client_tls_context() in
  // tls_context.h verifies the peer; the context is shared, not copied).
  std::shared_ptr<boost::asio::ssl::context> tls;
};

struct Options {
  std::chrono::milliseconds connect_timeout{10'000};  // resolve + TCP connect + TLS handshake
  std::chrono::milliseconds read_timeout{60'000};     // inactivity while writing or reading
  uint64_t max_body_bytes = 8 * 1024 * 1024;          // of one response, as received
  uint32_t max_header_bytes = 64 * 1024;              // of one response
};

class Connection {
 public:
  Connection(boost::asio::any_io_executor executor, Peer peer, Options options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Opens a new connection to the peer, closing the current one first: resolves the host,
  // connects, and for TLS shakes hands and checks the peer.
  boost::asio::awaitable<Outcome> connect();
  // The same with the host already resolved (a caller with many connections to one host
  // resolves once).
  boost::asio::awaitable<Outcome> connect(const std::vector<boost::asio::ip::tcp::endpoint>& endpoints);

  // Sends `request` whole. It must stay unchanged until the write completes.
  template <typename Body>
  boost::asio::awaitable<Outcome> write(const boost::beast::http::request<Body>& request);
  // Reads the response into `parser` (a fresh one per response) until it is complete or,
  // for a buffer_body, the body's buffer is full: the caller then takes the bytes, points
  // the body at fresh room and calls again while !parser.is_done().
  template <typename Body>
  boost::asio::awaitable<Outcome> read(boost::beast::http::response_parser<Body>& parser);
  // Reads the header of the final response into `parser`, emplaced afresh for each answer
  // (to look at the status before the body). Interim answers (1xx but 101: 100 Continue,
  // 102 Processing, 103 Early Hints…) come before the final one, asked for or not (RFC
  // 9110 §15.2): each is skipped, however many (a backend may send 102 Processing every
  // second while it works; counting them made the ninth the final answer, and a forwarded
  // POST died of it). What bounds them is the caller's deadline for the whole exchange
  // (the sender's timeout_ms, the fetcher's fetch_timeout) and read_timeout between bytes.
  template <typename Body>
  boost::asio::awaitable<Outcome> read_header(std::optional<boost::beast::http::response_parser<Body>>& parser);

  // Sends `request`, which carries "Expect: 100-continue", and reads the head of the final
  // answer into `answer`, as write() then read_header() do; but the body goes only once
  // the peer answered 100 Continue, or said nothing within `wait` (a peer that knows no
  // Expect, RFC 9110 §10.1.1, as curl waits). A final answer before that (413 too large,
  // 401) is the answer and the body is never sent: a receiver that refuses a large body
  // after its head, reads a bounded part of it and closes, would otherwise fail the write
  // with the refusal unread. The answer is read while the body is written, so one that
  // arrives meanwhile is the outcome even if the write then fails. A connection whose
  // request was not sent whole is not reusable.
  boost::asio::awaitable<Outcome> send_expecting_continue(
      const boost::beast::http::request<boost::beast::http::span_body<const char>>& request,
      std::optional<boost::beast::http::response_parser<boost::beast::http::string_body>>& answer,
      std::chrono::milliseconds wait);

  bool is_open() const;
  bool reusable() const;
  // Closes the socket and cancels a pending operation (it ends with Failure::cancelled).
  void close();

  // The outcome in words, naming the peer and the deadline that passed, e.g. "waiting for
  // the response: no data for 5000 ms", "waiting for the response: status line and
  // headers not complete within 5000 ms" (part of the head came, not all of it) or "TLS
  // certificate of localhost rejected: hostname mismatch". Empty for success.
  std::string describe(const Outcome& outcome) const;
  const Options& options() const { return options_; }

 private:
  struct Transport;
  boost::asio::awaitable<Outcome> open(const std::vector<boost::asio::ip::tcp::endpoint>& endpoints,
                                       std::chrono::steady_clock::time_point deadline);
  void reset();  // closes what is open and forgets the last close()
  void shut();   // closes the socket and cancels a resolution
  template <typename Body>
  boost::asio::awaitable<Outcome> read_until(boost::beast::http::response_parser<Body>& parser, bool header_only);
  Outcome failed(Step step, const boost::system::error_code& code) const;

  boost::asio::any_io_executor executor_;
  Peer peer_;
  Options options_;
  std::unique_ptr<Transport> transport_;  // null until connect()
  std::shared_ptr<boost::asio::ip::tcp::resolver> resolver_;  // while resolving (close() cancels it)
  bool reusable_ = false;
  bool request_sent_ = false;
  bool awaiting_body_ = false;  // send_expecting_continue() may still send the body: its reads wait unbounded  // the last request was written whole (only then may its answer end the exchange)
  bool closed_ = false;  // close() was called since the last connect()
};

// The bodies connection.cpp compiles the templates for.
extern template boost::asio::awaitable<Outcome> Connection::write(
    const boost::beast::http::request<boost::beast::http::empty_body>&);
extern template boost::asio::awaitable<Outcome> Connection::write(
    const boost::beast::http::request<boost::beast::http::string_body>&);
extern template boost::asio::awaitable<Outcome> Connection::write(
    const boost::beast::http::request<boost::beast::http::span_body<const char>>&);
extern template boost::asio::awaitable<Outcome> Connection::read(
    boost::beast::http::response_parser<boost::beast::http::string_body>&);
extern template boost::asio::awaitable<Outcome> Connection::read_header(
    std::optional<boost::beast::http::response_parser<boost::beast::http::buffer_body>>&);
extern template boost::asio::awaitable<Outcome> Connection::read_header(
    std::optional<boost::beast::http::response_parser<boost::beast::http::string_body>>&);
extern template boost::asio::awaitable<Outcome> Connection::read(
    boost::beast::http::response_parser<boost::beast::http::buffer_body>&);

}  // namespace hh::http_client
