#pragma once
// Alarms in the log for a service that stopped delivering (issue 37): the webhook endpoint
// records when a signature last verified and counts its 401s (http::WebhookStats); once a
// minute check() compares them with the settings:
// - silence: no verified delivery for alert_silence_minutes → one warning
//   `no_verified_delivery` (a disabled endpoint, a rotated secret, a network change), then
//   nothing until one arrives (`deliveries_resumed`): one line per episode, not per minute;
//   the same per [[service.teams]] entry, for deliveries naming that team (with "team");
// - signature failures: alert_signature_failures_per_minute or more 401s since the last
//   check → the warning `signature_failures`, each minute it lasts (a rotated secret
//   shows as a burst of 401s while the service keeps retrying).
// /metrics has the same figures for Prometheus rules (healthhook_seconds_since_last_
// verified_delivery, healthhook_signature_failures_total; systemd/README.md).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "receiver/http/webhook_endpoint.h"

namespace hh::metrics {

struct AlarmOptions {
  int64_t silence_minutes = 60;                 // 0: off
  int64_t signature_failures_per_minute = 10;  // 0: off
};

// What one check() logged (for tests; the log is the product).
struct AlarmsRaised {
  bool silence_began = false;
  bool silence_ended = false;
  uint64_t signature_failures = 0;  // 401s since the last check, when at or over the limit
  std::vector<std::string> teams_silent;  // [[service.teams]] entries whose silence began now
};

class DeliveryAlarms {
 public:
  // `stats` must outlive this object.
  DeliveryAlarms(boost::asio::io_context& io, const http::WebhookStats& stats, AlarmOptions options);

  void start();  // checks once a minute, on the io_context
  void stop();   // on an io thread; lets io.run() return
  AlarmsRaised check(int64_t now_ms);

 private:
  boost::asio::awaitable<void> run();
  enum class Change { none, began, ended };
  // One silence clock: logs when its silence begins or ends ("" team: all deliveries).
  Change check_silence(int64_t now_ms, int64_t last_ms, bool& silent_before, std::string_view team);

  boost::asio::steady_timer timer_;
  const http::WebhookStats& stats_;
  const AlarmOptions options_;
  uint64_t failures_seen_ = 0;
  bool silent_ = false;
  std::vector<bool> team_silent_;  // per stats_.team_ids
  bool stopped_ = false;
};

}  // namespace hh::metrics
