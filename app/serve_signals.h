#pragma once
// The signals `serve` answers: SIGTERM/SIGINT drain and stop (drain.h); SIGHUP re-reads
// the secrets, the tokens and the TLS certificate (reload.h). Under systemd each is announced
// (STOPPING=1; RELOADING=1, then READY=1).
#include <boost/asio/signal_set.hpp>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "app/http_front.h"
#include "app/service_watchdog.h"
#include "config/secrets.h"
#include "config/settings.h"

namespace hh::app {

// SIGINT, SIGTERM and SIGHUP are blocked in every thread serve starts before ServeSignals
// is in place (hold_stop_signals() first thing in main() for `healthhook serve`, before the
// command line is parsed, and block_stop_signals() at the start of serve(); threads inherit
// the mask), and
// unblocked in the main thread once it is, before it starts the other io threads. So they are
// taken by a thread that runs the handler's io_context, not by the writer or a worker parked
// in a wait (ThreadSanitizer's runtime held a SIGHUP delivered to such a thread for 20 s in
// CI), and one that arrives during start-up waits for the handler instead of ending the
// process (SIGHUP's default action).
void block_stop_signals();
void unblock_stop_signals();

class ServeSignals {
 public:
  // `reread_settings`: the settings as the file reads now, or why they do not load (logged
  // as reload_failed's reason); then the running ones stay. `watchdog` may be null. Everything
  // referenced must outlive this object.
  // `startup_secrets`: what the files held at start, to say which of those a reload does not
  // apply have changed.
  ServeSignals(HttpFront& front, ServiceWatchdog* watchdog, const config::Settings& startup,
               const config::Secrets& startup_secrets, std::function<Result<config::Settings>()> reread_settings);

  // Waits for the next signal (again after each SIGHUP) on the front's io_context.
  void wait();

 // Waits for a reload under way: its reads end unless a filesystem never answers (then the
  // drain is done and every delivery committed, and systemd's TimeoutStopSec ends it).
  ~ServeSignals();

 private:
  void on_signal(int signal);
  // The reloader thread: a reload per SIGHUP, SIGHUPs that come during one taken together
  // by the next (the file as it reads then), until the object goes.
  void run_reloads();
  // A SIGHUP's work: reads the configuration and the files it names, swaps in what they
  // hold unless serve is stopping by then, and tells systemd. On a thread of its own, never
  // on an io thread or the blocking pool: a file that is slow to read (a hung network
  // filesystem) delays the reload alone, not /healthz, webhooks, the watchdog's keep-alive,
  // /metrics or the read API, and a stop is taken meanwhile.
  void reload_once();

  HttpFront& front_;
  ServiceWatchdog* watchdog_;
  const config::Settings& startup_;
  const config::Secrets& startup_secrets_;
  std::function<Result<config::Settings>()> reread_settings_;
  boost::asio::signal_set signals_;
  std::mutex notify_mutex_;  // orders a reload's apply and READY=1 before STOPPING=1
  bool stopping_ = false;    // GUARDED_BY(notify_mutex_)
  std::mutex reload_mutex_;
  std::condition_variable reload_wanted_changed_;
  bool reload_wanted_ = false;   // GUARDED_BY(reload_mutex_): a SIGHUP not yet taken
  bool reloader_ending_ = false;  // GUARDED_BY(reload_mutex_)
  std::thread reloader_;          // last: started once the rest is in place
};

}  // namespace hh::app
