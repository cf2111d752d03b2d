#include "fetcher/providers_sync.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/asio_token.h"
#include "common/json_scan.h"
#include "common/json_writer.h"
#include "common/log.h"
#include "fetcher/failure_policy.h"

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
    co_return fail(judge_status(response, options_.now_ms() / 1000).error + " (" + url + ")");
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
  auto retry_delay = options_.retry_initial;
  while (!stopping.load()) {
    auto attempt = sync_once();
    auto synced = co_await std::move(attempt);
    if (stopping.load()) break;  // a request cut off by the stop is no failure to report
    std::chrono::milliseconds wait = options_.interval;
    if (synced) {
      log::info("providers_synced").num("stored", *synced ? 1 : 0);
      retry_delay = options_.retry_initial;
    } else {
      log::warn("providers_sync_failed").str("error", synced.error()).num("retry_in_ms", retry_delay.count());
      wait = retry_delay;
      retry_delay = std::min(retry_delay * 2, options_.retry_max);
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
