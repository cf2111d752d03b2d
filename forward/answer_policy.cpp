#include "forward/answer_policy.h"

#include <algorithm>

namespace hh::forward {

Verdict verdict_of_status(unsigned status) {
  if (status >= 200 && status < 300) return Verdict::delivered;
  if (status == 408 || status == 429 || (status >= 500 && status < 600)) return Verdict::retry;
  return Verdict::final;
}

std::chrono::milliseconds retry_delay(const BackoffRule& rule, int64_t attempts,
                                      std::optional<int64_t> retry_after_s, std::mt19937_64& random) {
  // A Retry-After of 0, or a date already past, would make the message due at once and
  // spend every attempt in a burst: the backoff applies (as for follow-up jobs,
  // store/jobs/retry_policy.cpp).
  if (retry_after_s && *retry_after_s > 0) {
    // Clamped in seconds, before the conversion: a backend's number of seconds may fit an
    // int64 while its milliseconds do not (they would overflow into a negative wait).
    const int64_t max_s = std::chrono::duration_cast<std::chrono::seconds>(kMaxRetryAfter).count();
    return std::chrono::seconds(std::clamp<int64_t>(*retry_after_s, 0, max_s));
  }
  const int shift = static_cast<int>(std::clamp<int64_t>(attempts - 1, 0, 40));
  const int64_t initial = std::max<int64_t>(rule.initial.count(), 1);
  const int64_t max = std::max<int64_t>(rule.max.count(), initial);
  const int64_t full = shift >= 40 || initial > (max >> shift) ? max : initial << shift;
  std::uniform_int_distribution<int64_t> jitter(full / 2, full);
  return std::chrono::milliseconds(jitter(random));
}

}  // namespace hh::forward
