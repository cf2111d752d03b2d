// healthhook serve: receiver + processor + fetcher in one process (spec §1).
//
// Start-up fails fast with a clear message (exit 2 for configuration and secrets, 1 for
// the store or the port). SIGTERM/SIGINT: stop accepting, let requests in flight finish
// (their commits included), commit what is queued, exit 0. SIGHUP: re-read the signing
// secrets, the log level and the TLS certificate and key.
// Under systemd (Type=notify): READY=1 once the store is open and the port bound,
// RELOADING=1/READY=1 around a reload, STOPPING=1 on SIGTERM, WATCHDOG=1 keep-alives
// (cli/systemd_notify.h, cli/service_watchdog.h).
#include <malloc.h>

#include <csignal>
#include <thread>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "metrics/pipeline_metrics.h"
#include "cli/service_watchdog.h"
#include "cli/systemd_notify.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "config/secrets.h"
#include "api/read_api.h"
#include "receiver/http/body_budget.h"
#include "receiver/http/fd_limit.h"
#include "receiver/http/health_endpoints.h"
#include "receiver/http/refusals.h"
#include "metrics/ingest_metrics.h"
#include "receiver/http/listener.h"
#include "metrics/metrics_endpoint.h"
#include "receiver/http/server_tls.h"
#include "metrics/store_metrics.h"
#include "receiver/http/webhook_endpoint.h"
#include "store/inbox_writer.h"
#include "processor/processor.h"
#include "fetcher/fetcher.h"

