#include "app/serve.h"

#include <csignal>
#include <cstdlib>

#include <malloc.h>

#include <system_error>
#include <optional>
#include <thread>

#include "app/follow_ups.h"
#include "app/http_front.h"
#include "app/ingest.h"
#include "app/limits_that_fit.h"
#include "app/processing.h"
#include "app/serve_signals.h"
#include "app/store_settings.h"
#include "app/service_watchdog.h"
#include "app/systemd_notify.h"
#include "app/tls_files.h"
#include "common/http_url.h"
#include "common/log.h"
#include "common/timestamp.h"
#include "common/thread_name.h"
#include "config/secrets.h"
#include "forward/forwarder.h"
#include "receiver/http/listener.h"
#include "receiver/signature/webhook_signature.h"
#include "store/database_location.h"

namespace hh::app {
namespace {

// The writer thread commits and processes on a core of its own; the io threads take the
// rest (one on 2 cores: a second io thread there competes with the writer for a core).
unsigned io_threads(const config::Settings& settings) {
  if (settings.threads > 0) return static_cast<unsigned>(settings.threads);
  return std::max(1u, std::thread::hardware_concurrency() - 1);
}

// A part that failed to open: configuration (error kind `data`) or anything else.
ServeExit failed(const ServeHooks& hooks, const std::string& message, ErrorKind kind) {
  hooks.report_error(message);
  return kind == ErrorKind::data ? ServeExit::bad_config : ServeExit::failure;
}

// Starts what was opened, runs until a signal has drained the server, then stops
// processing, the fetcher and the writer (which commits what is still queued).
ServeExit run(const config::Settings& settings, const ServeHooks& hooks, const config::Secrets& secrets, Ingest& ingest,
              Processing& processing, FollowUps* follow_ups, forward::Forwarder* forwarder, HttpFront& front,
              unsigned threads) {
  // Stopped in this order however run() ends: a thread the system refuses below (a tasks
  // limit) throws, and the parts were then destroyed while the writer thread still ran
  // processing steps on them (a crash under ASan in CI, thread_names_test).
  struct StopInOrder {
    StopInOrder(Processing& p, forward::Forwarder* f, FollowUps* u, Ingest& i)
        : processing(p), forwarder(f), follow_ups(u), ingest(i) {}
    StopInOrder(const StopInOrder&) = delete;
    StopInOrder& operator=(const StopInOrder&) = delete;
    Processing& processing;
    forward::Forwarder* forwarder;
    FollowUps* follow_ups;
    Ingest& ingest;
    ~StopInOrder() {
      processing.stop();                 // a thread of its own finishes its step; else the writer's
      if (forwarder) forwarder->stop();  // what is in flight goes out again after a restart
      if (follow_ups) follow_ups->fetcher->stop();  // before the writer: jobs in flight record their outcome through it
      ingest.writer->stop();                         // commits anything still queued
    }
  };
  ingest.writer->start();
  std::optional<StopInOrder> stop_in_order;
  stop_in_order.emplace(processing, forwarder, follow_ups, ingest);
  if (follow_ups) follow_ups->fetcher->start();  // after the writer: it writes through it
  if (forwarder) forwarder->start();
  front.listener->start();
  front.refusal_log->start();
  front.alarms->start();
  if (front.overview) front.overview->start();
  std::optional<ServiceWatchdog> watchdog;
  if (const auto timeout = systemd::watchdog_timeout()) watchdog.emplace(front.io, *timeout, *ingest.writer);
  ServeSignals signals(front, watchdog ? &*watchdog : nullptr, settings, secrets, hooks.reread_settings);
  signals.wait();
  unblock_stop_signals();  // here, and in the io threads started below (serve_signals.h)

  const auto endpoint = front.listener->local_endpoint();
  const std::string address = host_port(endpoint.address().to_string(), endpoint.port());  // [::1]:8080
  log::info("listening")
      .str("address", address)
      .str("webhook_path", settings.webhook_path)
      .str("database", store::loggable_location(settings.database))
      .num("threads", threads)
      .num("signing_secrets", static_cast<int64_t>(secrets.signing_secrets.size()));
  if (front.console) {
    log::info("console").str("url", std::string(settings.tls.cert_file.empty() ? "http://" : "https://") + address +
                                        "/console/");
  }
  systemd::ready("listening on " + address);
  if (watchdog) watchdog->start();

  std::vector<std::thread> pool;
  // The main thread runs io too, under the process name. Threads the system will not give
  // (a tasks limit) are done without: fewer serve the same listener.
  for (unsigned i = 1; i < threads; ++i) {
    try {
      pool.push_back(start_named_thread("hh-io", [&front] { front.io.run(); }));
    } catch (const std::system_error& e) {
      log::warn("io_threads_not_started")
          .num("threads", static_cast<int64_t>(pool.size() + 1))
          .str("error", e.what());
      break;
    }
  }
  front.io.run();
  for (auto& t : pool) t.join();
  front.blocking.join();
  front.refusal_log->flush();

  stop_in_order.reset();
  log::info("stopped");
  return ServeExit::ok;
}

}  // namespace

void hold_stop_signals() { block_stop_signals(); }

ServeExit serve(const config::Settings& settings, const ServeHooks& hooks) {
  // Until their handler is in place, in every thread started from here. `healthhook serve`
  // holds them already, before it reads the configuration (cli/serve_command.cpp); again
  // here for any other caller.
  block_stop_signals();
  // A log reader that goes away (`serve 2>&1 | head`, a logger that exits) must not end
  // serve at its next log line: the write fails with EPIPE and the line is dropped
  // (common/log.cpp), serving and draining go on. Sockets never raised it (Asio sends with
  // MSG_NOSIGNAL on Linux; libpq blocks SIGPIPE around its own sends).
  std::signal(SIGPIPE, SIG_IGN);
  for (const auto& warning : location_warnings(settings.database)) {
    log::warn(warning.event).str("detail", warning.detail);
  }
  // Request bodies of 1 MiB and more get pages of their own, given back to the system when
  // freed. glibc otherwise raises its mmap threshold to the largest block freed so far, and
  // serves later large bodies from heap pages that stay resident after use: the process
  // would keep the memory of the largest burst of uploads, not of the bodies in flight
  // (max_inflight_body_mib bounds those).
  ::mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
  const size_t max_connections = connections_that_fit(settings.max_connections, outgoing_sockets(settings));
  auto secrets = config::load_secrets(settings);
  if (!secrets) return failed(hooks, secrets.error(), ErrorKind::data);
  auto verifier = signature::Verifier::create(secrets->signing_secrets, settings.timestamp_tolerance_s);
  if (!verifier) return failed(hooks, "signing_secret_files: " + verifier.error(), ErrorKind::data);
  // Before the store: a bad file is refused with nothing created or migrated.
  if (auto loaded = check_tls_files(settings); !loaded) return failed(hooks, loaded.error(), ErrorKind::data);
  // Likewise a listen address another process holds (often a serve already running): said
  // before a database is created. The bind itself comes later, after the store opens.
  {
    boost::asio::io_context probe;
    auto bindable = http::check_listen_address(probe, settings.listen);
    if (!bindable) return failed(hooks, bindable.error(), ErrorKind::data);
    if (*bindable == http::BindCheck::in_use) {
      return failed(hooks, "listen: cannot bind " + settings.listen + ": address already in use", ErrorKind::other);
    }
  }

  // Each part below is destroyed before the ones above it (what it uses).
  auto ingest = open_ingest(settings, *secrets);
  if (!ingest) return failed(hooks, ingest.error(), ErrorKind::other);
  auto follow_ups = open_follow_ups(settings, *secrets, **ingest);
  if (!follow_ups) return failed(hooks, follow_ups.error(), follow_ups.error_kind());
  FollowUps* fetching = follow_ups->get();
  auto processing = start_processing(settings, **ingest, fetching ? fetching->fetcher.get() : nullptr);
  if (!processing) return failed(hooks, processing.error(), ErrorKind::other);
  std::unique_ptr<forward::Forwarder> forwarder;
  if (!settings.forwards.empty()) {
    // The writer's commits: while they grow, forwarding yields the CPU to ingest.
    const store::InboxWriter& writer = *(*ingest)->writer;
    auto created = forward::Forwarder::create(settings, *secrets, unix_now_ms, [&writer] {
      return writer.stats().batches.load(std::memory_order_relaxed);
    });
    if (!created) return failed(hooks, created.error(), created.error_kind());
    forwarder = std::move(*created);
  }
  const unsigned threads = io_threads(settings);
  auto front = open_http_front({.settings = settings,
                                .secrets = *secrets,
                                .verifier = std::move(*verifier),
                                .ingest = **ingest,
                                .processing = **processing,
                                .follow_ups = fetching,
                                .forwarder = forwarder.get(),
                                .threads = threads,
                                .max_connections = max_connections});
  if (!front) return failed(hooks, front.error(), front.error_kind());
  return run(settings, hooks, *secrets, **ingest, **processing, fetching, forwarder.get(),
             **front, threads);
}

}  // namespace hh::app
