#include "receiver/http/session.h"

#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <algorithm>
#include <optional>
#include <utility>

#include "receiver/http/chunked_body_end.h"
#include "receiver/http/request_parser.h"
#include "receiver/http/response_bytes.h"

namespace hh::http {

std::string_view framing_problem(const bhttp::request_header<>& head) {
  // RFC 9112 §3.2: an HTTP/1.1 request names its host once (what an origin server must
  // refuse, not guess).
  if (head.version() >= 11 && head.count(bhttp::field::host) != 1) return "an HTTP/1.1 request carries one Host header";
  const size_t encodings = head.count(bhttp::field::transfer_encoding);
  if (encodings == 0) return {};
  if (encodings > 1) return "Transfer-Encoding may be sent once";
  // RFC 9112 §6.1: HTTP/1.0 has no chunked coding; such a request may come through a
  // 1.0 intermediary that frames it otherwise (request smuggling), so it is refused.
  if (head.version() < 11) return "Transfer-Encoding in an HTTP/1.0 request";
  if (head.count(bhttp::field::content_length) > 0) return "Transfer-Encoding and Content-Length together";
  std::string_view value = head[bhttp::field::transfer_encoding];
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (!beast::iequals(value, "chunked")) return "Transfer-Encoding other than \"chunked\"";
  return {};
}

void prepare_for_body(beast::flat_buffer& buffer) { buffer.reserve(kReadBufferBytes); }

size_t skip_empty_lines(beast::flat_buffer& buffer) {
  const std::string_view bytes(static_cast<const char*>(buffer.data().data()), buffer.size());
  size_t skipped = 0;
  for (;;) {
    const std::string_view rest = bytes.substr(skipped);
    if (rest.starts_with("\r\n")) {
      skipped += 2;
    } else if (rest.starts_with('\n')) {
      skipped += 1;
    } else {
      break;
    }
  }
  buffer.consume(skipped);
  return skipped;
}

void to_origin_form(bhttp::request_header<>& head) {
  const std::string_view target = head.target();
  if (target.starts_with('/')) return;
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (target.size() > scheme.size() && beast::iequals(target.substr(0, scheme.size()), scheme)) {
      const std::string_view rest = target.substr(scheme.size());
      const size_t path = rest.find_first_of("/?");
      std::string origin_form = path == std::string_view::npos ? "/" : std::string(rest.substr(path));
      if (origin_form.front() == '?') origin_form.insert(0, "/");
      head.target(origin_form);
      return;
    }
  }
}

