#pragma once
// Processing in `serve`. Where the store has one writer (SQLite), the processor applies the
// inbox between ingest commits, on the writer thread, in long steps that give way to
// waiting deliveries, and the checkpointer runs on a thread of its own and finishes each
// checkpoint between the writer's batches. Where processing can have a connection of its
// own (PostgreSQL), it runs on a thread of its own (processor/processing_thread.h), and the
// writer thread only commits; `processing_sessions` such sessions, each with its own
// processor and thread, share this instance's part of the shards of users.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "app/ingest.h"
#include "common/result.h"
#include "fetcher/fetcher.h"
#include "config/settings.h"
#include "processor/body_retention_work.h"
#include "processor/processing_thread.h"
#include "processor/processor.h"
#include "store/durability.h"

namespace hh::app {

struct Processing {
  std::vector<std::unique_ptr<processor::Processor>> processors;  // one on SQLite
  // Each runs the processor of the same index, where processing has connections of its own.
  std::vector<std::unique_ptr<processor::ProcessingThread>> threads;
  std::unique_ptr<store::Checkpointer> checkpointer;  // null if it could not be started
  std::unique_ptr<processor::BodyRetentionWork> body_retention;  // null without [retention] body_days

  // An unfinished rebuild's last inbox row, as the processors last read it (0: the derived
  // tables are whole; store/unfinished_rebuild.h). Any thread.
  int64_t unfinished_rebuild() const {
    int64_t through = 0;
    for (const auto& processor : processors) through = std::max(through, processor->unfinished_rebuild());
    return through;
  }

  // Lets the steps in progress finish and stops processing (before the parts its steps
  // wake, e.g. the fetcher, stop). Every session is asked first, so a stop waits for the
  // longest step in progress, not for their sum.
  void stop() {
    for (auto& thread : threads) thread->request_stop();
    for (auto& thread : threads) thread->stop();
  }
};

// Hands them to the writer as background work (it runs them once started), with the body
// retention when `[retention] body_days` is set. `follow_ups` (may be null) is woken when
// a step queues jobs.
Result<std::unique_ptr<Processing>> start_processing(const config::Settings& settings, Ingest& ingest,
                                                     fetcher::Fetcher* follow_ups);

}  // namespace hh::app
