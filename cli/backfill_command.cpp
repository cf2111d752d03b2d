// healthhook backfill: queues the backfill jobs a historical.data.<resource>.created notice
// would queue (spec §11 recovery; issue 37), for pulling again what an outage missed.
//
//   healthhook backfill USER_ID --resource R[,R…] --since DATE [--until DATE] [--provider P]
//
// One job per resource and provider, for the window from --since (midnight UTC) to the end
// of --until (inclusive; default today, UTC), so the same command on the same day names
// the same jobs. Without --provider, the providers are those of the user's stored
// connections. The jobs go through the store's job administration (store/jobs/job_admin.h)
// with the notice's keys: a window already queued or running is left alone, one that ended
// (done or dead) is queued again. A running `serve` with [service] set fetches them, from
// the base URL of the user's [[service.teams]] entry (--team, else the team their
// deliveries named) or of [service].
// Without [service] api_key_file (follow-ups off) the jobs are queued with a warning that
// they wait until it is set.
// Exit 0 when jobs are queued or pending, 1 when there is nothing to queue or the database
// fails, 2 for bad input or configuration (nothing queued then).
#include <chrono>
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/service_access.h"
#include "fetcher/recovery_input.h"
#include "common/timestamp.h"
#include "store/open_store.h"
#include "store/read_store.h"

namespace hh::cli {
namespace {

using fetcher::check_provider;
using fetcher::check_resources;
using fetcher::check_user_id;
using fetcher::kDayMs;
using fetcher::parse_date_option;

struct BackfillFlags {
  SettingsFlags settings;
  std::string user_id;
  std::vector<std::string> resources;
  std::string since;
  std::optional<std::string> until;
  std::optional<std::string> provider;
  std::optional<std::string> team;
};

std::string describe_outcome(const store::QueuedBackfill& result) {
  using Outcome = store::QueuedBackfill::Outcome;
  const std::string job = "job " + std::to_string(result.job_id);
  switch (result.outcome) {
    case Outcome::queued: return "queued " + job;
    case Outcome::requeued: return "requeued " + job + " (was " + result.previous_state + ")";
    case Outcome::pending: return "already queued " + job + " (" + result.previous_state + ")";
  }
  return job;
}

int run_backfill(const BackfillFlags& flags) {
  constexpr std::string_view kCommand = "backfill";
  std::vector<std::string> warnings;
  const auto refuse = [&](const std::string& message) {
    report_error(kCommand, message);
    return kExitBadConfig;
  };
  if (auto checked = check_user_id(flags.user_id); !checked) return refuse(checked.error());
  auto resources = check_resources(flags.resources, warnings);
  if (!resources) return refuse(resources.error());
  auto start_ms = parse_date_option("--since", flags.since);
  if (!start_ms) return refuse(start_ms.error());
  int64_t last_day_ms = unix_now_ms() / kDayMs * kDayMs;  // today, UTC
  if (flags.until) {
    auto until = fetcher::parse_last_day_option("--until", *flags.until);
    if (!until) return refuse(until.error());
    last_day_ms = *until;
  }
  if (last_day_ms < *start_ms) {
    const std::string last_day = format_rfc3339_ms(last_day_ms).substr(0, 10);
    // Without --until the window ends today: name what was typed, not a flag that was not.
    if (!flags.until) return refuse("--since: " + flags.since + " is after today (" + last_day + "), where the window ends without --until");
    return refuse("--until: " + last_day + " is before --since " + flags.since);
  }
  if (flags.provider) {
    if (auto checked = check_provider(*flags.provider, warnings); !checked) return refuse(checked.error());
  }
  for (const auto& warning : warnings) report_error(kCommand, "warning: " + warning);

  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  // [service]'s key, which `serve` runs follow-ups with: a team's alone starts none.
  if (settings->service.api_key_file.empty()) {
    report_error(kCommand, "warning: " + std::string(fetcher::kNoApiKeyForBackfill));
  }
  std::vector<std::string> providers;
  if (flags.provider) {
    providers.push_back(*flags.provider);
  } else {
    int exit_code = kExitOk;
    auto reader = open_read_store_or_report(*settings, kCommand, exit_code);
    if (!reader) return exit_code;
    auto found = fetcher::connected_providers(*reader, flags.user_id);
    if (!found) {
      report_error(kCommand, found.error());
      return kExitFailure;
    }
    providers = std::move(*found);
    if (providers.empty()) {
      report_error(kCommand, "nothing queued: no connection of user " + flags.user_id +
                                 " is stored, so there is no provider to ask; give --provider");
      return kExitFailure;
    }
  }

  std::string team = flags.team.value_or(std::string());  // the windows view it
  if (!check_team_flag(*settings, kCommand, team)) return kExitBadConfig;
  // The entry's own spelling of the id (lower case) goes into the jobs, whatever case --team had.
  if (const config::TeamSettings* entry = config::find_team(settings->service, team)) team = entry->team_id;
  const std::vector<store::BackfillWindow> windows =
      fetcher::backfill_windows(flags.user_id, *resources, providers, *start_ms, last_day_ms, team);
  auto database = existing_database_or_report(*settings, kCommand);
  if (!database) return kExitBadConfig;
  auto admin = store::open_job_admin(*database);
  if (!admin) {
    report_error(kCommand, admin.error());
    return kExitFailure;
  }
  auto results = (*admin)->queue_backfills(windows, unix_now_ms());
  if (!results) {
    report_error(kCommand, "nothing queued: " + results.error());
    return kExitFailure;
  }
  for (size_t i = 0; i < windows.size(); ++i) {
    const auto& window = windows[i];
    std::cout << describe_outcome((*results)[i]) << ": " << window.resource << " from " << window.provider << ", "
              << format_rfc3339_ms(window.start_ms) << " to " << format_rfc3339_ms(window.end_ms) << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_backfill_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BackfillFlags>();
  auto* command = app.add_subcommand("backfill", "Queue backfill jobs for a user, as a historical.data notice would");
  add_settings_flags(*command, flags->settings, false);
  command->add_option("user_id", flags->user_id, "The service's user id (a UUID)")->required();
  command->add_option("--resource", flags->resources, "Resources to fetch again, comma-separated (e.g. heartrate,sleep)")
      ->delimiter(',')
      ->required();
  command->add_option("--since", flags->since, "First day, YYYY-MM-DD (UTC)")->required();
  command->add_option("--until", flags->until, "Last day, YYYY-MM-DD, inclusive (default: today, UTC)");
  command->add_option("--provider", flags->provider, "Provider slug (default: each provider the user is connected to)");
  command->add_option("--team", flags->team,
                      "The user's team id, for [[service.teams]] (default: the team the user's deliveries named)");
  command->callback([flags, &exit_code] { exit_code = run_backfill(*flags); });
}

}  // namespace hh::cli
