// healthhook refresh: asks the service to pull a user's data from the providers now
// (POST /v2/user/refresh/{user_id}; spec §11 recovery, issue 37), and prints what it
// answered: the sources refreshed, still in progress and failed.
//
//   healthhook refresh USER_ID [--timeout S]
//
// Uses [service] base_url, api_key_file, api_key_header and ca_file, as the fetcher does;
// for a user of a [[service.teams]] team (--team, or the team their deliveries named),
// that team's base_url and API key.
// Refreshed data arrives as webhooks. Exit 0 when the service reports success, 1 when it
// reports failure or the call fails (network, HTTP status, unexpected answer), 2 for bad
// input or configuration (nothing is sent then).
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "fetcher/recovery_input.h"
#include "cli/service_access.h"
#include "fetcher/service_calls.h"

namespace hh::cli {
namespace {

struct RefreshFlags {
  SettingsFlags settings;
  std::string user_id;
  int64_t timeout_s = fetcher::kRefreshTimeoutDefaultS;
  std::optional<std::string> team;
};

void print_sources(std::string_view label, const std::vector<std::string>& sources) {
  std::cout << label << ":";
  if (sources.empty()) std::cout << " none";
  for (size_t i = 0; i < sources.size(); ++i) std::cout << (i ? ", " : " ") << one_line(sources[i]);
  std::cout << "\n";
}

int run_refresh(const RefreshFlags& flags) {
  constexpr std::string_view kCommand = "refresh";
  if (auto checked = fetcher::check_user_id(flags.user_id); !checked) {
    report_error(kCommand, checked.error());
    return kExitBadConfig;
  }
  if (auto checked = fetcher::check_refresh_timeout(flags.timeout_s); !checked) {
    report_error(kCommand, checked.error());
    return kExitBadConfig;
  }
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  auto access = service_access_or_report(*settings, kCommand, team_of_user(*settings, flags.user_id, flags.team));
  if (!access) return kExitBadConfig;
  auto result = fetcher::refresh_user(*access, flags.user_id, flags.timeout_s);
  if (!result) {
    report_error(kCommand, result.error());
    return failure_exit_code(result.error_kind());
  }
  print_sources("refreshed", result->refreshed_sources);
  print_sources("in progress", result->in_progress_sources);
  print_sources("failed", result->failed_sources);
  if (!result->success) {
    report_error(kCommand, "the service reported that the refresh did not succeed");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void add_refresh_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RefreshFlags>();
  auto* command = app.add_subcommand("refresh", "Ask the service to refresh a user's data from the providers now");
  add_settings_flags(*command, flags->settings, false);
  command->add_option("user_id", flags->user_id, "The service's user id (a UUID)")->required();
  command->add_option("--timeout", flags->timeout_s, "Seconds the service may wait for the sources, 5 to 60 (default 10)");
  command->add_option("--team", flags->team, "The user's team id, for [[service.teams]] (default: the team the user's deliveries named)");
  command->callback([flags, &exit_code] { exit_code = run_refresh(*flags); });
}

}  // namespace hh::cli
