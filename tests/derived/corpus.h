#pragma once
// A generated inbox for property tests: deliveries of every family the processor handles
// (summaries, timeseries, workout-stream and backfill notices, connections, devices, lab
// events, fetched streams and pages) plus ignored, unknown and invalid ones. Keys are
// drawn from small pools, so most keys get several versions and timeseries overlap.
// Deterministic for a seed.
#include <cstdint>
#include <string>
#include <vector>

#include "store/inbox.h"

namespace hh::test {

struct CorpusCounts {
  size_t invalid = 0;  // deliveries built to be invalid (not JSON, no data)
  size_t ignored = 0;  // hypnogram
  size_t unknown = 0;  // unknown event types
};

// `count` deliveries with unique message ids, in generation order (shuffle to taste).
std::vector<store::NewDelivery> make_corpus(size_t count, uint32_t seed, CorpusCounts* counts = nullptr);

// Single deliveries for hand-written tests.
store::NewDelivery sleep_delivery(const std::string& message_id, const std::string& summary_id, int score);
store::NewDelivery heartrate_delivery(const std::string& message_id, int64_t first_ms, int samples, int bpm);
store::NewDelivery raw_delivery(const std::string& message_id, const std::string& body);

}  // namespace hh::test
