#include "receiver/http/lingering_close.h"

#include <algorithm>
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>

#include "common/asio_token.h"
#include "receiver/http/session.h"

namespace hh::http {

bool DropAllowance::take(uint64_t bytes, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto elapsed = std::chrono::duration<double>(now - refilled_).count();
  if (elapsed > 0) {
    const auto refill = static_cast<uint64_t>(elapsed * static_cast<double>(per_second_));
    left_ = std::min(per_second_, left_ + std::min(refill, per_second_));
    refilled_ = now;
  }
  if (bytes > left_) return false;
  left_ -= bytes;
  return true;
}

template <typename Stream>
net::awaitable<void> drop_what_still_arrives(Stream& stream, uint64_t at_most, DropAllowance* allowance,
                                             SessionControl& control, const std::atomic<bool>& stopping) {
  auto& transport = beast::get_lowest_layer(stream);
  control.idle = true;                              // a stop cancels it (listener.cpp) ...
  if (control.table) control.table->idle(control);  // ... and it may make room
  if (stopping.load()) co_return;
  transport.expires_after(kLingerTime);  // once: the whole linger, not per read
  // Small: up to max_connections of these may wait at once, outside the body budget.
  constexpr size_t kDropBufferBytes = 16 * 1024;
  const auto dropped = std::make_unique_for_overwrite<char[]>(kDropBufferBytes);
  for (uint64_t total = 0; total < at_most && !stopping.load();) {  // a stop's cancel may have come between reads
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kDropBufferBytes, at_most - total));
    auto [ec, n] = co_await stream.async_read_some(net::buffer(dropped.get(), want), use_tuple);
    if (ec) co_return;  // the client closed (what we wait for), a deadline, a reset, a stop
    if (allowance && !allowance->take(n)) co_return;
    total += n;
  }
}

template net::awaitable<void> drop_what_still_arrives<beast::tcp_stream>(beast::tcp_stream&, uint64_t,
                                                                         DropAllowance*, SessionControl&,
                                                                         const std::atomic<bool>&);
template net::awaitable<void> drop_what_still_arrives<beast::ssl_stream<beast::tcp_stream>>(
    beast::ssl_stream<beast::tcp_stream>&, uint64_t, DropAllowance*, SessionControl&, const std::atomic<bool>&);

}  // namespace hh::http
