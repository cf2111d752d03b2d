#include "store/jobs/retry_policy.h"

#include <algorithm>

namespace hh::store {

int64_t backoff_ms(const RetryPolicy& policy, int64_t failures, uint64_t random_bits) {
  const int64_t cap = std::max<int64_t>(1, policy.max.count());
  int64_t delay = std::max<int64_t>(1, policy.initial.count());
  // Doubling stops at the cap, so no shift can overflow.
  for (int64_t i = 1; i < failures && delay < cap; ++i) delay *= 2;
  delay = std::min(delay, cap);
  const int64_t half = delay / 2;
  const int64_t spread = delay - half;  // [half, delay]
  return half + static_cast<int64_t>(random_bits % static_cast<uint64_t>(spread + 1));
}

int64_t retry_after_ms(int64_t wait_ms, uint64_t random_bits) {
  const int64_t spread = std::min<int64_t>(std::max<int64_t>(0, wait_ms) / 5, kMaxRetryAfterSpreadMs);
  return wait_ms + static_cast<int64_t>(random_bits % static_cast<uint64_t>(spread + 1));
}

RetryDecision decide_retry(const RetryPolicy& policy, int64_t attempts, bool final,
                           std::optional<int64_t> retry_after_s, int64_t now_ms, uint64_t random_bits) {
  RetryDecision decision;
  decision.attempts = attempts + 1;
  decision.dead = final || decision.attempts >= policy.max_attempts;
  if (decision.dead) {
    decision.next_attempt_at_ms = now_ms;
    return decision;
  }
  // A Retry-After of 0, or a date already past (our clock ahead of the service's), would
  // make the job due at once and spend every attempt in a burst: the backoff applies.
  const bool asked = retry_after_s && *retry_after_s > 0;
  const int64_t delay =
      asked ? retry_after_ms(std::min<int64_t>(*retry_after_s, kMaxRetryAfterSeconds) * 1000, random_bits)
            : backoff_ms(policy, decision.attempts, random_bits);
  decision.next_attempt_at_ms = now_ms + delay;
  return decision;
}

}  // namespace hh::store
