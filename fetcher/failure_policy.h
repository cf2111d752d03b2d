#pragma once
// Which failed fetches are worth retrying (spec §5, reference notes §3):
//   2xx                      success
//   408, 429, 5xx            retried with backoff; 429 and 503 honour Retry-After
//   other 4xx                final (401 bad key, 404 unknown workout, 422 ...): dead at once
//   3xx                      final: redirects are never followed (the API key must not
//                            travel to another host); the base URL needs fixing (a 304,
//                            to a request with no cache check, is the service's fault)
//   certificate rejected     final: retrying cannot fix a wrong CA or host name
//   body over the limit      final: the same request returns the same size
//   anything else            retried (timeouts, resets, truncation, malformed JSON, gzip errors)
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fetcher/https_client.h"

namespace hh::fetcher {

struct FailureVerdict {
  bool final = false;
  std::optional<int64_t> retry_after_s;  // only for 429/503 with a readable Retry-After
  std::string error;                     // for jobs.last_error and the log
};

// A response with a non-2xx status. `body_excerpt` is shown (sanitised, shortened). With
// `not_found_retried`, a 404 is retried like a 5xx: a lab report parsing job's results
// (kind parsing_job) may not be readable yet right after the event that announced them.
// `base_url_setting` is where the request's base URL came from, named for a redirect (a
// team's job: "service.teams[N].base_url").
FailureVerdict judge_status(const FetchResult& response, int64_t now_s, bool not_found_retried = false,
                            std::string_view base_url_setting = "service.base_url");
// A fetch that produced no response.
FailureVerdict judge_failure(const FetchResult& failure);

// The label a request is counted under in metrics (metrics/fetch_metrics.h):
// "ok" (2xx), "http_429", "http_4xx", "http_5xx", "http_other", or failure_name().
std::string_view request_outcome(const FetchResult& result);

}  // namespace hh::fetcher
