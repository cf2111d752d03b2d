#pragma once
// SIGTERM/SIGINT in `serve`: stop accepting, let requests in flight finish (their commits
// included), then close what is left.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>
#include <chrono>

#include "receiver/http/listener.h"

namespace hh::app {

// Requests in flight get this long to finish; then every connection is closed, and the
// sessions still waiting for a commit end at their request deadline.
inline constexpr auto kDrainDeadline = std::chrono::seconds(10);

// The drain outlives every session: first they finish what they are doing, then their
// connections are closed and the last of them end (at the latest after `close_grace`).
// io.stop() only if one still does not end (a bug): sessions share nothing with the
// listener that its destruction would free (listener.h). Cancels `signals` at the end.
boost::asio::awaitable<void> drain_then_finish(http::Listener& listener, boost::asio::signal_set& signals,
                                               std::chrono::milliseconds close_grace);

}  // namespace hh::app
