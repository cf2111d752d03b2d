#pragma once
// Realistic webhook bodies for the load generator, shaped like the service's events
// (reference notes §2): a ~1 KiB sleep summary and a ~20 KiB heartrate batch of about
// 180 samples. `variant` changes ids, values and timestamps so bodies differ.
#include <cstdint>
#include <string>

namespace hh::bench {

// A daily.data.sleep.updated event of about 1 KiB.
std::string sleep_summary_body(uint64_t variant);

// Version `version` of sleep summary `summary` (same summary id and user for every
// version; score and updated_at differ), for sending several versions of one summary in
// any order: the store keeps whichever arrived last (latest `seq` wins).
std::string sleep_summary_version_body(uint64_t summary, uint64_t version);

// A daily.data.heartrate.created event with `samples` samples (180 ≈ 20 KiB). Samples
// start at `first_minute` minutes into 2024 for user `user`: overlapping windows between
// bodies give latest-wins updates, disjoint ones give new samples.
std::string heartrate_body(uint64_t variant, int user, int64_t first_minute, int samples = 180);

}  // namespace hh::bench
