#include "app/drain.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include "common/asio_token.h"
#include "common/log.h"

namespace hh::app {
namespace {

namespace net = boost::asio;

// Waits until no session is left or `deadline` passes; true when none is left.
net::awaitable<bool> sessions_ended(const http::Listener& listener, std::chrono::steady_clock::time_point deadline) {
  net::steady_timer timer(co_await net::this_coro::executor);
  while (listener.active_sessions() > 0 && std::chrono::steady_clock::now() < deadline) {
    timer.expires_after(std::chrono::milliseconds(20));
    co_await timer.async_wait(use_tuple);
  }
  co_return listener.active_sessions() == 0;
}

}  // namespace

net::awaitable<void> drain_then_finish(http::Listener& listener, net::signal_set& signals,
                                       std::chrono::milliseconds close_grace) {
  auto executor = co_await net::this_coro::executor;
  if (!co_await sessions_ended(listener, std::chrono::steady_clock::now() + kDrainDeadline)) {
    log::warn("drain_deadline").num("sessions_closed", static_cast<int64_t>(listener.active_sessions()));
    listener.close_all();
    if (!co_await sessions_ended(listener, std::chrono::steady_clock::now() + close_grace)) {
      log::error("drain_stuck").num("sessions_left", static_cast<int64_t>(listener.active_sessions()));
      static_cast<net::io_context&>(executor.context()).stop();
    }
  }
  signals.cancel();
}

}  // namespace hh::app
