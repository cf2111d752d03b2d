#pragma once
// One budget for the request bodies held in memory, shared by every connection
// (max_inflight_body_mib, spec §2). A body of known length takes its whole size before
// any of it is read; a chunked one takes its bytes read by read. Both give it back when the
// request is answered (the inbox writer holds the body until its commit, so that is
// counted too). What does not fit waits, briefly (a request's waits together at most
// SessionLimits::budget_wait), for others to give back; then the request gets 503 with
// Retry-After. Peak body memory is therefore the budget plus at most
// one read per connection (docs/facing-the-internet.md, "Memory").
//
// Thread-safe. Waiters are woken on their own executors.
#include <chrono>
#include <list>
#include <memory>
#include <mutex>

#include "receiver/http/http_types.h"

namespace hh::http {

class BodyBudget {
 public:
  explicit BodyBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}
  BodyBudget(const BodyBudget&) = delete;
  BodyBudget& operator=(const BodyBudget&) = delete;

  // Takes `bytes` if they fit now.
  bool try_take(uint64_t bytes);
  // Takes `bytes`, waiting up to `wait` for room; false when they did not fit in time (or
  // never can: more than the whole budget).
  net::awaitable<bool> take(uint64_t bytes, std::chrono::steady_clock::duration wait);
  void give_back(uint64_t bytes);

  uint64_t in_use() const { return used_.load(std::memory_order_relaxed); }
  uint64_t limit() const { return limit_; }

 private:
  struct Waiter {
    explicit Waiter(net::any_io_executor ex, uint64_t wanted) : timer(std::move(ex)), bytes(wanted) {}
    net::steady_timer timer;  // expires at the waiter's deadline; cancelled to wake it early
    uint64_t bytes;
    bool queued = false;  // GUARDED_BY(mutex_)
  };
  void wake_waiters_that_fit();

  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<size_t> waiting_{0};  // waiters_.size(), readable without the lock
  std::mutex mutex_;
  std::list<std::shared_ptr<Waiter>> waiters_;  // GUARDED_BY(mutex_), first come first woken
};

// What one request holds of the budget; gives it all back when destroyed. Its waits for
// room last `wait` in all, however many there are: a chunked body grows read by read, and
// when each read had a whole `wait` of its own, a body of many reads waited many times the
// documented second before its 503.
class BodyReservation {
 public:
  BodyReservation(BodyBudget* budget, std::chrono::steady_clock::duration wait) : budget_(budget), wait_left_(wait) {}
  BodyReservation(const BodyReservation&) = delete;
  BodyReservation& operator=(const BodyReservation&) = delete;
  ~BodyReservation() { release(); }

  // Grows the reservation to `total` bytes (no-op when it holds that much already), waiting
  // for room at most what is left of the request's wait; false when it did not fit.
  net::awaitable<bool> grow_to(uint64_t total);
  void release();
  uint64_t held() const { return held_; }

 private:
  BodyBudget* budget_;  // null: no budget (tests, tools)
  uint64_t held_ = 0;
  std::chrono::steady_clock::duration wait_left_;  // of the request's wait for room
};

}  // namespace hh::http