namespace {

// Writes an answer; `bytes` is the connection's buffer for a small one (response_bytes.h).
template <typename Stream>
net::awaitable<bool> write_response(Stream& stream, Response& response, const SessionLimits& limits,
                                    std::string& bytes) {
  // A deadline that passed while we waited for the commit would fail the write at once:
  // re-arm before writing.
  beast::get_lowest_layer(stream).expires_after(limits.write_timeout);
  if (!writes_as_bytes(response)) {
    auto [ec, written] = co_await bhttp::async_write(stream, response, use_tuple);
    (void)written;
    co_return !ec;
  }
  write_bytes_of(response, bytes);
  auto [ec, written] = co_await net::async_write(stream, net::buffer(bytes), use_tuple);
  (void)written;
  co_return !ec;
}

void count(const SessionLimits& limits, Refusal reason) {
  if (limits.refusals) limits.refusals->count(reason);
}

// A response for a request we refuse before (or while) reading its body. The connection
// closes afterwards: the unread body would otherwise be taken for the next request. It is
// answered before any route is known (a malformed or oversized head may name none), so it
// carries the strictest browser policy itself: a console path's refusal is as locked down
// as the console's own answers (black-box pass, stop 82), and a JSON error needs nothing.
Response refusal(Status status, std::string_view reason) {
  Response response = error_response(status, reason);
  response.set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
  response.set("X-Content-Type-Options", "nosniff");
  response.set("Referrer-Policy", "no-referrer");
  response.set(bhttp::field::x_frame_options, "DENY");
  response.keep_alive(false);
  return response;
}

Response too_large(const SessionLimits& limits, std::string_view target) {
  count(limits, Router::path_of(target) == limits.delivery_path ? Refusal::body_too_large : Refusal::request_too_large);
  return refusal(Status::payload_too_large,
                 "body larger than max_body_bytes (" + std::to_string(limits.max_body_bytes) + ")");
}

// A chunked body's trailer section over max_header_bytes, or one of its fields over what a
// head's may hold (chunked_body_end.h).
Response trailer_too_large(const SessionLimits& limits) {
  count(limits, Refusal::headers_too_large);
  return refusal(Status::request_header_fields_too_large,
                 "trailer fields larger than max_header_bytes (" + std::to_string(limits.max_header_bytes) +
                     ") or a field over " + std::to_string(kMaxFieldBytes) + " bytes");
}

Response malformed_body(const SessionLimits& limits, std::string_view reason) {
  count(limits, Refusal::bad_request);
  return refusal(Status::bad_request, "malformed request body: " + std::string(reason));
}

constexpr std::string_view kBudgetFull = "too many request bodies in flight; retry later";
constexpr std::string_view kClientShareFull =
    "too many request bodies in flight from this address before a signed delivery; retry later";

Response budget_full(const SessionLimits& limits, std::string_view reason) {
  // The budget itself (an outage for everyone) or an unproven address's share of it
  // (what anyone can make as many of as they like: not a delivery's outcome).
  count(limits, reason == kBudgetFull ? Refusal::body_budget : Refusal::unproven_share);
  Response response = refusal(Status::service_unavailable, reason);
  response.set(bhttp::field::retry_after, std::to_string(limits.retry_after_seconds));
  return response;
}

using Parser = RequestParser;

// What a refused request may still send: its announced body, whole (some of it may have
// been read already: the bound stays an upper one). Beast knows a Content-Length even when
// the head failed on it (413: it checks the limit once the head is complete); a chunked
// body is bounded by the limit; a head that failed before its length was known (431, a
// malformed head) announced nothing to wait for.
uint64_t may_still_arrive(const Parser& parser, const SessionLimits& limits) {
  if (const auto length = parser.content_length()) return *length;
  return parser.chunked() ? limits.max_body_bytes : 0;
}

// Answers a request refused before all of it was read, and has the connection drop what
// still arrives before it closes (lingering_close.h).
template <typename Stream>
net::awaitable<void> refuse(Stream& stream, Response& response, const Parser& parser, const SessionLimits& limits,
                            SessionControl& control) {
  // The request is over: the connection no longer counts among its address's that have
  // sent nothing (capped once slots are scarce, connection_table.h), so a newcomer from
  // that address is not refused while it lingers, idle, for up to kLingerTime.
  if (control.table) control.table->request_refused(control);
  control.unread_bytes = std::min(may_still_arrive(parser, limits) + kLingerSlack, kLingerBytes);
  // A HEAD gets no body, refused or not (a client reading one would take it for the next
  // answer); its method is known once the start line parsed.
  if (parser.get().method() == bhttp::verb::head) response = without_body(std::move(response));
  std::string bytes;  // the connection ends after a refusal
  co_await write_response(stream, response, limits, bytes);
}

bool is_timeout(const beast::error_code& ec) { return ec == beast::error::timeout; }

// A body Beast's parser refused as HTTP (bad chunk framing), as opposed to one the client
// stopped sending (end of stream mid-body) or a transport failure.
bool is_body_framing_error(const beast::error_code& ec) {
  return ec && ec.category() == bhttp::make_error_code(bhttp::error::bad_chunk).category() &&
         ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message && ec != bhttp::error::body_limit;
}

// Why a head Beast refused is malformed. Beast refuses Content-Length beside chunked
// Transfer-Encoding itself, as a "bad" field (the one that came second): named as what it is.
std::string malformed_head_reason(const bhttp::request_header<>& head, const beast::error_code& ec) {
  const bool both = (ec == bhttp::error::bad_content_length && head.count(bhttp::field::transfer_encoding) > 0) ||
                    (ec == bhttp::error::bad_transfer_encoding && head.count(bhttp::field::content_length) > 0);
  if (both) return "malformed request: Transfer-Encoding and Content-Length together";
  return "malformed request: " + ec.message();
}

bool announces_body(const Parser& parser) {
  return parser.chunked() || parser.content_length().value_or(0) > 0;
}

// A 401's wait before it is sent (SessionLimits::refusal_delay); the listener's stop()
// and close_all() cut it short through `control`. The request is over: the connection
// counts as idle meanwhile, so a client proven by a signed delivery may take its place when
// every slot is taken (connection_table.h), and forged deliveries sent back to back do not
// hold a slot. False when it was chosen meanwhile (its socket is being closed: the session
// ends without an answer).
net::awaitable<bool> refusal_pause(SessionControl& control, std::chrono::milliseconds delay,
                                   const std::atomic<bool>& stopping) {
  if (delay.count() <= 0 || stopping.load()) co_return true;
  net::steady_timer timer(co_await net::this_coro::executor, delay);
  control.refusal_pause = &timer;
  if (control.table) control.table->idle(control);
  co_await timer.async_wait(use_tuple);
  control.refusal_pause = nullptr;
  co_return !control.table || control.table->busy(control);
}

}  // namespace

