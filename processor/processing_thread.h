#pragma once
// Live processing on a thread of its own, beside the writer's, for a store whose processing
// has a connection of its own (PostgreSQL: Store::open_processing_alongside). The writer
// thread then only commits ingest batches, and its acks no longer wait behind steps: an
// instance that leads the processing of a shared store acks as many deliveries as one that
// does not (on the writer thread the leader acked about a sixth of what the other did,
// applying both instances' deliveries between its own commits; decision 048).
//
// It is handed to the writer as background work (InboxWriter::add_background): each
// run_once() there only passes the newest durable seq on and wakes this thread, which runs
// the processor's steps until it is caught up, then waits for the next seq or for
// `idle_wakeup` (an instance asks for its share of the shards, another instance's deliveries are
// found, a failed step is retried). Steps do not give way to waiting deliveries
// (Processor::yield_to): nothing waits for them.
//
// Lifetime: `processor` must outlive this object; nothing else may use it meanwhile but its
// stats (metrics read them from any thread). stop() (or the destructor) lets the step in
// progress finish, then ends the thread; run_once() after that only records the seq.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "processor/processor.h"
#include "store/background_work.h"

namespace hh::processor {

class ProcessingThread final : public store::BackgroundWork {
 public:
  ProcessingThread(Processor& processor, std::chrono::milliseconds idle_wakeup);
  ~ProcessingThread() override;
  ProcessingThread(const ProcessingThread&) = delete;
  ProcessingThread& operator=(const ProcessingThread&) = delete;

  // On the writer thread (after each commit, and on its idle wake-ups): the newest durable
  // seq, for the next step; wakes the thread and returns at once.
  bool run_once(int64_t durable_seq) override;
  // Asks the thread to end after the step in progress (no new step starts); returns at once.
  void request_stop();
  // request_stop(), then waits for the thread.
  void stop();

 private:
  void run();

  Processor& processor_;
  const std::chrono::milliseconds idle_wakeup_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  int64_t offered_seq_ = -1;  // the newest durable seq the writer passed on
  bool offered_ = false;      // passed on since the thread last looked
  bool stopping_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace hh::processor
