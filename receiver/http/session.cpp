#include "receiver/http/session.h"

#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>


namespace hh::http {

beast::flat_buffer make_read_buffer() {
  beast::flat_buffer buffer;
  buffer.reserve(kReadBufferBytes);
  return buffer;
}

namespace {

template <typename Stream>
net::awaitable<bool> write_response(Stream& stream, Response& response, const SessionLimits& limits) {
  // A deadline that passed while we waited for the commit would fail the write at once:
  // re-arm before writing.
  beast::get_lowest_layer(stream).expires_after(limits.write_timeout);
  auto [ec, bytes] = co_await bhttp::async_write(stream, response, use_tuple);
  (void)bytes;
  co_return !ec;
}

// A response for a request we refuse before (or while) reading its body. The connection
// closes afterwards: the unread body would otherwise be taken for the next request.
Response refusal(Status status, std::string_view reason) {
  Response response = error_response(status, reason);
  response.keep_alive(false);
  return response;
}

Response too_large(const SessionLimits& limits) {
  if (limits.too_large_count) limits.too_large_count->fetch_add(1, std::memory_order_relaxed);
  return refusal(Status::payload_too_large,
                 "body larger than max_body_bytes (" + std::to_string(limits.max_body_bytes) + ")");
}

}  // namespace

template <typename Stream>
net::awaitable<void> serve_requests(Stream& stream, const Router& router, const SessionLimits& limits,
                                    SessionControl& control, const std::atomic<bool>& stopping) {
  auto& transport = beast::get_lowest_layer(stream);
  beast::flat_buffer buffer = make_read_buffer();
  for (;;) {
    // Idle: wait for the first bytes of the next request.
    if (buffer.size() == 0) {
      control.idle = true;
      if (stopping.load()) co_return;
      transport.expires_after(limits.idle_timeout);
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(kReadBufferBytes), use_tuple);
      control.idle = false;
      if (ec) co_return;  // closed by the peer, idle deadline, or stop
      buffer.commit(n);
    }

    std::optional<bhttp::request_parser<bhttp::string_body>> parser;  // fresh per message (body_limit)
    parser.emplace();
    parser->header_limit(limits.max_header_bytes);
    parser->body_limit(limits.max_body_bytes);

    transport.expires_after(limits.header_timeout);
    {
      auto [ec, n] = co_await bhttp::async_read_header(stream, buffer, *parser, use_tuple);
      (void)n;
      // A Content-Length above body_limit fails already while the header is parsed.
      if (ec == bhttp::error::body_limit) {
        Response response = too_large(limits);
        co_await write_response(stream, response, limits);
        co_return;
      }
      if (ec == bhttp::error::header_limit) {
        Response response = refusal(Status::request_header_fields_too_large, "request headers too large");
        co_await write_response(stream, response, limits);
        co_return;
      }
      if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted) {
        co_return;
      }
      if (ec) {
        Response response = refusal(Status::bad_request, "malformed request: " + ec.message());
        co_await write_response(stream, response, limits);
        co_return;
      }
    }

    auto& header = parser->get();
    const auto match = router.match(header.method(), header.target());
    if (match != Router::Match::found) {
      Request head_only;
      head_only.base() = header.base();
      Response response = co_await router.handle(head_only);
      response.keep_alive(false);
      co_await write_response(stream, response, limits);
      co_return;
    }
    // curl and others wait for "100 Continue" before sending a large body.
    if (beast::iequals(header[bhttp::field::expect], "100-continue")) {
      bhttp::response<bhttp::empty_body> go_on{Status::continue_, 11};
      transport.expires_after(limits.write_timeout);
      auto [ec, n] = co_await bhttp::async_write(stream, go_on, use_tuple);
      (void)n;
      if (ec) co_return;
    }

    transport.expires_after(limits.body_timeout);
    {
      auto [ec, n] = co_await bhttp::async_read(stream, buffer, *parser, use_tuple);
      (void)n;
      if (ec == bhttp::error::body_limit) {  // chunked bodies hit the limit while reading
        Response response = too_large(limits);
        co_await write_response(stream, response, limits);
        co_return;
      }
      if (ec) co_return;  // timeout, reset or truncated body: nothing was stored
    }
    transport.expires_never();  // no socket operation while the endpoint works

    Request request = parser->release();
    const bool keep_alive = request.keep_alive();
    Response response = co_await router.handle(request);
    response.keep_alive(keep_alive && !stopping.load());
    if (!co_await write_response(stream, response, limits)) co_return;
    if (!response.keep_alive()) co_return;
  }
}

template net::awaitable<void> serve_requests<beast::tcp_stream>(beast::tcp_stream&, const Router&,
                                                                const SessionLimits&, SessionControl&,
                                                                const std::atomic<bool>&);
template net::awaitable<void> serve_requests<beast::ssl_stream<beast::tcp_stream>>(
    beast::ssl_stream<beast::tcp_stream>&, const Router&, const SessionLimits&, SessionControl&,
    const std::atomic<bool>&);

}  // namespace hh::http
