#pragma once
// Keeps the `providers` table current (spec §4 "Identity": provider names and logos are
// deprecated in payloads and read from GET /v2/providers instead).
//
// The list is fetched at start and then every `interval` (a day), and stored like any
// fetched page: an inbox row with origin 'fetch', event type "fetch.providers" and message
// id "fetch:providers:<Unix ms>", so the processor derives the table from it and `rebuild`
// re-creates it. A list equal to the newest one stored (by this or an earlier run) is
// not stored again.
//
// Never fatal, never in the way: a failure (an HTTP status, a transport error or timeout,
// a body that is not a JSON array) is logged and retried after service.backoff_initial_s,
// doubling up to service.backoff_max_s; deliveries and the processor go on as if nothing
// happened. A 429 or 503 is the service asking every request to wait, as a job's is
// (service_pauses.h): it pauses the service, jobs to it included, until its Retry-After (at
// most a day) or else the backoff has passed, and the list is not asked for meanwhile; a
// pause a job met holds the list back the same way. Runs on the fetcher's io thread with
// the fetcher's client.
#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "common/result.h"
#include "fetcher/https_client.h"
#include "fetcher/job_runner.h"
#include "fetcher/service_pauses.h"
#include "fetcher/writer_link.h"

namespace hh::fetcher {

inline constexpr std::chrono::hours kProvidersInterval{24};

struct ProvidersSyncOptions {
  std::chrono::milliseconds interval = kProvidersInterval;
  std::chrono::milliseconds retry_initial{5000};
  std::chrono::milliseconds retry_max{3600 * 1000};
  std::function<int64_t()> now_ms;  // Unix ms, for the message id and received_at
  RequestObserver observe_request;  // may be empty
  // The newest stored list (store::newest_body_with_id_prefix), read once before the first
  // comparison; may be empty (then the first list fetched is stored).
  std::function<Result<std::optional<std::string>>()> newest_stored;
};

inline constexpr std::string_view kProvidersMessagePrefix = "fetch:providers:";

class ProvidersSync {
 public:
  // `client`, `writer` and `pauses` (shared with the jobs) must outlive this object.
  ProvidersSync(HttpsClient& client, WriterLink& writer, ServicePauses& pauses, ProvidersSyncOptions options)
      : client_(client), writer_(writer), pauses_(pauses), options_(std::move(options)),
        retry_delay_(options_.retry_initial) {}

  // One attempt: fetch the list and store it unless unchanged. true: a row was stored. A
  // 429 or 503 pauses the service (until its Retry-After, else the current backoff).
  boost::asio::awaitable<Result<bool>> sync_once();

  // sync_once() now, then on schedule, until `stopping` is set and the wait is cancelled
  // (cancel_wait(), from the io thread).
  boost::asio::awaitable<void> run(const std::atomic<bool>& stopping);
  void cancel_wait();

 private:
  HttpsClient& client_;
  WriterLink& writer_;
  ServicePauses& pauses_;
  ProvidersSyncOptions options_;
  std::chrono::milliseconds retry_delay_;  // the wait after the next failure (doubling)
  std::optional<std::string> last_stored_;  // the newest list stored; nullopt: not read yet
  std::function<void()> cancel_;
};

}  // namespace hh::fetcher
