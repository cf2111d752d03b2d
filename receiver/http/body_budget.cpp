#include "receiver/http/body_budget.h"

#include <algorithm>

namespace hh::http {

bool BodyBudget::try_take(uint64_t bytes) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ - std::min(used, limit_)) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

void BodyBudget::give_back(uint64_t bytes) {
  if (bytes == 0) return;
  used_.fetch_sub(bytes, std::memory_order_relaxed);
  if (waiting_.load(std::memory_order_relaxed) > 0) wake_waiters_that_fit();
}

// Wakes, first come first served, the waiters whose bytes fit in what is free now; the
// rest stay asleep (waking every waiter on every give-back would cost O(waiters) each).
void BodyBudget::wake_waiters_that_fit() {
  std::lock_guard lock(mutex_);
  uint64_t free = limit_ - std::min(used_.load(std::memory_order_relaxed), limit_);
  for (auto it = waiters_.begin(); it != waiters_.end() && (*it)->bytes <= free;) {
    free -= (*it)->bytes;
    std::shared_ptr<Waiter> waiter = *it;
    waiter->queued = false;
    it = waiters_.erase(it);
    waiting_.fetch_sub(1, std::memory_order_relaxed);
    // The timer belongs to the waiter's executor: cancel it there.
    net::post(waiter->timer.get_executor(), [waiter] { waiter->timer.cancel(); });
  }
}

net::awaitable<bool> BodyBudget::take(uint64_t bytes, std::chrono::steady_clock::duration wait) {
  if (try_take(bytes)) co_return true;
  if (bytes > limit_) co_return false;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto waiter = std::make_shared<Waiter>(co_await net::this_coro::executor, bytes);
  const auto dequeue = [this, &waiter] {
    std::lock_guard lock(mutex_);
    if (!waiter->queued) return;
    waiter->queued = false;
    waiters_.remove(waiter);
    waiting_.fetch_sub(1, std::memory_order_relaxed);
  };
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard lock(mutex_);
      waiters_.push_back(waiter);
      waiter->queued = true;
      waiting_.fetch_add(1, std::memory_order_relaxed);
    }
    // Again after queueing: a give-back between the first try and now found no waiter.
    if (try_take(bytes)) {
      dequeue();
      co_return true;
    }
    waiter->timer.expires_at(deadline);
    co_await waiter->timer.async_wait(use_tuple);  // woken early by give_back
    dequeue();
    if (try_take(bytes)) co_return true;
  }
  co_return false;
}

net::awaitable<bool> BodyReservation::grow_to(uint64_t total) {
  if (!budget_ || total <= held_) co_return true;
  const uint64_t more = total - held_;
  if (!budget_->try_take(more)) {  // only a wait spends the request's wait
    const auto started = std::chrono::steady_clock::now();
    const bool taken = co_await budget_->take(more, wait_left_);
    wait_left_ -= std::min(wait_left_, std::chrono::steady_clock::now() - started);
    if (!taken) co_return false;
  }
  held_ = total;
  co_return true;
}

void BodyReservation::release() {
  if (budget_) budget_->give_back(held_);
  held_ = 0;
}

}  // namespace hh::http
