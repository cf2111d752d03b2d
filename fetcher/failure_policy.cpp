#include "fetcher/failure_policy.h"

#include "common/http_client/outcome.h"
#include "common/http_client/retry_after.h"
#include "fetcher/calls/service_request.h"
#include "store/jobs/retry_policy.h"

namespace hh::fetcher {
namespace {

constexpr size_t kExcerptChars = 200;

// Printable ASCII only: the excerpt ends up in a log line and a terminal table.
std::string excerpt(std::string_view body) {
  std::string out;
  for (const char c : body.substr(0, kExcerptChars)) {
    out.push_back(c >= 0x20 && c < 0x7f ? c : ' ');
  }
  if (body.size() > kExcerptChars) out += "...";
  return out;
}

}  // namespace

FailureVerdict judge_status(const FetchResult& response, int64_t now_s, bool not_found_retried,
                            std::string_view base_url_setting) {
  FailureVerdict verdict;
  const unsigned status = response.status;
  verdict.error = http_client::status_error(status, excerpt(response.body));
  if (status / 100 == 3) {
    verdict.final = true;
    verdict.error += status_hint(status, base_url_setting);  // a 304 is no redirect
    return verdict;
  }
  if (status / 100 == 4 && status != 408 && status != 429 && !(not_found_retried && status == 404)) {
    verdict.final = true;
    return verdict;
  }
  if ((status == 429 || status == 503) && response.retry_after) {
    verdict.retry_after_s = http_client::parse_retry_after(*response.retry_after, now_s);
    if (verdict.retry_after_s && *verdict.retry_after_s > store::kMaxRetryAfterSeconds) {
      // The wait is capped (store/jobs/retry_policy.h): say so, and quote the header as sent
      // (a value too large for a number was read as 2^31 - 1, which the service never said).
      static_assert(store::kMaxRetryAfterSeconds == 24 * 3600, "the message says a day");
      std::string asked = excerpt(*response.retry_after);
      if (asked.find_first_not_of("0123456789") == std::string::npos) asked += " s";  // delay-seconds, not a date
      verdict.error += " (Retry-After: " + asked + ", more than a day: waits a day)";
    } else if (verdict.retry_after_s) {
      verdict.error += " (Retry-After: " + std::to_string(*verdict.retry_after_s) + " s)";
    }
  }
  return verdict;
}

std::string_view request_outcome(const FetchResult& result) {
  if (result.failure != FetchFailure::none) return failure_name(result.failure);
  const unsigned status = result.status;
  if (status / 100 == 2) return "ok";
  if (status == 429) return "http_429";
  if (status / 100 == 4) return "http_4xx";
  if (status / 100 == 5) return "http_5xx";
  return "http_other";
}

FailureVerdict judge_failure(const FetchResult& failure) {
  FailureVerdict verdict;
  verdict.error = std::string(failure_name(failure.failure)) + ": " + failure.error;
  verdict.final = failure.failure == FetchFailure::certificate || failure.failure == FetchFailure::too_large;
  return verdict;
}

}  // namespace hh::fetcher
