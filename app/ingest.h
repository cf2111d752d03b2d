#pragma once
// The ingest side of `serve`: the store, its inbox and the inbox writer (group commit,
// with the WAL sync on a thread of its own when synchronous = "full").
#include <memory>

#include "common/result.h"
#include "config/secrets.h"
#include "config/settings.h"
#include "metrics/ingest_metrics.h"
#include "store/database_location.h"
#include "store/inbox_writer.h"
#include "store/store.h"

namespace hh::app {

struct Ingest {
  store::Database database;  // `database = …` with its password, for the parts beside the writer
  // In this order: what is opened from the store is destroyed before it; the writer's
  // commit observer writes to commit_metrics.
  std::unique_ptr<store::Store> store;
  std::unique_ptr<store::Inbox> inbox;
  store::WriterOptions writer_options;
  metrics::InboxCommitMetrics commit_metrics;
  std::unique_ptr<store::InboxWriter> writer;
};

// Opens the store `database = …` names and its inbox, and sets up (not starts) the writer.
Result<std::unique_ptr<Ingest>> open_ingest(const config::Settings& settings, const config::Secrets& secrets);

}  // namespace hh::app
