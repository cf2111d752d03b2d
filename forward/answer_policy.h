#pragma once
// What a destination's answer means (spec §10) and when to try again.
//   2xx                     delivered
//   408, 429, 5xx           try again later (Retry-After honoured)
//   other 1xx/3xx/4xx       final: the message is `dead` (a redirect is not followed;
//                           interim 1xx answers before the final one are skipped by the
//                           sender, destination_sender.cpp)
//   no answer (connect, TLS, timeout, reset)   try again later
// A message still failing after max_attempts attempts, or older than max_age, is `dead`.
//
// The delay before attempt n+1 is exponential with full jitter over its upper half:
// uniform in [d/2, d], d = min(backoff_initial · 2^(n-1), backoff_max), so destinations
// that failed together do not come back together. A Retry-After (seconds or an HTTP date)
// of at least a second replaces it, capped at one day (however many seconds it says: clamped before it is
// counted in milliseconds).
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>

namespace hh::forward {

enum class Verdict { delivered, retry, final };

Verdict verdict_of_status(unsigned status);

struct BackoffRule {
  std::chrono::milliseconds initial{1000};
  std::chrono::milliseconds max{600'000};
};

inline constexpr std::chrono::milliseconds kMaxRetryAfter = std::chrono::hours(24);

// The wait after the `attempts`-th failed attempt (1 = the first).
std::chrono::milliseconds retry_delay(const BackoffRule& rule, int64_t attempts,
                                      std::optional<int64_t> retry_after_s, std::mt19937_64& random);

}  // namespace hh::forward
