#pragma once
// The signals `serve` answers: SIGTERM/SIGINT drain and stop (drain.h); SIGHUP re-reads
// the secrets and the TLS certificate (reload.h). Under systemd each is announced
// (STOPPING=1; RELOADING=1, then READY=1).
#include <boost/asio/signal_set.hpp>
#include <functional>
#include <optional>

#include "app/http_front.h"
#include "app/service_watchdog.h"
#include "config/settings.h"

namespace hh::app {

class ServeSignals {
 public:
  // `reread_settings`: the settings as the file reads now, or why they do not load (logged
  // as reload_failed's reason); then the running ones stay. `watchdog` may be null. Everything
  // referenced must outlive this object.
  ServeSignals(HttpFront& front, ServiceWatchdog* watchdog, const config::Settings& startup,
               std::function<Result<config::Settings>()> reread_settings);

  // Waits for the next signal (again after each SIGHUP) on the front's io_context.
  void wait();

 private:
  void on_signal(int signal);

  HttpFront& front_;
  ServiceWatchdog* watchdog_;
  const config::Settings& startup_;
  std::function<Result<config::Settings>()> reread_settings_;
  boost::asio::signal_set signals_;
};

}  // namespace hh::app
