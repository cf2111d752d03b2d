#pragma once
// The systemd watchdog keep-alive (WatchdogSec= in the unit): WATCHDOG=1 at half of
// $WATCHDOG_USEC, from a timer on the io_context, and only while the writer thread answers
// too. Each tick posts a heartbeat task to the inbox writer; the next tick pings only if
// that task has run. So a stuck event loop (no timer) or a stuck writer thread (no
// heartbeat: nothing gets committed) stops the pings, and systemd kills and restarts us.
//
// Lifetime: `io` and `writer` must outlive the watchdog; the heartbeat state is shared
// with the posted tasks, so the writer may run one after the watchdog is gone.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <atomic>
#include <chrono>
#include <memory>

#include "store/inbox_writer.h"

namespace hh::app {

class ServiceWatchdog {
 public:
  ServiceWatchdog(boost::asio::io_context& io, std::chrono::microseconds timeout, store::InboxWriter& writer);
  ServiceWatchdog(const ServiceWatchdog&) = delete;
  ServiceWatchdog& operator=(const ServiceWatchdog&) = delete;

  // Pings now, then every timeout/2.
  void start();
  // Thread-safe. Cancels the timer so that the io_context can run out of work on stop.
  void stop();

 private:
  void tick();

  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::steady_timer timer_;  // used on strand_ only
  const std::chrono::microseconds interval_;
  store::InboxWriter& writer_;
  std::shared_ptr<std::atomic<bool>> writer_answered_ = std::make_shared<std::atomic<bool>>(true);
  bool stopped_ = false;             // on strand_ only
  bool writer_warning_logged_ = false;
};

}  // namespace hh::app
