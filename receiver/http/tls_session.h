#pragma once
// A connection on a listener with TLS (listener.h), from its first byte to its close:
//   - its first bytes tell a TLS client from a plain-HTTP one (beast::async_detect_ssl).
//     Plain HTTP is answered 400 "this port expects TLS (HTTPS)" in plain text, as nginx
//     answers it, and the connection closes (counted as bad_request); a first byte that
//     may begin TLS (a handshake record, or an SSLv2-style hello) goes to OpenSSL, which
//     judges the rest;
//   - until the handshake is done there is no request in flight: the connection is idle,
//     so a stop closes it at once (listener.cpp), as it does a plain connection waiting
//     for its first request, and it stays a candidate to make room when all connections
//     are taken (connection_table.h: admitted idle, busy only once a request begins). The
//     first bytes and the handshake together get header_timeout;
//   - at the end, close_notify; the peer's is waited for briefly, and not at all once a
//     stop has begun (nginx waits for none).
#include <atomic>
#include <boost/asio/ssl/context.hpp>

#include "receiver/http/router.h"
#include "receiver/http/session.h"

namespace hh::http {

// The plain-text reason of the 400 to plain HTTP on a TLS port.
inline constexpr std::string_view kExpectsTls = "this port expects TLS (HTTPS)";

// Serves the connection `transport` (its contents are moved into a TLS stream) until it
// ends; `control.transport` follows it.
net::awaitable<void> serve_tls_connection(beast::tcp_stream& transport, net::ssl::context& context,
                                          const Router& router, const SessionLimits& limits, SessionControl& control,
                                          const std::atomic<bool>& stopping);

}  // namespace hh::http
