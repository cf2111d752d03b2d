#pragma once
// `check-config --online`: one GET of <service.base_url>/v2/providers with the configured
// API key, CA file and timeouts, through the fetcher's HTTPS client (the same code path,
// TLS checks and key header the follow-up fetches use). Sends nothing else; never logs the
// key.
#include <string>

#include "config/settings.h"

namespace hh::cli {

struct ServiceProbe {
  enum class Verdict { ok, unreachable, key_refused, unexpected_status };
  Verdict verdict = Verdict::unreachable;
  unsigned status = 0;  // the HTTP status, when one arrived
  std::string url;      // what was requested (no key)
  std::string detail;   // for a failure: what went wrong, one line
};

ServiceProbe probe_service(const config::Settings& settings, const std::string& api_key);

}  // namespace hh::cli
