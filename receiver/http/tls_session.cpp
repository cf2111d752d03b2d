#include "receiver/http/tls_session.h"

#include <openssl/ssl.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/ssl.hpp>

#include "receiver/http/lingering_close.h"

namespace hh::http {
namespace {

constexpr std::chrono::seconds kTlsCloseNotifyWait{1};

void count_refusal(const SessionLimits& limits, Refusal reason) {
  if (limits.refusals) limits.refusals->count(reason);
}

// Whether `first_bytes`, which async_detect_ssl found no ClientHello, may still begin TLS:
// a handshake record (0x16) it does not take (e.g. a ClientHello split over small
// records), or an SSLv2-style hello (high bit set). OpenSSL judges those, as before;
// anything else (a letter of an HTTP method, most often) is no TLS at all.
bool may_begin_tls(const beast::flat_buffer& first_bytes) {
  if (first_bytes.size() == 0) return true;
  const auto first = *static_cast<const unsigned char*>(first_bytes.data().data());
  return first == 0x16 || (first & 0x80) != 0;
}

// The 400 to plain HTTP on the TLS port: plain text (a browser shows it as it is), then
// the rest of the request is dropped before the close, as after any refusal
// (lingering_close.h). Still idle meanwhile: no request of ours is in flight.
net::awaitable<void> tell_to_use_tls(beast::tcp_stream& transport, const SessionLimits& limits,
                                     SessionControl& control, const std::atomic<bool>& stopping) {
  count_refusal(limits, Refusal::bad_request);
  if (control.table) control.table->request_refused(control);  // as any refusal (session.cpp)
  Response response = text_response(Status::bad_request, std::string(kExpectsTls) + "\n", "text/plain; charset=utf-8");
  response.set("X-Content-Type-Options", "nosniff");
  response.keep_alive(false);
  transport.expires_after(limits.write_timeout);
  auto [ec, written] = co_await bhttp::async_write(transport, response, use_tuple);
  (void)written;
  if (ec) co_return;
  transport.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  if (!ec) co_await drop_what_still_arrives(transport, kLingerSlack, limits.drop_allowance, control, stopping);
}

}  // namespace

net::awaitable<void> serve_tls_connection(beast::tcp_stream& transport, net::ssl::context& context,
                                          const Router& router, const SessionLimits& limits, SessionControl& control,
                                          const std::atomic<bool>& stopping) {
  // Idle until a request begins (tls_session.h). A stop that came before this point found
  // nothing to cancel: it is seen here, and after each wait below.
  control.idle = true;
  if (stopping.load()) co_return;
  transport.expires_after(limits.header_timeout);
  beast::flat_buffer first_bytes;
  auto [detect_ec, client_hello] = co_await beast::async_detect_ssl(transport, first_bytes, use_tuple);
  // Closed, reset, a stop, or a slow client (one that sends a few bytes of a hello and
  // stops is like a head left half-way).
  if (detect_ec) {
    if (detect_ec == beast::error::timeout) count_refusal(limits, Refusal::client_timeout);
    co_return;
  }
  if (stopping.load()) co_return;
  if (!client_hello && !may_begin_tls(first_bytes)) {
    co_await tell_to_use_tls(transport, limits, control, stopping);
    co_return;
  }

  beast::ssl_stream<beast::tcp_stream> stream(std::move(transport), context);
  control.transport = &beast::get_lowest_layer(stream);
  // The bytes the detection read are the start of the handshake.
  auto [ec, used] = co_await stream.async_handshake(net::ssl::stream_base::server, first_bytes.data(), use_tuple);
  (void)used;
  if (ec) {
    // A handshake left half-way is a slow client like a head left half-way.
    if (ec == beast::error::timeout) count_refusal(limits, Refusal::client_timeout);
    co_return;
  }
  co_await serve_requests(stream, router, limits, control, stopping);
  if (control.unread_bytes > 0) {
    co_await drop_what_still_arrives(stream, control.unread_bytes, limits.drop_allowance, control, stopping);
  }
  // close_notify, then wait briefly for the peer's: a client that keeps the socket open
  // without answering must not hold a graceful stop for the whole write timeout. The last
  // request is over: idle meanwhile, it may make room for another (connection_table.h),
  // and a stop ends the wait.
  control.idle = true;
  if (control.table) control.table->idle(control);
  // Once a stop has begun, ours is sent and the peer's is not waited for: the connection
  // is done either way.
  if (stopping.load()) SSL_set_shutdown(stream.native_handle(), SSL_RECEIVED_SHUTDOWN);
  beast::get_lowest_layer(stream).expires_after(kTlsCloseNotifyWait);
  co_await stream.async_shutdown(use_tuple);
}

}  // namespace hh::http
