#pragma once
// The HTTP side of `serve`: the io_context, the router with the webhook, health, read API
// and metrics endpoints, and the listener (TLS when configured), bound but not started.
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <cstdint>
#include <memory>

#include "api/read_api.h"
#include "app/follow_ups.h"
#include "app/ingest.h"
#include "app/processing.h"
#include "forward/forwarder.h"
#include "common/result.h"
#include "config/secrets.h"
#include "config/settings.h"
#include "console/console_routes.h"
#include "console/overview_history.h"
#include "metrics/delivery_alarms.h"
#include "metrics/metrics_endpoint.h"
#include "metrics/store_metrics.h"
#include "receiver/http/body_budget.h"
#include "receiver/http/listener.h"
#include "receiver/http/off_io.h"
#include "receiver/http/refusals.h"
#include "receiver/http/router.h"
#include "receiver/http/webhook_endpoint.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::app {

struct HttpFront {
  // `max_body_bytes`: the limit in force (body_limit_that_fits), which the in-flight body
  // budget must hold whole.
  HttpFront(const config::Settings& settings, unsigned threads, uint64_t max_body_bytes);
  const uint64_t max_body_bytes;

  // Declared before the io_context: what sessions use must outlive their frames, which the
  // io_context destroys last (listener.h).
  http::Refusals refusals;
  http::BodyBudget body_budget;
  http::DropAllowance drop_allowance{http::kDropBytesPerSecond};
  http::BlockingPool blocking;  // database reads of /metrics and the read API
  boost::asio::io_context io;
  http::Router router;
  std::unique_ptr<http::WebhookEndpoint> webhook;
  std::unique_ptr<api::ReadApi> read_api;  // only with read_api.token_file
  metrics::MetricsEndpoint metrics_endpoint;
  std::unique_ptr<metrics::StoreMetrics> store_metrics;
  std::unique_ptr<http::Listener> listener;
  // With TLS: the listener certificate's notAfter in Unix seconds, for /metrics; set at start
  // and by each reload that swaps the certificate.
  std::atomic<int64_t> tls_not_after_s{0};
  std::unique_ptr<http::RefusalLog> refusal_log;
  std::unique_ptr<metrics::DeliveryAlarms> alarms;
  // The console (only with console.enabled): its overview's sampler, its actions, its routes.
  std::unique_ptr<console::OverviewHistory> overview;
  std::unique_ptr<console::ConsoleActions> console_actions;
  std::unique_ptr<console::Console> console;
};

struct FrontParts {
  const config::Settings& settings;
  const config::Secrets& secrets;
  std::shared_ptr<const signature::Verifier> verifier;
  Ingest& ingest;
  Processing& processing;
  FollowUps* follow_ups;  // may be null
  forward::Forwarder* forwarder;  // may be null (no [[forward]])
  unsigned threads;
  size_t max_connections;
};

// Error kind `data`: the TLS certificate or key could not be loaded (configuration).
Result<std::unique_ptr<HttpFront>> open_http_front(FrontParts parts);

}  // namespace hh::app