template <typename Stream>
net::awaitable<void> serve_requests(Stream& stream, const Router& router, const SessionLimits& limits,
                                    SessionControl& control, const std::atomic<bool>& stopping) {
  auto& transport = beast::get_lowest_layer(stream);
  beast::flat_buffer buffer;
  // Room for a whole head, and for a body's reads: what a chunked body's trailer fields,
  // which the parser takes only once all of them are here, may hold (request_parser.h).
  buffer.max_size(limits.max_header_bytes + 2 * kReadBufferBytes);
  bool first_request = true;
  size_t empty_line_bytes = 0;  // skipped before the request being waited for
  std::optional<std::chrono::steady_clock::time_point> wait_deadline;  // of the request waited for
  // One deadline for the wait for a request, an empty line before it included (it buys no
  // time): set when the wait begins, kept until a request begins.
  const auto arm_wait = [&] {
    if (!wait_deadline) {
      wait_deadline = std::chrono::steady_clock::now() + (first_request ? limits.header_timeout : limits.idle_timeout);
    }
    transport.expires_at(*wait_deadline);
  };
  bool head_accepted = false;  // reported to the table once
  // Has carried a correctly signed delivery: its 401s are not delayed (session.h).
  bool trusted = false;
  std::chrono::steady_clock::time_point last_proven{};  // when it last told the table
  std::string answer_bytes;  // each small answer's bytes, kept between answers (response_bytes.h)
  for (;;) {
    // Idle: wait for the first bytes of the next request. A new connection's deadline
    // covers its whole first head (not re-armed below): connections that never send a
    // request are the cheapest attack there is.
    if (buffer.size() == 0) {
      if (buffer.capacity() > kHeadReadBytes) buffer.shrink_to_fit();  // hold nothing while idle
      control.idle = true;
      if (control.table) control.table->idle(control);
      if (stopping.load()) co_return;
      arm_wait();
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(kHeadReadBytes), use_tuple);
      control.idle = false;
      if (ec) {  // closed by the peer, idle deadline, stop, or closed to make room
        if (first_request && is_timeout(ec)) count(limits, Refusal::client_timeout);
        co_return;
      }
      buffer.commit(n);
      // A request has begun: from now on the connection is not closed to make room. If it
      // was chosen while its first bytes arrived, its socket is being closed: end here.
      if (control.table && !control.table->busy(control)) co_return;
    }
    // RFC 9112 §2.2: empty lines before a request line are skipped (some clients send one
    // after a POST body, a stray CRLF pair may sit between pipelined requests), any number
    // of them, within the wait already running (a client sending only empty lines gets no
    // more time than one sending nothing) and counted as part of the head they precede
    // (max_header_bytes: past it, 431).
    empty_line_bytes += skip_empty_lines(buffer);
    if (empty_line_bytes > limits.max_header_bytes) {
      count(limits, Refusal::headers_too_large);
      Response response = refusal(Status::request_header_fields_too_large, "request headers too large");
      const Parser nothing_announced;
      co_await refuse(stream, response, nothing_announced, limits, control);
      co_return;
    }
    if (buffer.size() == 0) continue;  // the request line is still to come
    if (buffer.size() == 1 && *static_cast<const char*>(buffer.data().data()) == '\r') {
      // An empty line's LF may be on its way (a read ended between the two): read on before
      // deciding, within the same wait.
      arm_wait();
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(kHeadReadBytes), use_tuple);
      if (ec) {
        if (first_request && is_timeout(ec)) count(limits, Refusal::client_timeout);
        co_return;
      }
      buffer.commit(n);
      continue;
    }
    wait_deadline.reset();
    const size_t head_room = limits.max_header_bytes - empty_line_bytes;
    empty_line_bytes = 0;

    std::optional<Parser> parser;  // fresh per message (body_limit)
    parser.emplace();
    parser->head_limit(head_room);
    parser->body_limit(limits.max_body_bytes);

    if (!first_request) transport.expires_after(limits.header_timeout);
    first_request = false;
    {
      auto [ec, n] = co_await bhttp::async_read_header(stream, buffer, *parser, use_tuple);
      (void)n;
      // A Content-Length above body_limit fails already while the header is parsed.
      if (ec == bhttp::error::body_limit) {
        // A path that takes no body says so whatever the size announced (a 413 would
        // suggest a smaller body were welcome there).
        const auto& head = parser->get();
        if (router.match(head.method(), head.target()) == Router::Match::found &&
            !router.authenticates(head.method(), head.target())) {
          count(limits, Refusal::bad_request);
          Response response = refusal(Status::bad_request, "this path takes no request body");
          co_await refuse(stream, response, *parser, limits, control);
          co_return;
        }
        Response response = too_large(limits, parser->get().target());
        co_await refuse(stream, response, *parser, limits, control);
        co_return;
      }
      if (ec == bhttp::error::header_limit) {
        count(limits, Refusal::headers_too_large);
        Response response = refusal(Status::request_header_fields_too_large, "request headers too large");
        co_await refuse(stream, response, *parser, limits, control);
        co_return;
      }
      if (is_timeout(ec)) {
        count(limits, Refusal::client_timeout);
        co_return;
      }
      if (ec == bhttp::error::end_of_stream || ec == net::error::operation_aborted) co_return;
      if (ec) {
        count(limits, Refusal::bad_request);
        Response response = refusal(Status::bad_request, malformed_head_reason(parser->get(), ec));
        co_await refuse(stream, response, *parser, limits, control);
        co_return;
      }
    }

    auto& header = parser->get();
    to_origin_form(header);
    if (const std::string_view problem = framing_problem(header); !problem.empty()) {
      count(limits, Refusal::bad_request);
      Response response = refusal(Status::bad_request, problem);
      co_await refuse(stream, response, *parser, limits, control);
      co_return;
    }
    const auto match = router.match(header.method(), header.target());
    if (match != Router::Match::found) {
      Request head_only;
      head_only.base() = header.base();
      Response response = co_await router.handle(head_only);
      response.keep_alive(false);
      co_await refuse(stream, response, *parser, limits, control);
      co_return;
    }
    // Only a route that authenticates its requests takes a body: the budget is never
    // taken for a request that nothing could refuse before its body arrived.
    const bool authenticates = router.authenticates(header.method(), header.target());
    if (!authenticates && announces_body(*parser)) {
      count(limits, Refusal::bad_request);
      Response response = refusal(Status::bad_request, "this path takes no request body");
      co_await refuse(stream, response, *parser, limits, control);
      co_return;
    }
    if (auto refused = router.check_head(header)) {  // e.g. 401 before the body
      refused->keep_alive(false);
      if (control.table) control.table->request_refused(control);  // over before its wait, as in refuse()
      // A client about to send a large body is answered at once: while we waited, the
      // kernel would go on taking its bytes only to drop them.
      const auto length = parser->content_length();
      if (!trusted && !parser->chunked() && (!length || *length <= kHeadReadBytes)) {
        if (!co_await refusal_pause(control, limits.refusal_delay, stopping)) co_return;
      }
      co_await refuse(stream, *refused, *parser, limits, control);
      co_return;
    }
    if (!head_accepted && control.table) control.table->head_accepted(control);
    head_accepted = true;
    // A body of known length takes its whole size from the budget before any of it is
    // read (all or nothing: bodies that each hold part of the budget while waiting for the
    // rest could wait for one another). A chunked body takes its bytes as they arrive.
    // A client not yet proven holds at most its share of it (connection_table.h). Deliveries
    // only: a console form is at most 4 KiB, and an operator, whom only the webhook path
    // could prove, would be locked out by whoever filled the unproven half.
    BodyReservation held(limits.body_budget, limits.budget_wait);
    const bool delivery = Router::path_of(header.target()) == limits.delivery_path;
    ClientBodyHold client_held(trusted || !delivery ? nullptr : control.table, control);
    // What stops taking more: the client's share (at once), or the budget (after a wait).
    const auto take_up_to = [&](uint64_t total) -> net::awaitable<std::string_view> {
      if (!client_held.grow_to(total)) co_return kClientShareFull;
      if (!co_await held.grow_to(total)) co_return kBudgetFull;
      co_return std::string_view();
    };
    if (const auto length = parser->content_length(); length && *length > 0) {
      if (const std::string_view full = co_await take_up_to(*length); !full.empty()) {
        Response response = budget_full(limits, full);
        co_await refuse(stream, response, *parser, limits, control);
        co_return;
      }
    }
    // curl and others wait for "100 Continue" before sending a large body. An HTTP/1.0
    // client knows no interim answers (RFC 9110 §10.1.1): it just sends.
    if (header.version() >= 11 && beast::iequals(header[bhttp::field::expect], "100-continue")) {
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
    bool body_read = parser->is_done();
    while (!body_read) {
      auto [ec, n] = co_await bhttp::async_read_some(stream, buffer, *parser, use_tuple);
      (void)n;
      if (ec == bhttp::error::end_of_chunk && parser->at_last_chunk()) {
        // The trailer section is in the buffer, whole: read here, never as framing
        // (chunked_body_end.h). What follows it is the next request's.
        const ChunkedBodyEnd end = read_chunked_body_end(
            std::string_view(static_cast<const char*>(buffer.data().data()), buffer.size()), limits.max_header_bytes);
        if (end.verdict == ChunkedBodyEnd::Verdict::complete) {
          buffer.consume(end.bytes);
          body_read = true;
          continue;
        }
        Response response = end.verdict == ChunkedBodyEnd::Verdict::too_large
                                ? trailer_too_large(limits)
                                : malformed_body(limits, end.reason);
        co_await refuse(stream, response, *parser, limits, control);
        co_return;
      }
      if (ec == bhttp::error::body_limit) {  // chunked bodies hit the limit while reading
        Response response = too_large(limits, parser->get().target());
        co_await refuse(stream, response, *parser, limits, control);
        co_return;
      }
      if (ec == bhttp::error::buffer_overflow) {  // a chunk header, or a trailer section, without its end
        count(limits, Refusal::headers_too_large);
        Response response = refusal(Status::request_header_fields_too_large,
                                    "a chunk header or the trailer fields larger than max_header_bytes (" +
                                        std::to_string(limits.max_header_bytes) + ") allows");
        co_await refuse(stream, response, *parser, limits, control);
        co_return;
      }
      if (is_body_framing_error(ec)) {  // e.g. a chunk size that is not hex: the client is told
        Response response = malformed_body(limits, ec.message());
        co_await refuse(stream, response, *parser, limits, control);
        co_return;
      }
      if (ec) {  // timeout, reset or truncated body: nothing was stored
        if (is_timeout(ec)) count(limits, Refusal::client_timeout);
        co_return;
      }
      if (const std::string_view full = co_await take_up_to(parser->get().body().size()); !full.empty()) {
        Response response = budget_full(limits, full);
        co_await refuse(stream, response, *parser, limits, control);
        co_return;
      }
      body_read = parser->is_done();
    }
    transport.expires_never();  // no socket operation while the endpoint works

    Request request = parser->release();
    const bool keep_alive = request.keep_alive();
    const bool http_1_0 = request.version() == 10;
    Response response = co_await router.handle(request);
    // The endpoint is done with the body (the inbox has it, or it was refused): its memory
    // goes with its budget, before a refusal's pause below.
    std::string().swap(request.body());
    held.release();
    client_held.release();
    // A 401 of any route (a wrong signature, or a wrong bearer token on the read API or
    // /metrics) waits on a connection not yet trusted: guessing a token is as slow as
    // guessing a signature. Trusted: the connection carried a correctly signed delivery
    // (an answer other than 401 on the webhook path). A console sign-in does not make it
    // so: a holder of the read token would then guess the admin token at full speed.
    if (response.result() == Status::unauthorized) {
      // A route that authenticates counts its own refusals (signature_*, console_sign_in).
      if (!authenticates) count(limits, Refusal::unauthorized);
      if (!trusted && !co_await refusal_pause(control, limits.refusal_delay, stopping)) co_return;
    } else if (authenticates && delivery) {
      // The address stays proven kProvenFor after its last signed delivery: said again
      // now and then on a connection kept open, not on every delivery (the table's lock).
      const auto now = std::chrono::steady_clock::now();
      if (control.table && (!trusted || now - last_proven >= kProvenRefresh)) {
        control.table->proven(control);
        last_proven = now;
      }
      trusted = true;
    }
    // An endpoint may close the connection itself (a failed console sign-in does).
    response.keep_alive(keep_alive && response.keep_alive() && !stopping.load());
    // An HTTP/1.0 client that asked to keep the connection is told it is kept: our answers
    // are HTTP/1.1, whose keep-alive is implicit, but a 1.0 client assumes a close unless
    // told otherwise.
    if (http_1_0 && response.keep_alive()) response.set(bhttp::field::connection, "keep-alive");
    if (!co_await write_response(stream, response, limits, answer_bytes)) co_return;
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
