#pragma once
// When a failed job runs again (spec §5): exponential backoff with jitter, Retry-After
// when the service sent one, and `dead` after max_attempts. Pure functions: the clock and
// the random bits are parameters, so tests check exact bounds.
#include <chrono>
#include <cstdint>
#include <optional>

namespace hh::store {

struct RetryPolicy {
  int64_t max_attempts = 8;                     // failed attempts before `dead`
  std::chrono::milliseconds initial{5'000};     // delay after the first failure
  std::chrono::milliseconds max{3'600'000};     // no delay grows past this
};

// Retry-After beyond this is clamped: a day is longer than any backfill should wait on
// one server hint, and a bogus huge value must not park a job for years.
inline constexpr int64_t kMaxRetryAfterSeconds = 24 * 3600;

// Delay before attempt `failures + 1`, after `failures` (>= 1) consecutive failures:
// d = min(max, initial * 2^(failures-1)), then "equal jitter": uniform in [d/2, d], so
// spread-out retries never shrink below half the nominal delay and the delay still
// grows from one failure to the next until it reaches max. `random_bits` is any uniformly
// distributed 64-bit value.
int64_t backoff_ms(const RetryPolicy& policy, int64_t failures, uint64_t random_bits);

// A wait the service asked for (Retry-After, or a pause it imposed on every job), plus
// jitter: uniform in [wait, wait + min(wait / 5, 10 min)]. Never earlier than asked; spread
// so that jobs held back together do not all fall due at one instant (and all get the
// next 429 together).
inline constexpr int64_t kMaxRetryAfterSpreadMs = 10 * 60 * 1000;
int64_t retry_after_ms(int64_t wait_ms, uint64_t random_bits);

struct RetryDecision {
  bool dead = false;             // no further attempt
  int64_t attempts = 0;          // the job's attempts after this failure
  int64_t next_attempt_at_ms = 0;
};

// After a failed attempt of a job that had `attempts` failures before it. `final`: the
// failure cannot be fixed by retrying (a 4xx other than 408/429, a bad certificate...).
// `retry_after_s` (429/503 only) replaces the backoff when positive, clamped to kMaxRetryAfterSeconds,
// with retry_after_ms's jitter;
// 0 or less (a date already past) takes the backoff.
RetryDecision decide_retry(const RetryPolicy& policy, int64_t attempts, bool final,
                           std::optional<int64_t> retry_after_s, int64_t now_ms, uint64_t random_bits);

}  // namespace hh::store
