#pragma once
// Metrics of the ingest path: what the webhook endpoint answered, and the inbox writer's
// queue, commits and disk guard. Families written:
//
//   healthhook_deliveries_total{outcome="stored|duplicate|rejected_signature|unavailable|too_large"}
//   healthhook_signature_failures_total, healthhook_duplicates_total,
//   healthhook_seconds_since_last_verified_delivery
//   healthhook_refusals_total{reason=…}    (refusals.h)
//   healthhook_inbox_commits_total{result="ok|failed"}
//   healthhook_inbox_commit_seconds, healthhook_inbox_commit_batch_size   (histograms)
//   healthhook_inbox_queue_depth, healthhook_inbox_queue_high_water
//   healthhook_ready, healthhook_inbox_disk_low, healthhook_disk_free_bytes,
//   healthhook_disk_min_free_bytes
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "metrics/metric_histogram.h"
#include "metrics/metrics_endpoint.h"
#include "receiver/http/refusals.h"
#include "receiver/http/webhook_endpoint.h"
#include "store/inbox_writer.h"

namespace hh::metrics {

// Batch sizes: 1 to 16384 deliveries per group commit.
inline constexpr double kBatchSizeBounds[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 16384};

// Filled by the inbox writer's commit observer (InboxWriter::on_commit, set before start()).
struct InboxCommitMetrics {
  Histogram commit_seconds{kLatencySecondsBounds};
  Histogram batch_size{kBatchSizeBounds};
  std::atomic<uint64_t> commits_ok{0};
  std::atomic<uint64_t> commits_failed{0};

  void observe(size_t batch, double seconds, bool ok) {
    commit_seconds.observe(seconds);
    batch_size.observe(static_cast<double>(batch));
    (ok ? commits_ok : commits_failed).fetch_add(1, std::memory_order_relaxed);
  }
};

struct IngestMetricsSources {
  const http::WebhookStats* webhook = nullptr;
  const store::InboxWriter* writer = nullptr;
  const InboxCommitMetrics* commits = nullptr;
  uint64_t queue_high_water = 0;
  std::string disk_path;                           // the database's folder (statvfs at scrape time)
  uint64_t min_free_disk_bytes = 0;
  // Refusals of the listener and sessions (a 413 is mostly decided there, before the
  // endpoint runs). Null: the outcome="too_large" series and the refusals family are left
  // out rather than shown as 0.
  const http::Refusals* refusals = nullptr;
  // What else /readyz waits for (http::ReadinessCheck: "" when nothing), so that
  // healthhook_ready says what it says. Empty: nothing.
  std::function<std::string()> also_ready;
};

// Everything pointed to must outlive the collector.
MetricsEndpoint::Collector ingest_metrics(IngestMetricsSources sources);

}  // namespace hh::metrics
