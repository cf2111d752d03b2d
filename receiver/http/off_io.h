#pragma once
// Work that may block (database reads for /metrics and the read API) runs on a small
// pool of its own, never on a thread that answers webhooks (spec §7): a slow query then
// delays only the request that asked for it. The awaiting coroutine resumes on its own
// executor with the result.
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "receiver/http/http_types.h"

namespace hh::http {

// Named threads ("hh-blocking") running queued work until join().
class BlockingPool {
 public:
  explicit BlockingPool(unsigned threads);
  ~BlockingPool();  // join()
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  net::any_io_executor executor() { return io_.get_executor(); }
  // Runs what is queued, then joins the threads.
  void join();

 private:
  net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

template <typename Work>
net::awaitable<std::invoke_result_t<Work&>> run_off_io(BlockingPool& pool, Work work) {
  using Value = std::invoke_result_t<Work&>;
  co_return co_await net::co_spawn(
      pool.executor(), [&work]() -> net::awaitable<Value> { co_return work(); }, net::use_awaitable);
}

}  // namespace hh::http
