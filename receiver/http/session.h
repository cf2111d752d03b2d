#pragma once
// One HTTP/1.1 connection: read a request, hand it to the router, write the response,
// repeat while keep-alive holds. What a client may cost before it is known to be the
// service (spec §2):
//   - deadlines: a new connection must send its whole first request head within
//     header_timeout; later, idle (waiting for the next request), header and body
//     deadlines are separate, so a slow client cannot hold a connection for ever;
//   - the head is checked before any byte of the body is read: limits (431, 413), a
//     Transfer-Encoding other than exactly "chunked" or beside Content-Length (400), the
//     route (404, 405), a body announced to a route that takes none (400: only routes
//     that authenticate their requests take a body, router.h) and the route's own head
//     check (the webhook's signature headers, 401); a refused request gets no
//     "100 Continue" and its connection closes;
//   - body bytes are taken from the shared budget (body_budget.h), only once the head
//     passed all of the above: 503 with Retry-After when it stays full;
//   - a 401 (a wrong signature, or a wrong bearer token of the read API or /metrics) waits
//     refusal_delay before it is sent, unless the connection has carried a correctly
//     signed delivery: a client guessing signatures or tokens gets a few answers a second
//     per connection, while the service's own keep-alive connections, where one wrongly
//     signed delivery would hold up every delivery queued behind it, never wait;
//   - the session tells the connection table when it waits for a request and when one
//     begins (connection_table.h: the connection idle the longest makes room when all
//     are taken), and ends without serving when it was chosen meanwhile;
//   - a connection holds a small read buffer only while a request arrives, none while idle;
//   - after a refusal, what the client still sends is read and dropped before the
//     connection closes, so that the client reads the answer (lingering_close.h).
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

#include "receiver/http/body_budget.h"
#include "receiver/http/connection_table.h"
#include "receiver/http/http_types.h"
#include "receiver/http/lingering_close.h"
#include "receiver/http/refusals.h"
#include "receiver/http/router.h"

namespace hh::http {

struct SessionLimits {
  uint64_t max_body_bytes = 4 * 1024 * 1024;
  uint32_t max_header_bytes = 16 * 1024;
  std::chrono::seconds idle_timeout{60};
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds body_timeout{30};
  std::chrono::seconds write_timeout{10};
  // How long a request waits for room in the budget, all its body's reads together, before
  // it gets 503.
  std::chrono::milliseconds budget_wait{1000};
  // How long a 401 waits before it is sent (a refusal by the head check only for a small
  // announced body: a large one would go on arriving meanwhile, only to be dropped), on a
  // connection that has never carried a correctly signed delivery: a client that sends
  // one request after another, each refused, then costs a few requests a second per
  // connection instead of as many as the io thread can refuse (refusal_delay_ms).
  std::chrono::milliseconds refusal_delay{250};
  int64_t retry_after_seconds = 5;  // on 503
  // The webhook path: its 413s are deliveries answered too large (body_too_large), any
  // other path's are not (request_too_large).
  std::string delivery_path = "/webhooks";
  // Shared with the listener and the endpoints; null: not counted / no budget (tests).
  Refusals* refusals = nullptr;
  BodyBudget* body_budget = nullptr;
  // Bytes a second read after refusals only to be dropped (lingering_close.h); null: no
  // limit beyond each connection's own.
  DropAllowance* drop_allowance = nullptr;
};

// Bytes read while waiting for a request's first bytes: enough for a whole small request,
// little for an idle connection to hold.
inline constexpr size_t kHeadReadBytes = 4 * 1024;
// Bytes read at a time while a body arrives. Beast's flat_buffer otherwise reads what
// little capacity is left per read_some, which made 20 KiB bodies several times slower.
inline constexpr size_t kReadBufferBytes = 64 * 1024;

// What the listener may do to a running session from outside: close it when it is idle,
// at the end of a drain, or to make room while it waits for a request; cut a refusal's
// delay short at stop. Fields are touched only on the session's executor (its strand).
struct SessionControl {
  explicit SessionControl(net::any_io_executor ex) : executor(std::move(ex)) {}
  net::any_io_executor executor;
  beast::tcp_stream* transport = nullptr;  // null once the session ended
  bool idle = false;                       // waiting for the next request
  net::steady_timer* refusal_pause = nullptr;  // set while a 401 waits refusal_delay
  // The session ended refusing a request before all of it was read: bytes the client may
  // still send, to be read and dropped before the connection closes (lingering_close.h).
  uint64_t unread_bytes = 0;
  // Where the session reports what it is doing (connection_table.h); null: nowhere (a
  // session outside a listener). Valid while the session runs.
  ConnectionTable* table = nullptr;
};

// Makes `buffer` read up to kReadBufferBytes at a time (before a body is read).
void prepare_for_body(beast::flat_buffer& buffer);

// Why a request head must be refused before its body is read (400), or "" when its
// framing is acceptable: RFC 9112 §3.2/§6.1/§6.3 (Beast 1.81 does not check these).
std::string_view framing_problem(const bhttp::request_header<>& head);

// Consumes the empty lines (CRLF, or a bare LF) at the start of `buffer`; returns their
// bytes.
size_t skip_empty_lines(beast::flat_buffer& buffer);

// An absolute-form target (http://host/path?query, RFC 9112 §3.2.2) made origin-form
// (/path?query): a server must take both, and routes know paths.
void to_origin_form(bhttp::request_header<>& head);

// Serves requests on `stream` (beast::tcp_stream, or an ssl_stream over one, already
// handshaken) until the peer closes, an error or deadline ends it, or `stopping` is set.
template <typename Stream>
net::awaitable<void> serve_requests(Stream& stream, const Router& router, const SessionLimits& limits,
                                    SessionControl& control, const std::atomic<bool>& stopping);

}  // namespace hh::http
