#include "app/http_front.h"

#include "app/certificate_validity.h"
#include "app/serve_console_actions.h"
#include "app/limits_that_fit.h"
#include "common/log.h"
#include "common/timestamp.h"
#include "metrics/ingest_metrics.h"
#include "metrics/pipeline_metrics.h"
#include "receiver/http/health_endpoints.h"
#include "receiver/http/server_tls.h"
#include "store/unfinished_rebuild.h"

namespace hh::app {
namespace {

// Threads for work that may block (database reads of /metrics and the read API).
constexpr unsigned kBlockingThreads = 2;

// Derived tables an interrupted rebuild left incomplete, being re-derived: /readyz's reason,
// the read API's 503 (store/unfinished_rebuild.h); "" once whole.
http::ReadinessCheck tables_incomplete(const Processing& processing) {
  return [&processing]() -> std::string {
    return processing.unfinished_rebuild() > 0 ? std::string(store::kRebuildUnfinishedServing) : std::string();
  };
}

// The store as the listener's reads open it: every wait for a PostgreSQL server bounded by
// `reply_timeout` (store/database_location.h), so that a server that stopped answering
// costs a read API page or a scrape that long, then a 503 or a scrape without the
// database's figures (decision 080).
store::Database read_side(const store::Database& database, std::chrono::milliseconds reply_timeout) {
  store::Database bounded = database;
  bounded.reply_timeout = reply_timeout;
  return bounded;
}

std::vector<std::string> team_ids(const config::ServiceSettings& service) {
  std::vector<std::string> ids;
  for (const auto& team : service.teams) ids.push_back(team.team_id);
  return ids;
}

Result<void> mount_endpoints(HttpFront& front, const FrontParts& parts) {
  const config::Settings& settings = parts.settings;
  front.webhook = std::make_unique<http::WebhookEndpoint>(
      *parts.ingest.writer, parts.verifier,
      http::WebhookOptions{.retry_after_seconds = settings.retry_after_s,
                           .request_deadline = std::chrono::milliseconds(settings.request_deadline_ms),
                           .refusals = &front.refusals,
                           .teams = team_ids(settings.service)});
  front.webhook->mount(front.router, settings.webhook_path);
  // Not ready while an interrupted rebuild's tables are re-derived, and the read API
  // refuses rather than answer from them.
  http::add_health_endpoints(front.router, *parts.ingest.writer, tables_incomplete(parts.processing));
  // Read API under /v1/ (spec §7), only when read_api.token_file is set (api/read_api.h).
  if (!parts.secrets.read_api_token.empty()) {
    auto created = api::ReadApi::create(
        read_side(parts.ingest.database, std::chrono::milliseconds(settings.request_deadline_ms)),
        parts.secrets.read_api_token, settings.retry_after_s);
    if (!created) return fail(ErrorKind::other, created.error());
    front.read_api = std::move(*created);
    std::vector<std::string> destinations;
    for (const auto& f : settings.forwards) destinations.push_back(f.name);
    front.read_api->set_forward_destinations(std::move(destinations));
    front.read_api->refuse_while(tables_incomplete(parts.processing));
    front.read_api->mount(front.router, front.blocking);
  }
  return {};
}

// GET /metrics (Prometheus). Components plug in with one metrics_endpoint.add(...) each.
Result<void> mount_metrics(HttpFront& front, const FrontParts& parts) {
  const config::Settings& settings = parts.settings;
  const Ingest& ingest = parts.ingest;
  front.metrics_endpoint.add(metrics::ingest_metrics({.webhook = &front.webhook->stats(),
                                                      .writer = ingest.writer.get(),
                                                      .commits = &ingest.commit_metrics,
                                                      .queue_high_water = static_cast<uint64_t>(settings.queue_high_water),
                                                      .disk_path = ingest.writer_options.disk_path,
                                                      .min_free_disk_bytes = ingest.writer_options.min_free_disk_bytes,
                                                      .refusals = &front.refusals,
                                                      .also_ready = tables_incomplete(parts.processing)}));
  // Half the request deadline: a scrape that meets a database not answering is answered,
  // without the database's figures, well within Prometheus's default scrape_timeout (10 s,
  // the default request_deadline_ms).
  auto store_metrics =
      metrics::StoreMetrics::open(read_side(ingest.database, std::chrono::milliseconds(settings.request_deadline_ms / 2)));
  if (!store_metrics) return fail(ErrorKind::other, store_metrics.error());
  front.store_metrics = std::move(*store_metrics);
  front.metrics_endpoint.add([reads = front.store_metrics.get()](metrics::PrometheusText& out) { reads->collect(out); });
  std::vector<const processor::Processor*> processors;
  for (const auto& p : parts.processing.processors) processors.push_back(p.get());
  front.metrics_endpoint.add(metrics::processor_metrics(std::move(processors)));
  if (parts.processing.checkpointer) {
    front.metrics_endpoint.add(metrics::checkpointer_metrics(*parts.processing.checkpointer));
  }
  if (parts.processing.body_retention) {
    front.metrics_endpoint.add(metrics::retention_metrics(*parts.processing.body_retention));
  }
  if (parts.follow_ups) {
    front.metrics_endpoint.add(metrics::fetcher_metrics(*parts.follow_ups->fetcher, parts.follow_ups->fetch_metrics));
  }
  if (parts.forwarder) front.metrics_endpoint.add(metrics::forward_metrics(*parts.forwarder));
  if (!settings.tls.cert_file.empty()) {
    front.metrics_endpoint.add([&not_after = front.tls_not_after_s](metrics::PrometheusText& out) {
      out.gauge("healthhook_tls_certificate_expiry_timestamp_seconds",
                "The listener's TLS certificate's notAfter (Unix seconds): it has expired when below time()",
                not_after.load(std::memory_order_relaxed));
    });
  }
  front.metrics_endpoint.install(front.router, front.blocking, parts.secrets.metrics_token);
  return {};
}

// The console under /console/ (console/console_routes.h), only with console.enabled (which
// needs the read API: config validation).
void mount_console(HttpFront& front, const FrontParts& parts) {
  const config::Settings& settings = parts.settings;
  if (!settings.console.enabled || !front.read_api) return;
  front.overview = std::make_unique<console::OverviewHistory>(
      front.io, front.blocking, [&endpoint = front.metrics_endpoint] { return endpoint.render(); }, unix_now_ms);
  if (!parts.secrets.console_admin_token.empty()) {
    front.console_actions = std::make_unique<ServeConsoleActions>(parts.ingest.database, settings, parts.secrets);
  }
  console::ConsoleOptions options;
  options.read_token = parts.secrets.read_api_token;
  options.admin_token = parts.secrets.console_admin_token;
  options.policy.lifetime = std::chrono::hours(settings.console.session_hours);
  options.secure_cookie = !settings.tls.cert_file.empty();
  options.refusals = &front.refusals;
  front.console = std::make_unique<console::Console>(std::move(options), *front.read_api, front.blocking,
                                                     *front.overview, front.console_actions.get(), unix_now_ms);
  front.console->mount(front.router);
}

http::SessionLimits session_limits(HttpFront& front, const FrontParts& parts) {
  const config::Settings& settings = parts.settings;
  http::SessionLimits limits;
  limits.max_body_bytes = front.max_body_bytes;
  limits.max_header_bytes = static_cast<uint32_t>(settings.max_header_bytes);
  limits.idle_timeout = std::chrono::seconds(settings.idle_timeout_s);
  limits.header_timeout = std::chrono::seconds(settings.header_timeout_s);
  limits.body_timeout = std::chrono::seconds(settings.body_timeout_s);
  limits.retry_after_seconds = settings.retry_after_s;
  limits.delivery_path = settings.webhook_path;
  limits.refusal_delay = std::chrono::milliseconds(settings.refusal_delay_ms);
  limits.refusals = &front.refusals;
  limits.body_budget = &front.body_budget;
  limits.drop_allowance = &front.drop_allowance;
  return limits;
}

// What the bodies of one client not yet proven may hold of the in-flight budget
// (connection_table.h): the share its connections have of all (so taking the whole budget
// needs as many addresses as taking every connection), at least one body the limit allows.
uint64_t unproven_body_share(uint64_t budget, uint64_t max_body_bytes, size_t max_connections, size_t per_ip) {
  const uint64_t share = max_connections > 0 ? budget / max_connections * std::min(per_ip, max_connections) : budget;
  return std::min(budget, std::max(share, max_body_bytes));
}

// The listener, with TLS when tls.cert_file is set, bound to `listen`.
Result<void> bind_listener(HttpFront& front, const FrontParts& parts) {
  const config::Settings& settings = parts.settings;
  const http::SessionLimits limits = session_limits(front, parts);
  front.listener = std::make_unique<http::Listener>(
      front.io, parts.threads, front.router, limits,
      http::ConnectionLimits{
          .max_connections = parts.max_connections,
          .max_connections_per_ip = static_cast<size_t>(settings.max_connections_per_ip),
          .unproven_body_bytes = unproven_body_share(front.body_budget.limit(), limits.max_body_bytes,
                                                     parts.max_connections,
                                                     static_cast<size_t>(settings.max_connections_per_ip)),
          .all_unproven_body_bytes =
              std::min(front.body_budget.limit(), std::max(front.body_budget.limit() / 2, limits.max_body_bytes))});
  front.refusal_log = std::make_unique<http::RefusalLog>(front.io, front.refusals,
                                                         std::chrono::seconds(settings.refusal_log_interval_s));
  front.alarms = std::make_unique<metrics::DeliveryAlarms>(
      front.io, front.webhook->stats(),
      metrics::AlarmOptions{.silence_minutes = settings.alert_silence_minutes,
                            .signature_failures_per_minute = settings.alert_signature_failures_per_minute});
  if (!settings.tls.cert_file.empty()) {
    auto certificate = http::load_server_certificate(settings.tls.cert_file, settings.tls.key_file, settings.base_dir);
    if (!certificate) return fail(ErrorKind::data, certificate.error());
    front.listener->set_tls(certificate->context);
    front.tls_not_after_s.store(certificate->not_after_s, std::memory_order_relaxed);
    log::info("tls")
        .str("subject", certificate->subject)
        .str("serial", certificate->serial)
        .str("not_after", certificate->not_after);
    // Served all the same: a renewed file and a reload mend it without a restart.
    warn_about_certificate_validity(*certificate);
  }
  if (auto listening = front.listener->listen(settings.listen); !listening) {
    return fail(ErrorKind::other, listening.error());
  }
  return {};
}

}  // namespace

HttpFront::HttpFront(const config::Settings& settings, unsigned threads, uint64_t max_body_bytes)
    : max_body_bytes(max_body_bytes),
      body_budget(inflight_budget_that_fits(settings, max_body_bytes)),
      blocking(kBlockingThreads),
      io(static_cast<int>(threads)) {}

Result<std::unique_ptr<HttpFront>> open_http_front(FrontParts parts) {
  auto front = std::make_unique<HttpFront>(parts.settings, parts.threads,
                                          body_limit_that_fits(parts.settings, *parts.ingest.inbox));
  if (auto mounted = mount_endpoints(*front, parts); !mounted) return fail(mounted);
  if (auto mounted = mount_metrics(*front, parts); !mounted) return fail(mounted);
  mount_console(*front, parts);
  if (auto bound = bind_listener(*front, parts); !bound) return fail(bound);
  return front;
}

}  // namespace hh::app
