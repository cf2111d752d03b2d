#include "app/service_watchdog.h"

#include <boost/asio/post.hpp>

#include "app/systemd_notify.h"
#include "common/log.h"

namespace hh::app {

namespace net = boost::asio;

ServiceWatchdog::ServiceWatchdog(net::io_context& io, std::chrono::microseconds timeout, store::InboxWriter& writer)
    : strand_(net::make_strand(io)), timer_(strand_), interval_(timeout / 2), writer_(writer) {}

void ServiceWatchdog::start() {
  log::info("watchdog").num("interval_ms", std::chrono::duration_cast<std::chrono::milliseconds>(interval_).count());
  net::post(strand_, [this] { tick(); });
}

void ServiceWatchdog::stop() {
  net::post(strand_, [this] {
    stopped_ = true;
    timer_.cancel();
  });
}

void ServiceWatchdog::tick() {
  if (stopped_) return;
  if (writer_answered_->exchange(false)) {
    writer_warning_logged_ = false;
    systemd::watchdog();
    writer_.post([answered = writer_answered_] { answered->store(true); });
  } else if (!writer_warning_logged_) {
    // Not answered within one interval: withhold the ping. systemd restarts us if this
    // lasts until WatchdogSec runs out; a slow commit that finishes sooner costs nothing.
    writer_warning_logged_ = true;
    log::warn("watchdog_withheld").str("reason", "the inbox writer thread has not answered for one interval");
  }
  timer_.expires_after(interval_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) tick();
  });
}

}  // namespace hh::app
