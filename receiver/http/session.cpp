#include "receiver/http/session.h"

#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>
#include <utility>

namespace hh::http {

std::string_view framing_problem(const bhttp::request_header<>& head) {
  const size_t encodings = head.count(bhttp::field::transfer_encoding);
  if (encodings == 0) return {};
  if (encodings > 1) return "Transfer-Encoding may be sent once";
  if (head.count(bhttp::field::content_length) > 0) return "Transfer-Encoding and Content-Length together";
  std::string_view value = head[bhttp::field::transfer_encoding];
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (!beast::iequals(value, "chunked")) return "Transfer-Encoding other than \"chunked\"";
  return {};
}

void prepare_for_body(beast::flat_buffer& buffer) { buffer.reserve(kReadBufferBytes); }

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

void count(const SessionLimits& limits, Refusal reason) {
  if (limits.refusals) limits.refusals->count(reason);
}

// A response for a request we refuse before (or while) reading its body. The connection
// closes afterwards: the unread body would otherwise be taken for the next request.
Response refusal(Status status, std::string_view reason) {
  Response response = error_response(status, reason);
  response.keep_alive(false);
  return response;
}

Response too_large(const SessionLimits& limits) {
  count(limits, Refusal::body_too_large);
  return refusal(Status::payload_too_large,
                 "body larger than max_body_bytes (" + std::to_string(limits.max_body_bytes) + ")");
}

Response budget_full(const SessionLimits& limits) {
  count(limits, Refusal::body_budget);
  Response response = refusal(Status::service_unavailable, "too many request bodies in flight; retry later");
  response.set(bhttp::field::retry_after, std::to_string(limits.retry_after_seconds));
  return response;
}

bool is_timeout(const beast::error_code& ec) { return ec == beast::error::timeout; }

}  // namespace

template <typename Stream>
net::awaitable<void> serve_requests(Stream& stream, const Router& router, const SessionLimits& limits,
                                    SessionControl& control, const std::atomic<bool>& stopping) {
  auto& transport = beast::get_lowest_layer(stream);
  beast::flat_buffer buffer;
  bool first_request = true;
  for (;;) {
    // Idle: wait for the first bytes of the next request. A new connection's deadline
    // covers its whole first head (not re-armed below): connections that never send a
    // request are the cheapest attack there is.
    if (buffer.size() == 0) {
      if (buffer.capacity() > kHeadReadBytes) buffer.shrink_to_fit();  // hold nothing while idle
      control.idle = true;
      if (stopping.load()) co_return;
      transport.expires_after(first_request ? limits.header_timeout : limits.idle_timeout);
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(kHeadReadBytes), use_tuple);
      control.idle = false;
      if (ec) {  // closed by the peer, idle deadline, or stop
        if (first_request && is_timeout(ec)) count(limits, Refusal::client_timeout);
        co_return;
      }
      buffer.commit(n);
    }

    std::optional<bhttp::request_parser<bhttp::string_body>> parser;  // fresh per message (body_limit)
    parser.emplace();
    parser->header_limit(limits.max_header_bytes);
    parser->body_limit(limits.max_body_bytes);

    if (!first_request) transport.expires_after(limits.header_timeout);
    first_request = false;
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
        count(limits, Refusal::headers_too_large);
        Response response = refusal(Status::request_header_fields_too_large, "request headers too large");
        co_await write_response(stream, response, limits);
        co_return;
      }
      if (is_timeout(ec)) {
        count(limits, Refusal::client_timeout);
        co_return;
      }
      if (ec == bhttp::error::end_of_stream || ec == net::error::operation_aborted) co_return;
      if (ec) {
        count(limits, Refusal::bad_request);
        Response response = refusal(Status::bad_request, "malformed request: " + ec.message());
        co_await write_response(stream, response, limits);
        co_return;
      }
    }

    auto& header = parser->get();
    if (const std::string_view problem = framing_problem(header); !problem.empty()) {
      count(limits, Refusal::bad_request);
      Response response = refusal(Status::bad_request, problem);
      co_await write_response(stream, response, limits);
      co_return;
    }
    const auto match = router.match(header.method(), header.target());
    if (match != Router::Match::found) {
      Request head_only;
      head_only.base() = header.base();
      Response response = co_await router.handle(head_only);
      response.keep_alive(false);
      co_await write_response(stream, response, limits);
      co_return;
    }
    if (auto refused = router.check_head(header)) {  // e.g. 401 before the body
      refused->keep_alive(false);
      // A client about to send a large body is answered at once: while we waited, the
      // kernel would go on taking its bytes only to drop them.
      const auto length = parser->content_length();
      if (!parser->chunked() && (!length || *length <= kHeadReadBytes)) co_await wait_for(limits.refusal_delay);
      co_await write_response(stream, *refused, limits);
      co_return;
    }
    if (control.first_request_accepted) std::exchange(control.first_request_accepted, nullptr)();
    // A body of known length takes its whole size from the budget before any of it is
    // read (all or nothing: bodies that each hold part of the budget while waiting for the
    // rest could wait for one another). A chunked body takes its bytes as they arrive.
    BodyReservation held(limits.body_budget);
    if (const auto length = parser->content_length(); length && *length > 0) {
      if (!co_await held.grow_to(*length, limits.budget_wait)) {
        Response response = budget_full(limits);
        co_await write_response(stream, response, limits);
        co_return;
      }
    }
    // curl and others wait for "100 Continue" before sending a large body.
    if (beast::iequals(header[bhttp::field::expect], "100-continue")) {
      bhttp::response<bhttp::empty_body> go_on{Status::continue_, 11};
      transport.expires_after(limits.write_timeout);
      auto [ec, n] = co_await bhttp::async_write(stream, go_on, use_tuple);
      (void)n;
      if (ec) co_return;
    }

    if (!parser->is_done()) {
      const auto length = parser->content_length();
      if (!length || *length > buffer.size()) prepare_for_body(buffer);
    }
    transport.expires_after(limits.body_timeout);
    while (!parser->is_done()) {
      auto [ec, n] = co_await bhttp::async_read_some(stream, buffer, *parser, use_tuple);
      (void)n;
      if (ec == bhttp::error::body_limit) {  // chunked bodies hit the limit while reading
        Response response = too_large(limits);
        co_await write_response(stream, response, limits);
        co_return;
      }
      if (ec) {  // timeout, reset or truncated body: nothing was stored
        if (is_timeout(ec)) count(limits, Refusal::client_timeout);
        co_return;
      }
      if (!co_await held.grow_to(parser->get().body().size(), limits.budget_wait)) {
        Response response = budget_full(limits);
        co_await write_response(stream, response, limits);
        co_return;
      }
    }
    transport.expires_never();  // no socket operation while the endpoint works

    Request request = parser->release();
    const bool keep_alive = request.keep_alive();
    Response response = co_await router.handle(request);
    held.release();  // the endpoint is done with the body (the inbox has it, or it was refused)
    // An endpoint may close the connection itself (a failed console sign-in does).
    response.keep_alive(keep_alive && response.keep_alive() && !stopping.load());
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
