#include "app/serve_signals.h"

#include <pthread.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <csignal>

#include "app/drain.h"
#include "app/reload.h"
#include "app/systemd_notify.h"
#include "common/log.h"
#include "common/thread_name.h"

namespace hh::app {

namespace net = boost::asio;

namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, signal);
  return set;
}

}  // namespace

void block_stop_signals() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void unblock_stop_signals() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

ServeSignals::ServeSignals(HttpFront& front, ServiceWatchdog* watchdog, const config::Settings& startup,
                           const config::Secrets& startup_secrets,
                           std::function<Result<config::Settings>()> reread_settings)
    : front_(front),
      watchdog_(watchdog),
      startup_(startup),
      startup_secrets_(startup_secrets),
      reread_settings_(std::move(reread_settings)),
      signals_(front.io, SIGINT, SIGTERM, SIGHUP),
      reloader_(start_named_thread("hh-reload", [this] { run_reloads(); })) {}

ServeSignals::~ServeSignals() {
  {
    std::lock_guard lock(reload_mutex_);
    reloader_ending_ = true;
  }
  reload_wanted_changed_.notify_one();
  reloader_.join();
}

void ServeSignals::wait() {
  signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (!ec) on_signal(signal);  // an error: cancelled after the drain
  });
}

void ServeSignals::on_signal(int signal) {
  if (signal == SIGHUP) {
    systemd::reloading();
    {
      std::lock_guard lock(reload_mutex_);
      reload_wanted_ = true;
    }
    reload_wanted_changed_.notify_one();
    wait();  // a SIGTERM during a slow reload is taken at once
    return;
  }
  log::info("stopping").str("signal", signal == SIGTERM ? "SIGTERM" : "SIGINT");
  {
    std::lock_guard lock(notify_mutex_);
    stopping_ = true;
    systemd::stopping();
  }
  if (watchdog_) watchdog_->stop();  // its timer would keep io.run() from returning
  front_.refusal_log->stop();        // likewise; what is refused while draining is logged at the end
  front_.alarms->stop();             // likewise
  if (front_.overview) front_.overview->stop();  // likewise
  front_.listener->stop();
  const auto close_grace = std::chrono::milliseconds(startup_.request_deadline_ms) + std::chrono::seconds(1);
  net::co_spawn(front_.io, drain_then_finish(*front_.listener, signals_, close_grace), net::detached);
}

void ServeSignals::run_reloads() {
  std::unique_lock lock(reload_mutex_);
  for (;;) {
    reload_wanted_changed_.wait(lock, [this] { return reload_wanted_ || reloader_ending_; });
    if (reloader_ending_) return;
    reload_wanted_ = false;
    lock.unlock();
    reload_once();
    lock.lock();
  }
}

void ServeSignals::reload_once() {
  {
    std::lock_guard notifying(notify_mutex_);
    if (stopping_) return;
  }
  std::optional<LoadedReload> loaded;
  std::string failure;
  std::vector<std::string> not_applied;
  if (auto settings = reread_settings_()) {
    not_applied = keys_needing_restart(startup_, *settings);
    if (auto files = load_reload(startup_, startup_secrets_, *settings)) {
      loaded = std::move(*files);
      not_applied.insert(not_applied.end(), loaded->secrets_needing_restart.begin(),
                         loaded->secrets_needing_restart.end());
    } else {
      failure = files.error();
    }
  } else {
    // The reason in the line (the log is JSON lines only): the file, line and key.
    failure = settings.error();
    log::error("reload_failed").str("reason", failure + " (keeping the running configuration)");
  }
  std::lock_guard notifying(notify_mutex_);
  // A stop that came while the files were read: the drain runs with what it started with,
  // and after STOPPING=1 there is no READY=1.
  if (stopping_) return;
  if (loaded) apply_reload(std::move(*loaded), front_);
  // Serving either way; `systemctl status` shows whether the reload took, and what in the
  // file waits for a restart.
  std::string status = failure.empty() ? "reloaded" : "reload failed, running configuration kept: " + failure;
  if (!not_applied.empty()) {
    std::string keys;
    for (const std::string& key : not_applied) keys += (keys.empty() ? "" : ", ") + key;
    log::warn("reload_needs_restart").str("keys", keys);
    status += "; changed, applied at the next restart: " + keys;
  }
  systemd::ready(status);
}

}  // namespace hh::app
