#pragma once
// What a command needs to call the service: the base URL and API key of the user's team
// ([[service.teams]]) or of [service], with [service]'s key header, CA file and deadlines
// (refresh, user, link-code, purge-user --deregister; and with `--team` the team-level
// commands: connections, lab-report, labs, lab-accounts, markers, area). For a user, the
// team is `--team` when given, else the one the user's deliveries named (`users.team_id`
// in the database), else none: [service] itself. Also [management]'s URL and key, and
// how these commands report and print.
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

// A --team the configuration's [[service.teams]] entries do not have, when there are any:
// false after printing one line (exit with kExitBadConfig). "" and any team without
// entries are fine ([service] serves them).
bool check_team_flag(const config::Settings& settings, std::string_view command, std::string_view team_id);

// On error (an unknown --team, no API key file for that team, or it cannot be read) prints
// one line and returns nullopt (exit with kExitBadConfig).
std::optional<fetcher::ServiceAccess> service_access_or_report(const config::Settings& settings,
                                                               std::string_view command, std::string_view team_id);

// [management]'s URL with the management key (header X-Management-Key) and [service]'s CA
// file and deadlines. On error (no [management] url, key file unreadable) prints one line
// and returns nullopt (exit with kExitBadConfig).
std::optional<fetcher::ServiceAccess> management_access_or_report(const config::Settings& settings,
                                                                  std::string_view command);

// Prints a failed call as one line and returns its exit status: kExitBadConfig when the
// input was at fault (ErrorKind::data), else kExitFailure.
int report_call_failure(std::string_view command, const std::string& error, ErrorKind kind);

// Prints `json` (the service's answer, or ours) minified on one line of stdout.
void print_json_line(std::string_view json);
// An answer that is an array of objects, one element a line (the commands' promise: one
// JSON object per line); an empty array prints nothing; any other answer is one line.
void print_json_lines(std::string_view json);

}  // namespace hh::cli
