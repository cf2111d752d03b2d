#pragma once
// The service manager protocol of a Type=notify unit (sd_notify(3)), used by `serve`:
//
//   READY=1       once the store is open and the port bound (systemd then starts units
//                 ordered after us and reports "active")
//   RELOADING=1   at the start of a SIGHUP reload, READY=1 again when it is done
//   STOPPING=1    on SIGTERM/SIGINT, before draining
//   WATCHDOG=1    keep-alive, every half of $WATCHDOG_USEC (service_watchdog.h)
//   STATUS=…      a one-line status shown by `systemctl status`
//
// Outside systemd ($NOTIFY_SOCKET unset) every call does nothing. A failure to send is
// logged once and otherwise ignored: the service manager's view is not worth dying for.
// Thread-safe.
#include <chrono>
#include <optional>
#include <string_view>

namespace hh::app::systemd {

void ready(std::string_view status);
void reloading();
void stopping();
void watchdog();

// The keep-alive deadline from $WATCHDOG_USEC, when it is meant for this process
// ($WATCHDOG_PID unset or equal to our pid); nullopt when there is no watchdog.
std::optional<std::chrono::microseconds> watchdog_timeout();

}  // namespace hh::app::systemd
