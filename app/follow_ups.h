#pragma once
// The follow-up fetcher of `serve` (spec §5), only with an API key: its job queue and its
// request metrics. The job queue lives on the write connection, so it is opened before
// the writer thread owns that connection.
#include <memory>

#include "common/result.h"
#include "config/secrets.h"
#include "config/settings.h"
#include "fetcher/fetcher.h"
#include "metrics/fetch_metrics.h"
#include "app/ingest.h"

namespace hh::app {

struct FollowUps {
  metrics::FetchMetrics fetch_metrics;  // outlives the fetcher, which records into it
  std::unique_ptr<store::JobQueue> job_queue;
  std::unique_ptr<fetcher::Fetcher> fetcher;
};

// Null without an API key. Error kind `data`: the [service] settings are wrong.
Result<std::unique_ptr<FollowUps>> open_follow_ups(const config::Settings& settings, const config::Secrets& secrets,
                                                   Ingest& ingest);

}  // namespace hh::app
