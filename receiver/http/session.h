#pragma once
// One HTTP/1.1 connection: read a request, hand it to the router, write the response,
// repeat while keep-alive holds. Deadlines: idle (waiting for the next request), header
// (the rest of the request line and headers) and body are separate, so a slow client
// cannot hold a connection for ever; limits answer 413 (body) and 431 (headers).
#include <atomic>
#include <chrono>
#include <memory>

#include "receiver/http/http_types.h"
#include "receiver/http/router.h"

namespace hh::http {

struct SessionLimits {
  uint64_t max_body_bytes = 4 * 1024 * 1024;
  uint32_t max_header_bytes = 16 * 1024;
  std::chrono::seconds idle_timeout{60};
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds body_timeout{30};
  std::chrono::seconds write_timeout{10};
  // Counts bodies refused with 413 (the /metrics outcome "too_large"); may be null. A 413 is
  // decided here, before any endpoint sees the request, so the session keeps the count.
  std::atomic<uint64_t>* too_large_count = nullptr;
};

// Bytes reserved in each connection's read buffer. Beast's flat_buffer otherwise reads
// 512 bytes per read_some, which made 20 KiB bodies 4-8x slower (7.5k vs 58k req/s).
inline constexpr size_t kReadBufferBytes = 64 * 1024;

// The per-connection read buffer, reserved to kReadBufferBytes.
beast::flat_buffer make_read_buffer();

// What the listener may do to a running session from outside: close it when it is idle.
// Fields are touched only on the session's executor (its strand).
struct SessionControl {
  explicit SessionControl(net::any_io_executor ex) : executor(std::move(ex)) {}
  net::any_io_executor executor;
  beast::tcp_stream* transport = nullptr;  // null once the session ended
  bool idle = false;                       // waiting for the next request
};

// Serves requests on `stream` (beast::tcp_stream, or an ssl_stream over one, already
// handshaken) until the peer closes, an error or deadline ends it, or `stopping` is set.
template <typename Stream>
net::awaitable<void> serve_requests(Stream& stream, const Router& router, const SessionLimits& limits,
                                    SessionControl& control, const std::atomic<bool>& stopping);

}  // namespace hh::http
