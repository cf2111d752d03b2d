#pragma once
// The console's overview figures over the last hour, kept in memory only (no database
// writes): every kSampleInterval the sampler takes the /metrics exposition (the same
// collectors Prometheus scrapes, so the console and a Grafana dashboard never disagree),
// keeps the families the overview shows (kOverviewFamilies) and appends them to a ring of
// kHistoryPoints. Rates are computed by the page from consecutive counter values.
//
// Cost: one exposition per interval (a few index lookups; metrics/store_metrics.h), run on
// the blocking pool, never on a thread that answers webhooks; about 60 series × 360 points
// of memory. A page asking for the overview when the newest figures are older than
// kFreshness gets a fresh exposition first (at most one per kFreshness, whoever asks).
//
// start()/stop() on the io thread; json() from any thread.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "receiver/http/off_io.h"

namespace hh::console {

inline constexpr auto kSampleInterval = std::chrono::seconds(10);
inline constexpr size_t kHistoryPoints = 360;  // one hour
inline constexpr auto kFreshness = std::chrono::seconds(2);

// Metric families the overview keeps (every series of each).
inline constexpr std::array<std::string_view, 15> kOverviewFamilies = {
    "healthhook_deliveries_total",
    "healthhook_refusals_total",
    "healthhook_processed_deliveries_total",
    "healthhook_processor_lag_deliveries",
    "healthhook_processor_lag_seconds",
    "healthhook_jobs",
    "healthhook_inbox_deliveries",
    "healthhook_forward_outbox_pending",
    "healthhook_forward_outbox_dead",
    "healthhook_forward_outbox_oldest_seconds",
    "healthhook_forward_messages_dropped_total",
    "healthhook_forward_messages_sent_total",
    "healthhook_seconds_since_last_verified_delivery",
    "healthhook_database_bytes",
    "healthhook_rebuild_unfinished",
};

// One sample line of a text exposition: "name{labels}" as written, and its value.
struct ExpositionSample {
  std::string series;
  double value = 0;
};
// The samples of `families` in `text` (histogram and comment lines are skipped).
std::vector<ExpositionSample> parse_exposition(std::string_view text, std::span<const std::string_view> families);

class OverviewHistory {
 public:
  using Render = std::function<std::string()>;  // the exposition (runs on the blocking pool)
  using Clock = std::function<int64_t()>;       // Unix ms

  OverviewHistory(boost::asio::io_context& io, http::BlockingPool& pool, Render render, Clock now_ms);

  void start();
  void stop();  // cancels the timer (io.run() may then return)

  // Takes a sample now when the newest is older than kFreshness, then returns
  // {"interval_s":10,"series":[…],"points":[{"t":ms,"v":[value|null…]}…],"latest":{"t":ms,"v":[…]}}
  // with "v" in the order of "series".
  boost::asio::awaitable<std::string> json();

  // One sample, taken now (tests; the sampler calls it on the blocking pool).
  void sample_now();

 private:
  struct Point {
    int64_t t_ms = 0;
    std::vector<std::pair<size_t, double>> values;  // (series index, value)
  };
  boost::asio::awaitable<void> run();
  Point take();
  std::string json_locked() const;  // holds mutex_

  boost::asio::steady_timer timer_;
  http::BlockingPool& pool_;
  const Render render_;
  const Clock now_ms_;
  bool stopped_ = false;
  mutable std::mutex mutex_;
  std::map<std::string, size_t> series_index_;  // GUARDED_BY(mutex_)
  std::vector<std::string> series_;             // GUARDED_BY(mutex_), by index
  std::deque<Point> points_;                    // GUARDED_BY(mutex_), every kSampleInterval
  Point latest_;                                // GUARDED_BY(mutex_)
};

}  // namespace hh::console
