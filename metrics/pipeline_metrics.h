#pragma once
// /metrics collectors for the stages `serve` runs after the inbox: the processor and the
// follow-up fetcher (their counters live in those libraries; this is where they meet the
// metrics endpoint, so receiver/http needs to know neither). Families written:
//
//   processor_metrics:  healthhook_processed_deliveries_total{status="processed|invalid|ignored|unknown"}
//                       healthhook_processor_rows_applied_total, healthhook_processor_samples_applied_total
//                       healthhook_processor_jobs_queued_total
//                       healthhook_processor_steps_total{result="ok|failed"}
//                       healthhook_processor_last_step_seconds, healthhook_processor_leading
//   fetcher_metrics:    healthhook_fetch_requests_total{outcome=…}, healthhook_fetch_request_seconds
//                       (metrics/fetch_metrics.h), healthhook_fetch_jobs_total{result="done|retried|dead"},
//                       healthhook_fetch_pages_stored_total, healthhook_fetch_bytes_stored_total
//   retention_metrics:  healthhook_bodies_removed_total, healthhook_body_bytes_removed_total
//                       ([retention] body_days; processor/body_retention_work.h)
//   forward_metrics:    healthhook_forward_* per [[forward]] destination (forward/forward_metrics.h)
//   checkpointer_metrics: healthhook_wal_checkpoints_total, healthhook_wal_database_syncs_total,
//                       healthhook_wal_checkpoints_stopped (1 after a failed sync of the database
//                       file: the log grows until a restart, store/durability.h)
//
// What is referenced must outlive the collector (the metrics endpoint's router).
#include <vector>

#include "processor/body_retention_work.h"
#include "processor/processor.h"
#include "store/durability.h"
#include "fetcher/fetcher.h"
#include "forward/forwarder.h"
#include "metrics/fetch_metrics.h"
#include "metrics/metrics_endpoint.h"

namespace hh::metrics {

// Of every processing session of this instance (app/processing.h): the counters summed, the
// shards added up, leading while one of them leads, the slowest of their last steps.
metrics::MetricsEndpoint::Collector processor_metrics(std::vector<const processor::Processor*> processors);
metrics::MetricsEndpoint::Collector fetcher_metrics(const fetcher::Fetcher& fetcher, const metrics::FetchMetrics& requests);
metrics::MetricsEndpoint::Collector forward_metrics(const forward::Forwarder& forwarder);
metrics::MetricsEndpoint::Collector checkpointer_metrics(const store::Checkpointer& checkpointer);
metrics::MetricsEndpoint::Collector retention_metrics(const processor::BodyRetentionWork& retention);

}  // namespace hh::metrics
