#include "metrics/ingest_metrics.h"
#include "common/timestamp.h"

#include <sys/statvfs.h>

#include <algorithm>

namespace hh::metrics {
MetricsEndpoint::Collector ingest_metrics(IngestMetricsSources sources) {
  return [s = std::move(sources)](PrometheusText& out) {
    const http::WebhookStats& webhook = *s.webhook;
    out.family("healthhook_deliveries_total", "counter",
               "Webhook deliveries answered, by outcome (stored and duplicate are 200s after the inbox commit)")
        .sample("healthhook_deliveries_total", {{"outcome", "stored"}}, read_counter(webhook.stored))
        .sample("healthhook_deliveries_total", {{"outcome", "duplicate"}}, read_counter(webhook.duplicates))
        .sample("healthhook_deliveries_total", {{"outcome", "rejected_signature"}}, read_counter(webhook.signature_failures))
        .sample("healthhook_deliveries_total", {{"outcome", "unavailable"}},
                read_counter(webhook.unavailable) + (s.refusals ? s.refusals->total(http::Refusal::body_budget) : 0));
    // The listener answers these before the endpoint sees the request: 413 to a body over
    // the limit, and 503 (above) when the in-flight body budget stayed full (on the webhook
    // path, or a console form's: tiny, and refused only when deliveries are too). Not the
    // 503 to an address not yet proven over its share: anyone can make those.
    if (s.refusals) {
      out.sample("healthhook_deliveries_total", {{"outcome", "too_large"}},
                 s.refusals->total(http::Refusal::body_too_large) + read_counter(webhook.too_large));
    }
    out.counter("healthhook_signature_failures_total",
                "Deliveries refused with 401: signature missing, malformed, wrong or outside the time tolerance",
                read_counter(webhook.signature_failures));
    out.counter("healthhook_duplicates_total", "Deliveries whose message id was already in the inbox (answered 200)",
                read_counter(webhook.duplicates));
    const int64_t now_ms = unix_now_ms();
    const auto seconds_since = [now_ms](const std::atomic<int64_t>& last_ms) {
      return std::max<int64_t>(0, (now_ms - last_ms.load(std::memory_order_relaxed)) / 1000);
    };
    out.gauge("healthhook_seconds_since_last_verified_delivery",
              "Seconds since a delivery's signature last verified (since start until one has); with a team "
              "label, a delivery naming that [[service.teams]] team",
              seconds_since(webhook.last_verified_ms));
    for (size_t i = 0; i < webhook.team_ids.size(); ++i) {
      out.sample("healthhook_seconds_since_last_verified_delivery", {{"team", webhook.team_ids[i]}},
                 seconds_since(webhook.team_last_verified_ms[i]));
    }

    if (s.refusals) {
      out.family("healthhook_refusals_total", "counter",
                 "Requests and connections refused before anything was stored, by reason");
      const http::Refusals::Snapshot counts = s.refusals->snapshot();
      for (size_t i = 0; i < counts.size(); ++i) {
        out.sample("healthhook_refusals_total", {{"reason", http::refusal_name(static_cast<http::Refusal>(i))}}, counts[i]);
      }
    }

    const InboxCommitMetrics& commits = *s.commits;
    out.family("healthhook_inbox_commits_total", "counter", "Inbox group commits (one transaction each)")
        .sample("healthhook_inbox_commits_total", {{"result", "ok"}}, read_counter(commits.commits_ok))
        .sample("healthhook_inbox_commits_total", {{"result", "failed"}}, read_counter(commits.commits_failed));
    out.histogram("healthhook_inbox_commit_seconds",
                  "Time of one inbox group commit (the WAL sync included unless a sync thread runs it)",
                  commits.commit_seconds.snapshot());
    out.histogram("healthhook_inbox_commit_batch_size", "Deliveries per inbox group commit",
                  commits.batch_size.snapshot());

    const store::InboxWriter& writer = *s.writer;
    out.counter("healthhook_inbox_wal_syncs_total",
                "fdatasync calls of the WAL by the sync thread before 2xx; each covers every commit before it "
                "(stays 0 when COMMIT syncs itself)",
                writer.wal_syncs());
    out.gauge("healthhook_inbox_queue_depth", "Deliveries waiting for the next inbox commit",
              static_cast<int64_t>(writer.queue_depth()));
    out.gauge("healthhook_inbox_queue_high_water", "Queue depth above which deliveries are refused with 503",
              static_cast<int64_t>(s.queue_high_water));
    const bool ready = writer.last_commit_ok() && !writer.disk_low() && writer.accepting() &&
                       (!s.also_ready || s.also_ready().empty());
    out.gauge("healthhook_ready",
              "1 when /readyz answers 200: last commit ok, disk not low, queue below its mark, derived tables whole",
              int64_t{ready ? 1 : 0});
    out.gauge("healthhook_inbox_disk_low",
              "1 while free disk space is below min_free_disk_mib: deliveries are refused with 503",
              int64_t{writer.disk_low() ? 1 : 0});

    // A local database only: on PostgreSQL the server's disk is not this process's to watch,
    // and min_free_disk_mib does not apply (a threshold shown would be compared with nothing).
    if (!s.disk_path.empty()) {
      struct statvfs fs {};
      if (::statvfs(s.disk_path.c_str(), &fs) == 0) {
        out.gauge("healthhook_disk_free_bytes", "Free space for healthhook on the database's file system",
                  static_cast<int64_t>(static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize));
      }
      out.gauge("healthhook_disk_min_free_bytes", "min_free_disk_mib in bytes: below this free space, 503",
                static_cast<int64_t>(s.min_free_disk_bytes));
    }
  };
}

}  // namespace hh::metrics