namespace hh::cli {
namespace {

namespace net = boost::asio;

// SIGTERM: requests in flight get this long to finish; then every connection is closed,
// and the sessions still waiting for a commit end at their request deadline.
constexpr auto kDrainDeadline = std::chrono::seconds(10);
// Threads for work that may block (database reads of /metrics and the read API).
constexpr int kBlockingThreads = 2;

struct ServeFlags {
  SettingsFlags settings;
};

// SIGHUP: re-read what can change safely while running: the log level (applied by
// load_settings_or_report as soon as the file parses), the signing secrets and the TLS
// certificate and key. Secrets and certificate are all loaded and checked before any is
// swapped, so a bad file changes none of them. Turning TLS on or off, and every other
// setting, needs a restart.
void reload(const config::Settings& startup_settings, const SettingsFlags& flags, http::WebhookEndpoint& webhook,
            http::Listener& listener) {
  auto settings = load_settings_or_report(flags, "serve");  // also applies log_level
  if (!settings) {
    log::error("reload_failed").str("reason", "configuration invalid; keeping the running one");
    return;
  }
  auto secrets = config::load_secrets(*settings);
  if (!secrets) {
    log::error("reload_failed").str("reason", secrets.error());
    return;
  }
  auto verifier = signature::Verifier::create(secrets->signing_secrets, startup_settings.timestamp_tolerance_s);
  if (!verifier) {
    log::error("reload_failed").str("reason", verifier.error());
    return;
  }
  const bool tls_at_start = !startup_settings.tls.cert_file.empty();
  if (tls_at_start != !settings->tls.cert_file.empty()) {
    log::warn("reload_tls_unchanged").str("reason", "turning TLS on or off needs a restart");
  }
  std::optional<http::ServerCertificate> certificate;
  if (tls_at_start && !settings->tls.cert_file.empty()) {
    auto loaded = http::load_server_certificate(settings->tls.cert_file, settings->tls.key_file, settings->base_dir);
    if (!loaded) {
      log::error("reload_failed").str("reason", loaded.error());
      return;
    }
    certificate = std::move(*loaded);
  }

  webhook.set_verifier(std::move(*verifier));
  if (certificate) {
    listener.set_tls(certificate->context);  // new connections; open ones keep theirs
    log::info("tls_reloaded")
        .str("subject", certificate->subject)
        .str("serial", certificate->serial)
        .str("not_after", certificate->not_after);
  }
  log::info("reloaded").num("signing_secrets", static_cast<int64_t>(secrets->signing_secrets.size()));
}

// Waits until no session is left or `deadline` passes; true when none is left.
net::awaitable<bool> sessions_ended(const http::Listener& listener, std::chrono::steady_clock::time_point deadline) {
  net::steady_timer timer(co_await net::this_coro::executor);
  while (listener.active_sessions() > 0 && std::chrono::steady_clock::now() < deadline) {
    timer.expires_after(std::chrono::milliseconds(20));
    co_await timer.async_wait(use_tuple);
  }
  co_return listener.active_sessions() == 0;
}

// The drain outlives every session: first they finish what they are doing, then their
// connections are closed and the last of them end (at the latest at their request
// deadline). io.stop() only if one still does not end (a bug): sessions share nothing
// with the listener that its destruction would free (listener.h).
net::awaitable<void> drain_then_finish(http::Listener& listener, net::signal_set& signals,
                                       std::chrono::milliseconds close_grace) {
  auto executor = co_await net::this_coro::executor;
  if (!co_await sessions_ended(listener, std::chrono::steady_clock::now() + kDrainDeadline)) {
    log::warn("drain_deadline").num("sessions_closed", static_cast<int64_t>(listener.active_sessions()));
    listener.close_all();
    if (!co_await sessions_ended(listener, std::chrono::steady_clock::now() + close_grace)) {
      log::error("drain_stuck").num("sessions_left", static_cast<int64_t>(listener.active_sessions()));
      static_cast<net::io_context&>(executor.context()).stop();
    }
  }
  signals.cancel();
}

// max_connections lowered to what the file-descriptor limit allows (spec §2: a warning,
// never a refusal to start); the soft limit is raised to the hard one first.
size_t connections_that_fit(int64_t configured) {
  const http::DescriptorLimit limit = http::raise_descriptor_limit();
  if (!limit.error.empty()) log::warn("nofile_limit").str("error", limit.error);
  const uint64_t fit = http::connections_that_fit(limit);
  if (static_cast<uint64_t>(configured) <= fit) return static_cast<size_t>(configured);
  log::warn("max_connections_lowered")
      .num("configured", configured)
      .num("max_connections", static_cast<int64_t>(fit))
      .num("nofile_limit", static_cast<int64_t>(limit.soft))
      .str("reason", "the file-descriptor limit is too low; raise LimitNOFILE (ulimit -n)");
  return static_cast<size_t>(fit);
}

// max_body_bytes lowered to what one inbox row can hold (with the request's headers).
uint64_t body_limit_that_fits(const config::Settings& settings, const store::Inbox& inbox) {
  const uint64_t configured = static_cast<uint64_t>(settings.max_body_bytes);
  const uint64_t headers = static_cast<uint64_t>(settings.max_header_bytes);
  const uint64_t row = inbox.max_delivery_bytes();
  if (configured + headers <= row) return configured;
  const uint64_t fit = row > headers ? row - headers : 0;
  log::warn("max_body_bytes_lowered")
      .num("configured", static_cast<int64_t>(configured))
      .num("max_body_bytes", static_cast<int64_t>(fit))
      .str("reason", "larger than the store can hold in one row");
  return fit;
}

int run_serve(const ServeFlags& flags) {
  // Request bodies of 1 MiB and more get pages of their own, given back to the system when
  // freed. glibc otherwise raises its mmap threshold to the largest block freed so far, and
  // serves later large bodies from heap pages that stay resident after use: the process
  // would keep the memory of the largest burst of uploads, not of the bodies in flight
  // (max_inflight_body_mib bounds those).
  ::mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
  auto settings = load_settings_or_report(flags.settings, "serve");
  if (!settings) return kExitBadConfig;
  const size_t max_connections = connections_that_fit(settings->max_connections);
  auto secrets = config::load_secrets(*settings);
  if (!secrets) {
    report_error("serve", secrets.error());
    return kExitBadConfig;
  }
  auto verifier = signature::Verifier::create(secrets->signing_secrets, settings->timestamp_tolerance_s);
  if (!verifier) {
    report_error("serve", "signing_secret_files: " + verifier.error());
    return kExitBadConfig;
  }

  // Declared first: everything opened from it below must be destroyed before it.
  auto store = open_store_or_report(*settings, "serve");
  if (!store) return kExitFailure;
  auto inbox = store->open_inbox();
  if (!inbox) {
    report_error("serve", inbox.error());
    return kExitFailure;
  }
  store::WriterOptions writer_options;
  writer_options.high_water = static_cast<size_t>(settings->queue_high_water);
  writer_options.disk_path = store->local_folder();
  writer_options.min_free_disk_bytes = static_cast<uint64_t>(settings->min_free_disk_mib) * 1024 * 1024;
  store::InboxWriter writer(**inbox, writer_options);
  metrics::InboxCommitMetrics commit_metrics;
  writer.on_commit([&commit_metrics](size_t batch, double seconds, bool ok) {
    commit_metrics.observe(batch, seconds, ok);
  });
  // synchronous = "full": each batch's acks wait for a sync on a thread of its own
  // (store/durability.h: CommitSync) rather than inside the commit, so the writer applies
  // the batch and commits the next one meanwhile. The write connection itself then
  // commits without a sync, before the processor reads its level (its steps relax only a
  // synced level). Without the sync thread (it cannot be started), each commit syncs.
  if (settings->synchronous == "full") {
    auto wal_sync = store->sync_commits_on_thread();
    if (wal_sync) {
      writer.sync_commits_with(std::move(*wal_sync));
    } else {
      log::warn("wal_sync_not_started").str("error", wal_sync.error());
    }
  }

  // Follow-up fetcher (spec §5), only with an API key. Its job queue lives on the write
  // connection, so it is prepared before the writer thread owns that connection.
  metrics::FetchMetrics fetch_metrics;  // per-request outcomes and latency, for /metrics; outlives the fetcher
  std::unique_ptr<store::JobQueue> job_queue;
  std::unique_ptr<fetcher::Fetcher> follow_ups;
  if (!secrets->api_key.empty()) {
    auto jobs = store->open_job_queue();
    if (!jobs) {
      report_error("serve", jobs.error());
      return kExitFailure;
    }
    job_queue = std::move(*jobs);
    fetcher::FetcherOptions fetch_options;
    fetch_options.database = settings->database;
    fetch_options.service = settings->service;
    fetch_options.api_key = secrets->api_key;
    fetch_options.base_dir = settings->base_dir;
    fetch_options.observe_request = [&fetch_metrics](std::string_view outcome, double seconds) {
      fetch_metrics.record(outcome, seconds);
    };
    auto created = fetcher::Fetcher::create(std::move(fetch_options), writer, **inbox, *job_queue);
    if (!created) {
      report_error("serve", created.error());
      return kExitBadConfig;
    }
    follow_ups = std::move(*created);
  }

  // The processor applies the inbox between ingest commits, on the writer thread, in long
  // steps that give way to waiting deliveries (yield_to below).
  auto processing = store->open_processing();
  if (!processing) {
    report_error("serve", processing.error());
    return kExitFailure;
  }
  auto event_processor = processor::Processor::create(std::move(*processing), processor::kCatchUpSteps);
  if (!event_processor) {
    report_error("serve", event_processor.error());
    return kExitFailure;
  }
  if (follow_ups) (*event_processor)->on_jobs_queued([fetcher = follow_ups.get()] { fetcher->wake(); });
  (*event_processor)->yield_to([&writer] { return writer.queue_depth() > 0; });
  writer.add_background(event_processor->get());
  // Checkpoints run on a thread of their own, not inside the writer's commits, where they
  // held up the acks of the batch that crossed the checkpoint threshold (reading the log,
  // writing and syncing the database). Without it (e.g. no second connection can be
  // opened), the backend's own checkpoints stay on: slower acks, nothing else changes
  // (docs/decisions/002-checkpointer-thread.md). The writer finishes each checkpoint
  // between its batches (so the log rewinds).
  auto checkpointer = store->start_checkpointer();
  if (checkpointer) {
    writer.add_background(checkpointer->get());
  } else {
    log::warn("checkpointer_not_started").str("error", checkpointer.error());
  }

  // The writer thread commits and processes on a core of its own; the io threads take the
  // rest (one on 2 cores: a second io thread there competes with the writer for a core).
  const unsigned threads = settings->threads > 0 ? static_cast<unsigned>(settings->threads)
                                                 : std::max(1u, std::thread::hardware_concurrency() - 1);
  // Declared before the io_context: what sessions use must outlive their frames, which the
  // io_context destroys last (listener.h).
  http::Refusals refusals;
  http::BodyBudget body_budget(static_cast<uint64_t>(settings->max_inflight_body_mib) * 1024 * 1024);
  http::BlockingPool blocking(kBlockingThreads);
  net::io_context io(static_cast<int>(threads));

  http::Router router;
  http::WebhookEndpoint webhook(writer, std::move(*verifier),
                                {.retry_after_seconds = settings->retry_after_s,
                                 .request_deadline = std::chrono::milliseconds(settings->request_deadline_ms),
                                 .refusals = &refusals});
  webhook.mount(router, settings->webhook_path);
  http::add_health_endpoints(router, writer);

  // Read API under /v1/ (spec §7), only when read_api.token_file is set (api/read_api.h).
  std::unique_ptr<api::ReadApi> read_api;
  if (!secrets->read_api_token.empty()) {
    auto created = api::ReadApi::create(settings->database, secrets->read_api_token);
    if (!created) {
      report_error("serve", created.error());
      return kExitFailure;
    }
    read_api = std::move(*created);
    read_api->mount(router, blocking);
  }

  // GET /metrics (Prometheus). Components plug in with one metrics_endpoint.add(...) each.
  metrics::MetricsEndpoint metrics_endpoint;
  metrics_endpoint.add(metrics::ingest_metrics({.webhook = &webhook.stats(),
                                    .writer = &writer,
                                    .commits = &commit_metrics,
                                    .queue_high_water = static_cast<uint64_t>(settings->queue_high_water),
                                    .disk_path = writer_options.disk_path,
                                    .min_free_disk_bytes = writer_options.min_free_disk_bytes,
                                    .refusals = &refusals}));
  auto store_metrics = metrics::StoreMetrics::open(settings->database);
  if (!store_metrics) {
    report_error("serve", store_metrics.error());
    return kExitFailure;
  }
  metrics_endpoint.add([reads = store_metrics->get()](metrics::PrometheusText& out) { reads->collect(out); });
  metrics_endpoint.add(metrics::processor_metrics(**event_processor));
  if (checkpointer) metrics_endpoint.add(metrics::checkpointer_metrics(**checkpointer));
  if (follow_ups) metrics_endpoint.add(metrics::fetcher_metrics(*follow_ups, fetch_metrics));
  metrics_endpoint.install(router, blocking, secrets->metrics_token);

  http::SessionLimits limits;
  limits.max_body_bytes = body_limit_that_fits(*settings, **inbox);
  limits.max_header_bytes = static_cast<uint32_t>(settings->max_header_bytes);
  limits.idle_timeout = std::chrono::seconds(settings->idle_timeout_s);
  limits.header_timeout = std::chrono::seconds(settings->header_timeout_s);
  limits.body_timeout = std::chrono::seconds(settings->body_timeout_s);
  limits.retry_after_seconds = settings->retry_after_s;
  limits.refusals = &refusals;
  limits.body_budget = &body_budget;
  http::Listener listener(io, threads, router, limits,
                          {.max_connections = max_connections,
                           .max_connections_per_ip = static_cast<size_t>(settings->max_connections_per_ip)});
  http::RefusalLog refusal_log(io, refusals, std::chrono::seconds(settings->refusal_log_interval_s));
  if (!settings->tls.cert_file.empty()) {
    auto certificate =
        http::load_server_certificate(settings->tls.cert_file, settings->tls.key_file, settings->base_dir);
    if (!certificate) {
      report_error("serve", certificate.error());
      return kExitBadConfig;
    }
    listener.set_tls(certificate->context);
    log::info("tls")
        .str("subject", certificate->subject)
        .str("serial", certificate->serial)
        .str("not_after", certificate->not_after);
  }
  if (auto listening = listener.listen(settings->listen); !listening) {
    report_error("serve", listening.error());
    return kExitFailure;
  }

  writer.start();
  if (follow_ups) follow_ups->start();  // after the writer: it writes through it
  listener.start();
  refusal_log.start();

  std::optional<ServiceWatchdog> watchdog;
  if (const auto timeout = systemd::watchdog_timeout()) watchdog.emplace(io, *timeout, writer);

  net::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
  std::function<void()> wait_for_signal;
  wait_for_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& ec, int signal) {
      if (ec) return;  // cancelled after the drain
      if (signal == SIGHUP) {
        systemd::reloading();
        reload(*settings, flags.settings, webhook, listener);
        systemd::ready("reloaded");
        wait_for_signal();
        return;
      }
      log::info("stopping").str("signal", signal == SIGTERM ? "SIGTERM" : "SIGINT");
      systemd::stopping();
      if (watchdog) watchdog->stop();  // its timer would keep io.run() from returning
      refusal_log.stop();              // likewise; what is refused while draining is logged at the end
      listener.stop();
      const auto close_grace = std::chrono::milliseconds(settings->request_deadline_ms) + std::chrono::seconds(1);
      net::co_spawn(io, drain_then_finish(listener, signals, close_grace), net::detached);
    });
  };
  wait_for_signal();

  const auto endpoint = listener.local_endpoint();
  log::info("listening")
      .str("address", endpoint.address().to_string() + ":" + std::to_string(endpoint.port()))
      .str("webhook_path", settings->webhook_path)
      .str("database", settings->database)
      .num("threads", threads)
      .num("signing_secrets", static_cast<int64_t>(secrets->signing_secrets.size()));
  systemd::ready("listening on " + endpoint.address().to_string() + ":" + std::to_string(endpoint.port()));
  if (watchdog) watchdog->start();

  std::vector<std::thread> pool;
  // The main thread runs io too, under the process name.
  for (unsigned i = 1; i < threads; ++i) pool.push_back(start_named_thread("hh-io", [&io] { io.run(); }));
  io.run();
  for (auto& t : pool) t.join();
  blocking.join();
  refusal_log.flush();

  if (follow_ups) follow_ups->stop();  // before the writer: jobs in flight record their outcome through it
  writer.stop();  // commits anything still queued
  log::info("stopped");
  return kExitOk;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  auto* command = app.add_subcommand("serve", "Receive webhooks, process them, fetch follow-ups");
  add_settings_flags(*command, flags->settings);
  command->callback([flags, &exit_code] { exit_code = run_serve(*flags); });
}

}  // namespace hh::cli
