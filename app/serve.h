#pragma once
// healthhook serve, the composition root: receiver + processor + fetcher in one process
// (spec §1). Each part is opened by a function of its own (ingest.h, follow_ups.h,
// processing.h, http_front.h); this file decides only their order, which is also the
// reverse order in which they are destroyed.
//
// Start-up fails fast with one line (ServeExit::bad_config for configuration and secrets,
// ::failure for the store or the port). SIGTERM/SIGINT: stop accepting, let requests in
// flight finish (their commits included), commit what is queued, return ::ok. SIGHUP:
// re-read the signing secrets, the tokens (read API, /metrics, the console's admin), the
// log level and the TLS certificate and key (reload.h).
// Under systemd (Type=notify): READY=1 once the store is open and the port bound,
// RELOADING=1/READY=1 around a reload, STOPPING=1 on SIGTERM, WATCHDOG=1 keep-alives
// (systemd_notify.h, service_watchdog.h).
#include <functional>
#include <optional>
#include <string_view>

#include "common/result.h"
#include "config/settings.h"

namespace hh::app {

enum class ServeExit { ok, failure, bad_config };

struct ServeHooks {
  // SIGHUP: the settings as the file reads now (the log level applied), or why they do not
  // load.
  std::function<Result<config::Settings>()> reread_settings;
  // A start-up failure, in one line.
  std::function<void(std::string_view)> report_error;
};

ServeExit serve(const config::Settings& settings, const ServeHooks& hooks);

// Holds SIGTERM, SIGINT and SIGHUP (blocked in the calling thread, and so in every thread it
// starts) until serve()'s handler is in place, which takes them then: called first, before
// the configuration is read, a stop or reload sent while serve starts waits for it instead
// of ending the process by the signal's default action. serve() holds them too.
void hold_stop_signals();

}  // namespace hh::app
