#pragma once
// Lingering close: after a refusal sent before a request's body was read (413, 401, 404,
// 400, 503), the client may still be sending that body. Python's http.client and urllib,
// and most scripts, send the whole request before they read anything; were the socket
// closed with its bytes unread, the kernel would answer them with a reset, their send
// would fail with "broken pipe", and the reset may discard the refusal before they read
// it. So the session stops sending (FIN after the answer), then reads and drops what
// still arrives until the client closes, as nginx's lingering_close does, within bounds an
// attacker cannot stretch:
//   - per connection, the bytes the refused request announced (its Content-Length, or
//     max_body_bytes when chunked; none when its head failed before a length) plus
//     kLingerSlack, at most kLingerBytes, dropped through one 16 KiB buffer (no memory
//     grows with them), and kLingerTime in all;
//   - per listener, DropAllowance: bytes a second read only to be dropped, charged read by
//     read. A connection whose read finds it spent is closed at once, as before: a flood of
//     refused uploads costs the io thread a bounded share of its time, while a lone client
//     gets its answer. (One sender streaming refused uploads without pause keeps it spent,
//     and other refused clients then see the reset again; the service's deliveries, never
//     refused, are not touched.)
//   - the connection counts as idle meanwhile: it makes room for a newcomer when all are
//     taken (connection_table.h), and a stop closes it at once.
// Beyond a bound the connection is closed (the client may then see the reset). Over TLS
// no close_notify is sent before the drop (a TLS 1.3 peer's data after it would fail the
// shutdown): a client that reads until the connection ends, rather than by the answer's
// Content-Length, waits for the drop to end.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "receiver/http/http_types.h"

namespace hh::http {

struct SessionControl;

inline constexpr std::chrono::seconds kLingerTime{5};
inline constexpr uint64_t kLingerBytes = 64ull * 1024 * 1024;
inline constexpr uint64_t kLingerSlack = 64 * 1024;  // the rest of a head, a next request

// The listener's bytes a second read only to be dropped (a token bucket holding at most
// one second's worth). Thread-safe.
class DropAllowance {
 public:
  using Clock = std::chrono::steady_clock;
  explicit DropAllowance(uint64_t bytes_per_second, Clock::time_point now = Clock::now())
      : per_second_(bytes_per_second), left_(bytes_per_second), refilled_(now) {}
  // Takes `bytes` if they are left now; false (nothing taken) when they are not.
  bool take(uint64_t bytes, Clock::time_point now = Clock::now());

 private:
  const uint64_t per_second_;
  std::mutex mutex_;
  uint64_t left_;                // GUARDED_BY(mutex_)
  Clock::time_point refilled_;  // GUARDED_BY(mutex_)
};

inline constexpr uint64_t kDropBytesPerSecond = 64ull * 1024 * 1024;

// Reads and drops up to `at_most` bytes arriving on `stream` (beast::tcp_stream, or an
// ssl_stream over one) until the peer closes, kLingerTime passes, `allowance` (null: none)
// is spent, or `stopping` is set. The caller has sent its answer; over plain TCP it has
// shut down its sending side first.
template <typename Stream>
net::awaitable<void> drop_what_still_arrives(Stream& stream, uint64_t at_most, DropAllowance* allowance,
                                             SessionControl& control, const std::atomic<bool>& stopping);

}  // namespace hh::http
