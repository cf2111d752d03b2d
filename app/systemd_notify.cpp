#include "app/systemd_notify.h"

#include <systemd/sd-daemon.h>

#include <atomic>
#include <cstring>
#include <string>

#include "common/log.h"

namespace hh::app::systemd {
namespace {

std::atomic<bool> g_failure_logged{false};

void send(const std::string& state) {
  // unset_environment = 0: WATCHDOG_USEC must stay readable after READY=1.
  const int rc = sd_notify(0, state.c_str());
  if (rc < 0 && !g_failure_logged.exchange(true)) {
    log::warn("sd_notify_failed").str("error", std::strerror(-rc));
  }
}

// STATUS= is one line; a newline would start another assignment.
std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

}  // namespace

void ready(std::string_view status) { send("READY=1\nSTATUS=" + one_line(status)); }
void reloading() { send("RELOADING=1\nSTATUS=reloading"); }
void stopping() { send("STOPPING=1\nSTATUS=stopping: finishing requests in flight"); }
void watchdog() { send("WATCHDOG=1"); }

std::optional<std::chrono::microseconds> watchdog_timeout() {
  uint64_t usec = 0;
  // > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID is unset or ours.
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec);
}

}  // namespace hh::app::systemd
