#include "receiver/http/commit_wait.h"

#include <memory>

namespace hh::http {
namespace {

// Shared by the waiting coroutine and the writer's completion. Touched only on the
// coroutine's executor: the completion posts there. `timer` points into the coroutine's
// frame while it waits, and is null once it stopped waiting, so a completion that comes
// after the deadline touches nothing of the frame.
struct Wait {
  std::optional<store::AppendOutcome> outcome;
  net::steady_timer* timer = nullptr;
};

}  // namespace

net::awaitable<SubmitResult> submit_and_wait(store::InboxWriter& writer, store::NewDelivery delivery,
                                             std::chrono::steady_clock::time_point deadline) {
  const net::any_io_executor executor = co_await net::this_coro::executor;
  net::steady_timer timer(executor, deadline);
  auto wait = std::make_shared<Wait>();
  wait->timer = &timer;
  const auto admission =
      writer.submit(std::move(delivery), [wait, executor](const store::AppendOutcome& outcome) {
        net::post(executor, [wait, outcome] {
          wait->outcome = outcome;
          if (wait->timer) wait->timer->cancel();
        });
      });
  if (admission != store::InboxWriter::Admission::queued) {
    wait->timer = nullptr;
    co_return SubmitResult{admission, store::AppendOutcome{store::AppendOutcome::Kind::unavailable, 0, {}}};
  }
  // Woken early by the completion (cancel), or at the deadline.
  while (!wait->outcome && std::chrono::steady_clock::now() < deadline) {
    co_await timer.async_wait(use_tuple);
  }
  wait->timer = nullptr;
  co_return SubmitResult{admission, std::move(wait->outcome)};
}

}  // namespace hh::http
