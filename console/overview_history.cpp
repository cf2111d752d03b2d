#include "console/overview_history.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <charconv>

#include "common/asio_token.h"
#include "common/json_writer.h"

namespace hh::console {
namespace net = boost::asio;

std::vector<ExpositionSample> parse_exposition(std::string_view text, std::span<const std::string_view> families) {
  std::vector<ExpositionSample> out;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (line.empty() || line.front() == '#') continue;
    const size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, name_end);
    bool wanted = false;
    for (auto family : families) wanted = wanted || family == name;
    if (!wanted) continue;
    // Label values may hold spaces: the value follows the last space.
    const size_t space = line.rfind(' ');
    if (space == std::string_view::npos || space < name_end) continue;
    const std::string_view value_text = line.substr(space + 1);
    double value = 0;
    const auto [ptr, ec] = std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
    if (ec != std::errc{} || ptr != value_text.data() + value_text.size()) continue;
    out.push_back({std::string(line.substr(0, space)), value});
  }
  return out;
}

OverviewHistory::OverviewHistory(net::io_context& io, http::BlockingPool& pool, Render render, Clock now_ms)
    : timer_(io), pool_(pool), render_(std::move(render)), now_ms_(std::move(now_ms)) {}

void OverviewHistory::start() { net::co_spawn(timer_.get_executor(), run(), net::detached); }

void OverviewHistory::stop() {
  stopped_ = true;
  timer_.cancel();
}

net::awaitable<void> OverviewHistory::run() {
  while (!stopped_) {
    co_await net::co_spawn(pool_.executor(), [this]() -> net::awaitable<void> {
      sample_now();
      co_return;
    }, net::use_awaitable);
    timer_.expires_after(kSampleInterval);
    auto [ec] = co_await timer_.async_wait(use_tuple);
    if (ec || stopped_) co_return;
  }
}

OverviewHistory::Point OverviewHistory::take() {
  const std::string text = render_();
  Point point;
  point.t_ms = now_ms_();
  const auto samples = parse_exposition(text, kOverviewFamilies);
  std::lock_guard lock(mutex_);
  for (const auto& sample : samples) {
    auto [it, added] = series_index_.try_emplace(sample.series, series_.size());
    if (added) series_.push_back(sample.series);
    point.values.emplace_back(it->second, sample.value);
  }
  return point;
}

void OverviewHistory::sample_now() {
  Point point = take();
  std::lock_guard lock(mutex_);
  latest_ = point;
  points_.push_back(std::move(point));
  while (points_.size() > kHistoryPoints) points_.pop_front();
}

net::awaitable<std::string> OverviewHistory::json() {
  bool stale = false;
  {
    std::lock_guard lock(mutex_);
    stale = now_ms_() - latest_.t_ms >= std::chrono::milliseconds(kFreshness).count();
  }
  co_return co_await net::co_spawn(pool_.executor(), [this, stale]() -> net::awaitable<std::string> {
    if (stale) {
      Point point = take();
      std::lock_guard lock(mutex_);
      if (point.t_ms > latest_.t_ms) latest_ = std::move(point);
    }
    std::lock_guard lock(mutex_);
    co_return json_locked();
  }, net::use_awaitable);
}

std::string OverviewHistory::json_locked() const {
  std::string out = "{\"interval_s\":" + std::to_string(std::chrono::seconds(kSampleInterval).count()) + ",\"series\":[";
  for (size_t i = 0; i < series_.size(); ++i) {
    if (i) out.push_back(',');
    json::append_string(out, series_[i]);
  }
  const auto append_point = [&](const Point& point) {
    std::vector<const double*> values(series_.size(), nullptr);
    for (const auto& [index, value] : point.values) values[index] = &value;
    out.append("{\"t\":").append(std::to_string(point.t_ms)).append(",\"v\":[");
    for (size_t i = 0; i < values.size(); ++i) {
      if (i) out.push_back(',');
      if (values[i]) {
        json::append_number(out, *values[i]);
      } else {
        out.append("null");
      }
    }
    out.append("]}");
  };
  out.append("],\"points\":[");
  for (size_t i = 0; i < points_.size(); ++i) {
    if (i) out.push_back(',');
    append_point(points_[i]);
  }
  out.append("],\"latest\":");
  append_point(latest_);
  out.push_back('}');
  return out;
}

}  // namespace hh::console
