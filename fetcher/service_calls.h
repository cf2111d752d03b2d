#pragma once
// The service's user-management calls (service interface: POST /v2/user/refresh/{user_id},
// DELETE /v2/user/{user_id}/{provider}, PATCH /v2/user/{user_id}) for the command line:
// one request each (calls/service_request.h). Blocking; nothing is retried, since every
// one changes something on the service.
//
// Input is checked before anything is sent: a user id that is not a UUID or an empty
// provider fails with ErrorKind::data and no request. A provider outside the interface's
// enum is sent (the enum is non-exhaustive; warning about it is the caller's choice).
// Other failures: ErrorKind::io when no response arrived (connect, TLS, timeout), and
// ErrorKind::other for a non-2xx status or a body without the documented fields. Messages
// are one line and name the method and URL; the API key is never in them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "fetcher/calls/service_request.h"

namespace hh::fetcher {

// The `timeout` query of a refresh: the service's range and default (service interface,
// Limits).
inline constexpr int64_t kRefreshTimeoutMinS = 5;
inline constexpr int64_t kRefreshTimeoutMaxS = 60;
inline constexpr int64_t kRefreshTimeoutDefaultS = 10;

// The interface's "Refresh result"; sources read "<provider_slug>/<resource>[/…]".
struct RefreshResult {
  bool success = false;
  std::string user_id;
  std::vector<std::string> refreshed_sources;
  std::vector<std::string> in_progress_sources;
  std::vector<std::string> failed_sources;
};

// POST /v2/user/refresh/{user_id}?timeout=timeout_s. The service may take up to timeout_s
// to answer, so the wait for the answer is at least that long. A timeout_s outside the
// service's range fails with ErrorKind::data.
Result<RefreshResult> refresh_user(const ServiceAccess& access, std::string_view user_id, int64_t timeout_s);

// DELETE /v2/user/{user_id}/{provider}: the service's `success`. The interface's caveat
// for callers to show: only cloud providers are well defined; with the mobile SDK's Auto
// Connect mode, deregistering apple_health_kit, health_connect or samsung_health has no
// effect (those are disconnected in the SDK).
Result<bool> deregister_user(const ServiceAccess& access, std::string_view user_id, std::string_view provider);

// The providers whose deregistration has no effect in the mobile SDK's Auto Connect mode
// (the interface's rule for DELETE /v2/user/{user_id}/{provider}).
bool is_sdk_provider(std::string_view provider);

// The fields PATCH /v2/user/{user_id} may carry (service interface, User), in the order
// sent; nullopt sends JSON null, which clears the field.
inline constexpr std::string_view kUserUpdateFields[] = {"fallback_time_zone", "fallback_birth_date",
                                                         "ingestion_start", "ingestion_end", "client_user_id"};
using UserUpdate = std::vector<std::pair<std::string, std::optional<std::string>>>;

// PATCH /v2/user/{user_id} with exactly `fields` (at least one, each named in
// kUserUpdateFields, else ErrorKind::data and no request). The values are sent as given:
// checking them is the caller's (cli/service_input.h). Returns the answer, a JSON object
// (the interface names its `detail` field).
Result<std::string> update_user(const ServiceAccess& access, std::string_view user_id, const UserUpdate& fields);

}  // namespace hh::fetcher
