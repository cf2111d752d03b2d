#pragma once
// FetchMetrics: what the follow-up fetcher records per request to the service, exported on
// GET /metrics as
//
//   healthhook_fetch_requests_total{outcome="…"}   counter
//   healthhook_fetch_request_seconds                histogram (connect + TLS + request + body)
//
// `outcome` is one of kFetchOutcomes: "ok" (2xx), "http_429", "http_4xx", "http_5xx",
// "http_other" (1xx/3xx), or a transport failure named as fetcher::failure_name() names it
// ("connect", "certificate", "tls", "timeout", "transport", "too_large", "protocol",
// "cancelled"). An unknown name is counted as "other".
//
// The hook: serve creates one FetchMetrics, hands a pointer to the fetcher (which calls
// record() once per GET, from any thread) and to the metrics endpoint (which reads it at
// scrape time). Header-only: the fetcher includes this without linking the HTTP library.
#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "metrics/metric_histogram.h"

namespace hh::metrics {

inline constexpr std::array<std::string_view, 14> kFetchOutcomes = {
    "ok",       "http_429",  "http_4xx", "http_5xx", "http_other", "connect",   "certificate",
    "tls",      "timeout",   "transport", "too_large", "protocol", "cancelled", "other"};

// The outcome label of a response status (for requests that got one).
constexpr std::string_view fetch_outcome_of_status(unsigned status) {
  if (status >= 200 && status < 300) return "ok";
  if (status == 429) return "http_429";
  if (status >= 400 && status < 500) return "http_4xx";
  if (status >= 500 && status < 600) return "http_5xx";
  return "http_other";
}

struct FetchMetrics {
  FetchMetrics() = default;
  FetchMetrics(const FetchMetrics&) = delete;
  FetchMetrics& operator=(const FetchMetrics&) = delete;

  // One GET to the service finished: `outcome` as above, `seconds` from start to the last
  // body byte (or to the failure).
  void record(std::string_view outcome, double seconds) {
    size_t index = kFetchOutcomes.size() - 1;  // "other"
    for (size_t i = 0; i < kFetchOutcomes.size(); ++i) {
      if (kFetchOutcomes[i] == outcome) {
        index = i;
        break;
      }
    }
    requests[index].fetch_add(1, std::memory_order_relaxed);
    request_seconds.observe(seconds);
  }

  std::array<std::atomic<uint64_t>, kFetchOutcomes.size()> requests{};  // by kFetchOutcomes index
  Histogram request_seconds{kLatencySecondsBounds};
};

}  // namespace hh::metrics
