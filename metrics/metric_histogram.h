#pragma once
// A histogram for metrics: fixed upper bounds, one atomic count per bucket and an atomic
// sum. observe() is lock-free and may run on any thread; snapshot() may run concurrently
// and sees each observation either whole or not yet in the counts (the sum may briefly
// run ahead of the counts by the observations in flight; Prometheus tolerates that).
//
// Header-only on purpose: a component that records observations (the fetcher, the
// processor) includes this without linking the HTTP library.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "metrics/prometheus_text.h"

namespace hh::metrics {

class Histogram {
 public:
  // `upper_bounds`: strictly increasing; must outlive the histogram (use a static array).
  explicit Histogram(std::span<const double> upper_bounds)
      : bounds_(upper_bounds), counts_(std::make_unique<std::atomic<uint64_t>[]>(upper_bounds.size() + 1)) {}
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void observe(double value) {
    // The first bound >= value; a value above every bound lands in the +Inf bucket.
    const auto index = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
    counts_[index].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
  }

  HistogramSnapshot snapshot() const {
    HistogramSnapshot out;
    out.upper_bounds = bounds_;
    out.counts.reserve(bounds_.size() + 1);
    for (size_t i = 0; i <= bounds_.size(); ++i) out.counts.push_back(counts_[i].load(std::memory_order_relaxed));
    out.sum = sum_.load(std::memory_order_relaxed);
    return out;
  }

 private:
  std::span<const double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

// Bounds shared by our latency histograms (seconds): 0.5 ms to 60 s.
inline constexpr double kLatencySecondsBounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                   0.25,   0.5,   1,      2.5,   5,    10,    30,   60};

}  // namespace hh::metrics
