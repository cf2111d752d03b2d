#include "receiver/http/off_io.h"

#include "common/thread_name.h"

namespace hh::http {

BlockingPool::BlockingPool(unsigned threads) : work_(io_.get_executor()) {
  try {
    for (unsigned i = 0; i < threads; ++i) threads_.push_back(start_named_thread("hh-blocking", [this] { io_.run(); }));
  } catch (...) {
    join();  // the ones started: a joinable std::thread destroyed would end the process
    throw;
  }
}

BlockingPool::~BlockingPool() { join(); }

void BlockingPool::join() {
  work_.reset();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

}  // namespace hh::http
