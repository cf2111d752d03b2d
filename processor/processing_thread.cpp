#include "processor/processing_thread.h"

#include "common/thread_name.h"

namespace hh::processor {

ProcessingThread::ProcessingThread(Processor& processor, std::chrono::milliseconds idle_wakeup)
    : processor_(processor), idle_wakeup_(idle_wakeup),
      thread_(start_named_thread("hh-processing", [this] { run(); })) {}

ProcessingThread::~ProcessingThread() { stop(); }

bool ProcessingThread::run_once(int64_t durable_seq) {
  {
    std::lock_guard lock(mutex_);
    // Every call wakes the thread, whether the seq moved or not: PostgreSQL's writer passes
    // the same bound every time (its rows are bounded by the inbox horizon instead).
    offered_seq_ = durable_seq;
    offered_ = true;
  }
  wakeup_.notify_one();
  return false;  // this thread does the work: the writer need not call again soon
}

void ProcessingThread::request_stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_one();
}

void ProcessingThread::stop() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

void ProcessingThread::run() {
  bool more = false;  // the last step said more is waiting: step again without waiting
  for (;;) {
    int64_t seq = 0;
    {
      std::unique_lock lock(mutex_);
      // A pass-on that came during the last step is not lost: offered_ stays set. An idle
      // wake-up steps anyway (see the header).
      if (!more) wakeup_.wait_for(lock, idle_wakeup_, [&] { return stopping_ || offered_; });
      if (stopping_) return;
      offered_ = false;
      seq = offered_seq_;  // each step with the newest seq passed on
    }
    more = processor_.run_once(seq);
  }
}

}  // namespace hh::processor
