#pragma once
// What a command needs to call the service for one user: the base URL and API key of the
// user's team ([[service.teams]]) or of [service], with [service]'s key header, CA file
// and deadlines, for refresh and purge-user --deregister. The team is `--team` when given,
// else the one the user's deliveries named (`users.team_id` in the database), else none:
// [service] itself.
#include <optional>
#include <string>
#include <string_view>

#include "config/settings.h"
#include "fetcher/service_calls.h"

namespace hh::cli {

// The user's team as above ("" when none is known). `team_flag` wins; without it the
// database is read (a missing database or user means no team).
std::string team_of_user(const config::Settings& settings, std::string_view user_id,
                         const std::optional<std::string>& team_flag);

// On error (no API key file for that team, or it cannot be read) prints one line and
// returns nullopt (exit with kExitBadConfig).
std::optional<fetcher::ServiceAccess> service_access_or_report(const config::Settings& settings,
                                                               std::string_view command, std::string_view team_id);

}  // namespace hh::cli
