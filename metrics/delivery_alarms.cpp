#include "metrics/delivery_alarms.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <utility>

#include "common/asio_token.h"
#include "common/log.h"
#include "common/timestamp.h"

namespace hh::metrics {
namespace {

namespace net = boost::asio;

constexpr auto kCheckInterval = std::chrono::minutes(1);

}  // namespace

DeliveryAlarms::DeliveryAlarms(net::io_context& io, const http::WebhookStats& stats, AlarmOptions options)
    : timer_(io),
      stats_(stats),
      options_(options),
      failures_seen_(stats.signature_failures.load(std::memory_order_relaxed)) {}

void DeliveryAlarms::start() { net::co_spawn(timer_.get_executor(), run(), net::detached); }

void DeliveryAlarms::stop() {
  stopped_ = true;
  timer_.cancel();
}

net::awaitable<void> DeliveryAlarms::run() {
  while (!stopped_) {
    timer_.expires_after(kCheckInterval);
    auto [ec] = co_await timer_.async_wait(use_tuple);
    if (ec || stopped_) co_return;
    (void)check(unix_now_ms());
  }
}

DeliveryAlarms::Change DeliveryAlarms::check_silence(int64_t now_ms, int64_t last_ms, bool& silent_before,
                                                    std::string_view team) {
  const int64_t silent_minutes = (now_ms - last_ms) / 60'000;
  const bool silent = options_.silence_minutes > 0 && silent_minutes >= options_.silence_minutes;
  const bool was_silent = std::exchange(silent_before, silent);
  if (silent && !was_silent) {
    auto line = log::warn("no_verified_delivery");
    if (!team.empty()) line.str("team", team);
    line.num("minutes", silent_minutes)
        .num("alert_silence_minutes", options_.silence_minutes)
        .str("check", "is the endpoint enabled at the service, the signing secret current, the network path open?");
    return Change::began;
  }
  if (!silent && was_silent) {
    auto line = log::info("deliveries_resumed");
    if (!team.empty()) line.str("team", team);
    return Change::ended;
  }
  return Change::none;
}

AlarmsRaised DeliveryAlarms::check(int64_t now_ms) {
  AlarmsRaised raised;
  const Change overall = check_silence(now_ms, stats_.last_verified_ms.load(std::memory_order_relaxed), silent_, {});
  raised.silence_began = overall == Change::began;
  raised.silence_ended = overall == Change::ended;
  team_silent_.resize(stats_.team_ids.size());
  for (size_t i = 0; i < stats_.team_ids.size(); ++i) {
    bool silent = team_silent_[i];
    const Change change = check_silence(now_ms, stats_.team_last_verified_ms[i].load(std::memory_order_relaxed),
                                        silent, stats_.team_ids[i]);
    team_silent_[i] = silent;
    if (change == Change::began) raised.teams_silent.push_back(stats_.team_ids[i]);
  }

  const uint64_t failures = stats_.signature_failures.load(std::memory_order_relaxed);
  const uint64_t new_failures = failures - failures_seen_;
  failures_seen_ = failures;
  if (options_.signature_failures_per_minute > 0 &&
      new_failures >= static_cast<uint64_t>(options_.signature_failures_per_minute)) {
    raised.signature_failures = new_failures;
    log::warn("signature_failures")
        .num("last_minute", static_cast<int64_t>(new_failures))
        .num("alert_signature_failures_per_minute", options_.signature_failures_per_minute)
        .str("check", "was the signing secret rotated? signing_secret_files must hold the new one (SIGHUP reloads)");
  }
  return raised;
}

}  // namespace hh::metrics
