#pragma once
// What a command needs to call the service ([service] base URL, key header, CA file, and
// the API key read from api_key_file), for refresh and purge-user --deregister.
#include <optional>
#include <string_view>

#include "config/settings.h"
#include "fetcher/service_calls.h"

namespace hh::cli {

// On error (no api_key_file, or it cannot be read) prints one line and returns nullopt
// (exit with kExitBadConfig).
std::optional<fetcher::ServiceAccess> service_access_or_report(const config::Settings& settings,
                                                               std::string_view command);

}  // namespace hh::cli
