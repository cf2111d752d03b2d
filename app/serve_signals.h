#pragma once
// The signals `serve` answers: SIGTERM/SIGINT drain and stop (drain.h); SIGHUP re-reads
// the secrets and the TLS certificate (reload.h). Under systemd each is announced
// (STOPPING=1; RELOADING=1, then READY=1).
#include <atomic>
#include <boost/asio/signal_set.hpp>
#include <functional>
#include <mutex>
#include <optional>

#include "app/http_front.h"
#include "app/service_watchdog.h"
#include "config/settings.h"

namespace hh::app {

// SIGINT, SIGTERM and SIGHUP are blocked in every thread serve starts before ServeSignals
// is in place (block_stop_signals() at the start of serve(); threads inherit the mask), and
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
  ServeSignals(HttpFront& front, ServiceWatchdog* watchdog, const config::Settings& startup,
               std::function<Result<config::Settings>()> reread_settings);

  // Waits for the next signal (again after each SIGHUP) on the front's io_context.
  void wait();

 private:
  void on_signal(int signal);
  // A SIGHUP's work: reads the configuration and the files it names, swaps in what they
  // hold, and tells systemd. On the front's blocking pool, never on an io thread: a file
  // that is slow to read (a hung network filesystem) then delays the reload alone, not
  // /healthz, webhooks or the watchdog's keep-alive. One at a time, in signal order.
  void reload_off_io();

  HttpFront& front_;
  ServiceWatchdog* watchdog_;
  const config::Settings& startup_;
  std::function<Result<config::Settings>()> reread_settings_;
  boost::asio::signal_set signals_;
  std::mutex reload_mutex_;             // held by the reload that runs
  std::mutex notify_mutex_;             // orders a reload's READY=1 before STOPPING=1
  std::atomic<bool> stopping_ = false;  // GUARDED_BY(notify_mutex_) for writes: a reload still queued does nothing
};

}  // namespace hh::app
