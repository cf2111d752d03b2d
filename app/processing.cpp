#include "app/processing.h"

#include <system_error>

#include "common/log.h"
#include "common/timestamp.h"
#include "store/unfinished_rebuild.h"

namespace hh::app {

namespace {

// One processing session: its store handle, processor and, `alongside` the writer, thread.
Result<void> add_session(Processing& processing, Ingest& ingest, bool alongside, fetcher::Fetcher* follow_ups) {
  store::InboxWriter& writer = *ingest.writer;
  auto store = alongside ? ingest.store->open_processing_alongside(store::Leadership::when_free)
                         : ingest.store->open_processing(store::Leadership::when_free);
  if (!store) return fail(store);
  // On its own thread, steps of the size a step that gives way has (kBehindStep): nothing
  // waits for them, but readers see a step's rows at its commit, and a stop waits for one.
  auto created = processor::Processor::create(
      std::move(*store), alongside ? processor::Processor::kBehindStep : processor::kCatchUpSteps);
  if (!created) return fail(created);
  std::unique_ptr<processor::Processor> processor = std::move(*created);
  if (follow_ups) processor->on_jobs_queued([follow_ups] { follow_ups->wake(); });
  if (!alongside) {
    processor->yield_to([&writer] { return writer.queue_depth() > 0; });
    writer.add_background(processor.get());
    processing.processors.push_back(std::move(processor));
    return {};
  }
  std::unique_ptr<processor::ProcessingThread> thread;
  try {
    thread = std::make_unique<processor::ProcessingThread>(*processor, ingest.writer_options.idle_wakeup);
  } catch (const std::system_error& e) {  // a tasks limit; the session closes with `processor`
    return fail(ErrorKind::unavailable, std::string("no processing thread: ") + e.what());
  }
  writer.add_background(thread.get());  // passes each durable seq on
  processing.processors.push_back(std::move(processor));
  processing.threads.push_back(std::move(thread));
  return {};
}

}  // namespace

Result<std::unique_ptr<Processing>> start_processing(const config::Settings& settings, Ingest& ingest,
                                                     fetcher::Fetcher* follow_ups) {
  auto processing = std::make_unique<Processing>();
  store::InboxWriter& writer = *ingest.writer;
  // Instances sharing a store (PostgreSQL) take turns: this one may stand by. Processing
  // runs on a thread of its own where it can have a connection of its own (processing.h).
  const bool alongside = ingest.store->can_process_alongside();
  // Each session takes its share of the shards as another instance's would (decision 055).
  const int64_t sessions = alongside ? settings.processing_sessions : 1;
  for (int64_t i = 0; i < sessions; ++i) {
    auto added = add_session(*processing, ingest, alongside, follow_ups);
    if (added) continue;
    if (i == 0) return fail(added);
    // Fewer sessions apply as much, more slowly; refusing to start would stop the acks too.
    log::warn("processing_sessions_fewer").num("asked", sessions).num("opened", i).str("error", added.error());
    break;
  }
  // Left by a rebuild that was interrupted: re-derived from here on, and said until done
  // (the processor logs rebuild_finished; /readyz and the read API say so meanwhile).
  if (const int64_t through = processing->unfinished_rebuild(); through > 0) {
    log::warn("rebuild_unfinished")
        .num("through_seq", through)
        .num("applied_seq", processing->processors.front()->applied_seq())
        .str("detail", store::kRebuildUnfinishedServing);
  }
  // Checkpoints run on a thread of their own, not inside the writer's commits, where they
  // held up the acks of the batch that crossed the checkpoint threshold (reading the log,
  // writing and syncing the database). Without it (e.g. no second connection can be
  // opened), the backend's own checkpoints stay on: slower acks, nothing else changes
  // (docs/decisions/002-checkpointer-thread.md).
  auto checkpointer = ingest.store->start_checkpointer();
  if (checkpointer && *checkpointer) {
    processing->checkpointer = std::move(*checkpointer);
    writer.add_background(processing->checkpointer.get());
  } else if (checkpointer) {
    log::info("checkpointer_not_used").str("reason", "the database checkpoints by itself");
  } else {
    log::warn("checkpointer_not_started").str("error", checkpointer.error());
  }
  if (settings.retention.body_days > 0) {
    auto retention = ingest.store->open_body_retention();
    if (!retention) return fail(retention);
    processing->body_retention = std::make_unique<processor::BodyRetentionWork>(
        std::move(*retention), settings.retention.body_days, unix_now_ms);
    writer.add_background(processing->body_retention.get());
  }
  return processing;
}

}  // namespace hh::app
