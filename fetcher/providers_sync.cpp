#include "fetcher/providers_sync.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/asio_token.h"
#include "common/json_scan.h"
#include "common/json_writer.h"
#include "common/log.h"
#include "fetcher/failure_policy.h"
#include "store/jobs/retry_policy.h"

namespace hh::fetcher {
namespace {

namespace net = boost::asio;

}  // namespace

// Coding rule of this folder (job_runner.cpp): a co_await expression holds no class-type
// temporaries (GCC PR 100611); calls are made first, then awaited.

net::awaitable<Result<bool>> ProvidersSync::sync_once() {
  auto target = build_path(client_.base(), {"v2", "providers"});
  if (!target) co_return fail(target);
  const std::string url = client_.base().full_url(*target);
  const auto started = std::chrono::steady_clock::now();
  auto get = client_.get(*target);
  FetchResult response = co_await std::move(get);
  if (options_.observe_request) {
    options_.observe_request(request_outcome(response),
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  if (response.failure != FetchFailure::none) co_return fail(judge_failure(response).error + " (" + url + ")");
  if (response.status / 100 != 2) {
    const int64_t now = options_.now_ms();
    FailureVerdict verdict = judge_status(response, now / 1000);
    std::string error = std::move(verdict.error) + " (" + url + ")";
    if (response.status == 429 || response.status == 503) {
      // As a job's 429 or 503 does (job_runner.cpp): the asked wait, at most a day, or the
      // backoff when none was asked (or 0, or a time already past).
      const int64_t asked_s = std::clamp<int64_t>(verdict.retry_after_s.value_or(0), 0, store::kMaxRetryAfterSeconds);
      pauses_.pause(client_, now + (asked_s > 0 ? asked_s * 1000 : retry_delay_.count()), error);
    }
    co_return fail(std::move(error));
  }
  if (auto valid = json::check_json(response.body); !valid) co_return fail(valid.error_kind(), valid.error() + " (" + url + ")");
  if (json::first_byte(response.body) != '[') {
    co_return fail("unexpected body: the provider list must be a JSON array (" + url + ")");
  }
  if (!last_stored_) {
    last_stored_.emplace();
    if (options_.newest_stored) {
      // Unreadable: store this list (one row too many is harmless).
      auto newest = options_.newest_stored();
      if (newest && *newest) last_stored_ = std::move(**newest);
    }
  }
  if (response.body == *last_stored_) co_return false;

  const int64_t now = options_.now_ms();
  auto row = std::make_shared<store::NewDelivery>();
  row->message_id = std::string(kProvidersMessagePrefix) + std::to_string(now);
  row->origin = store::Origin::fetch;
  row->received_at_ms = now;
  row->event_type = "fetch.providers";
  json::ObjectWriter(row->headers_json).string("kind", "providers").string("url", url).close();
  row->body = response.body;
  const std::shared_ptr<const store::NewDelivery> stored_row = std::move(row);
  auto store = writer_.store_row(stored_row);
  auto stored = co_await std::move(store);
  if (!stored) co_return fail(stored, "storing the provider list");
  last_stored_ = std::move(response.body);
  co_return !stored->duplicate;
}

net::awaitable<void> ProvidersSync::run(const std::atomic<bool>& stopping) {
  auto executor = co_await net::this_coro::executor;
  net::steady_timer timer(executor);
  cancel_ = [&timer] { timer.cancel(); };
  // How long the service's pause (ours or a job's) has still to run; 0 when none.
  const auto paused_for = [this] {
    const int64_t now = options_.now_ms();
    const ServicePause* pause = pauses_.active(client_, now);
    return std::chrono::milliseconds(pause ? pause->until_ms - now : 0);
  };
  while (!stopping.load()) {
    std::chrono::milliseconds wait = paused_for();
    if (wait.count() > 0) {
      // The service asked every request to wait: the list is not asked for either.
      log::info("providers_sync_held_back").num("retry_in_ms", wait.count());
      timer.expires_after(wait);
      co_await timer.async_wait(use_tuple);
      continue;
    }
    auto attempt = sync_once();
    auto synced = co_await std::move(attempt);
    if (stopping.load()) break;  // a request cut off by the stop is no failure to report
    wait = options_.interval;
    if (synced) {
      log::info("providers_synced").num("stored", *synced ? 1 : 0);
      retry_delay_ = options_.retry_initial;
    } else {
      wait = std::max(retry_delay_, paused_for());
      log::warn("providers_sync_failed").str("error", synced.error()).num("retry_in_ms", wait.count());
      retry_delay_ = std::min(retry_delay_ * 2, options_.retry_max);
    }
    timer.expires_after(wait);
    co_await timer.async_wait(use_tuple);
  }
  cancel_ = nullptr;
}

void ProvidersSync::cancel_wait() {
  if (cancel_) cancel_();
}

}  // namespace hh::fetcher
