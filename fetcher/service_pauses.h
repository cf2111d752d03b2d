#pragma once
// Which services asked every request to wait: a 429 or 503 (spec §5, "honour Retry-After
// on 429/503") pauses the service that answered it, one client (one base URL and key),
// until its Retry-After or the backoff has passed; meanwhile nothing is sent to it. Shared
// by the jobs (job_runner.h) and the provider list (providers_sync.h), so a pause either
// meets holds the other back too: a provider list answered 429 was asked again every few
// seconds while stream jobs kept going to the same service. Io thread only.
#include <cstdint>
#include <string>
#include <unordered_map>

namespace hh::fetcher {

class HttpsClient;

struct ServicePause {
  int64_t until_ms = 0;  // Unix ms
  std::string cause;     // the answer that asked for it, for the held-back job's last_error
};

class ServicePauses {
 public:
  // Pauses `service` until `until_ms`, never shortening a longer pause already set (a later,
  // shorter Retry-After does not let requests through sooner than an earlier one asked).
  void pause(const HttpsClient& service, int64_t until_ms, std::string cause);
  // The pause of `service` still running at `now_ms`; null when requests may go.
  const ServicePause* active(const HttpsClient& service, int64_t now_ms) const;

 private:
  std::unordered_map<const HttpsClient*, ServicePause> pauses_;
};

}  // namespace hh::fetcher
