#pragma once
// Link codes for the iOS SDK (service interface: POST /v2/link/code/create): a short-lived
// code with which a mobile app shares on-device health data for one user.
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "fetcher/calls/service_request.h"

namespace hh::fetcher {

// The interface's Link code; all three fields are required.
struct LinkCode {
  std::string code;          // ^(sk|pk)(eu|us)([\da-f]{8})
  std::string exchange_url;  // <app_scheme>://<app_host>?code=<code>
  std::string expires_at;    // date-time, as the service wrote it
};

// `code` matches the interface's pattern ^(sk|pk)(eu|us)([\da-f]{8}) (anchored at the
// start only, as written there).
bool is_link_code(std::string_view code);

// POST /v2/link/code/create?user_id=…[&expires_at=…] (no body). `expires_at` is sent as
// given (an RFC 3339 time; the caller checks it); without it the service's default
// applies (one hour). An answer whose code or exchange URL does not match the
// interface's pattern, or without a readable expires_at, is an error, not a code.
Result<LinkCode> create_link_code(const ServiceAccess& access, std::string_view user_id,
                                  std::optional<std::string_view> expires_at);

}  // namespace hh::fetcher
