#pragma once
// What the forwarder counts per destination, read by GET /metrics
// (metrics/pipeline_metrics.h forward_metrics()):
//   healthhook_forward_messages_sent_total{destination}     changes or deliveries delivered (2xx)
//   healthhook_forward_requests_total{destination,outcome}  POSTs by outcome: ok, http_408,
//       http_429, http_4xx, http_5xx, http_other, or the transport failure (connect, tls,
//       certificate, timeout, transport, too_large, protocol)
//   healthhook_forward_messages_dead_total{destination}     given up (final answer, attempts, age)
//   healthhook_forward_messages_dropped_total{destination}  over max_outbox_mib
//   healthhook_forward_outbox_pending{destination}          gauge: entries waiting
//   healthhook_forward_outbox_dead{destination}             gauge: dead entries kept for requeue
//   healthhook_forward_outbox_oldest_seconds{destination}   gauge: age of the oldest waiting entry
//   healthhook_forward_paused{destination}                  gauge: 1 while paused (forward pause)
//   healthhook_forward_yielded_seconds_total                 the thread's sleeps leaving the CPU to
//       ingest (cpu_share.h; Forwarder::yielded_seconds(), one for all destinations)
// Counters are atomics written by the forwarder's thread; the gauges are refreshed from
// the store every few seconds.
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace hh::forward {

inline constexpr std::array<std::string_view, 13> kRequestOutcomes = {
    "ok",      "http_408",    "http_429", "http_4xx", "http_5xx",  "http_other", "connect",
    "tls",     "certificate", "timeout",  "transport", "too_large", "protocol"};

struct DestinationMetrics {
  explicit DestinationMetrics(std::string name) : destination(std::move(name)) {}
  DestinationMetrics(const DestinationMetrics&) = delete;
  DestinationMetrics& operator=(const DestinationMetrics&) = delete;

  void count_request(std::string_view outcome) {
    for (size_t i = 0; i < kRequestOutcomes.size(); ++i) {
      if (kRequestOutcomes[i] == outcome) {
        requests[i].fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
    requests.back().fetch_add(1, std::memory_order_relaxed);  // "protocol": anything unnamed
  }

  const std::string destination;
  std::atomic<uint64_t> sent{0}, dead{0}, dropped{0};
  std::array<std::atomic<uint64_t>, kRequestOutcomes.size()> requests{};
  std::atomic<int64_t> pending{0}, dead_now{0}, oldest_age_ms{0}, paused{0}, unmade{0};
};

}  // namespace hh::forward
