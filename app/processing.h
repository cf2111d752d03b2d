#pragma once
// Processing in `serve`: the processor applies the inbox between ingest commits, on the
// writer thread, in long steps that give way to waiting deliveries; the checkpointer runs
// on a thread of its own and finishes each checkpoint between the writer's batches.
#include <memory>

#include "app/ingest.h"
#include "common/result.h"
#include "fetcher/fetcher.h"
#include "processor/processor.h"
#include "store/durability.h"

namespace hh::app {

struct Processing {
  std::unique_ptr<processor::Processor> processor;
  std::unique_ptr<store::Checkpointer> checkpointer;  // null if it could not be started
};

// Hands both to the writer as background work (it runs them once started). `follow_ups`
// (may be null) is woken when a step queues jobs.
Result<std::unique_ptr<Processing>> start_processing(Ingest& ingest, fetcher::Fetcher* follow_ups);

}  // namespace hh::app
