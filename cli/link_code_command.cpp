// healthhook link-code: a link code with which the customer's iOS app shares a user's
// on-device health data (POST /v2/link/code/create).
//
//   healthhook link-code USER_ID [--expires-at TIME] [--team TEAM_ID]
//
// Prints {"user_id","code","exchange_url","expires_at"} as one JSON line. The user's team
// decides the base URL and key (cli/service_access.h). An answer whose code does not match
// the interface's pattern is a failure. Exit 0 done, 1 the call failed, 2 bad input or
// configuration (nothing is sent then).
#include "cli/command_support.h"
#include "cli/commands.h"
#include "fetcher/recovery_input.h"
#include "cli/service_access.h"
#include "cli/service_input.h"
#include "common/json_writer.h"
#include "common/timestamp.h"
#include "fetcher/calls/link_codes.h"

namespace hh::cli {
namespace {

struct LinkCodeFlags {
  SettingsFlags settings;
  std::string user_id;
  std::optional<std::string> expires_at;
  std::optional<std::string> team;
};

int run_link_code(const LinkCodeFlags& flags) {
  constexpr std::string_view kCommand = "link-code";
  if (auto checked = fetcher::check_user_id(flags.user_id); !checked) return report_call_failure(kCommand, checked.error(), ErrorKind::data);
  if (flags.expires_at) {
    if (auto checked = check_future_time("--expires-at", *flags.expires_at, unix_now_ms()); !checked) {
      return report_call_failure(kCommand, checked.error(), ErrorKind::data);
    }
  }
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  auto access = service_access_or_report(*settings, kCommand, team_of_user(*settings, flags.user_id, flags.team));
  if (!access) return kExitBadConfig;
  std::optional<std::string_view> expires_at;
  if (flags.expires_at) expires_at = *flags.expires_at;
  auto link = fetcher::create_link_code(*access, flags.user_id, expires_at);
  if (!link) return report_call_failure(kCommand, link.error(), link.error_kind());
  std::string out;
  json::ObjectWriter(out)
      .string("user_id", flags.user_id)
      .string("code", link->code)
      .string("exchange_url", link->exchange_url)
      .string("expires_at", link->expires_at)
      .close();
  print_json_line(out);
  return kExitOk;
}

}  // namespace

void add_link_code_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<LinkCodeFlags>();
  auto* command = app.add_subcommand("link-code", "Create a link code for the iOS SDK (POST /v2/link/code/create)");
  add_settings_flags(*command, flags->settings, false);
  command->add_option("user_id", flags->user_id, "The service's user id (a UUID)")->required();
  command->add_option("--expires-at", flags->expires_at,
                      "When the code expires, RFC 3339 with an offset (default: the service's, one hour)");
  command->add_option("--team", flags->team, "The user's team id, for [[service.teams]] (default: the team the user's deliveries named)");
  command->callback([flags, &exit_code] { exit_code = run_link_code(*flags); });
}

}  // namespace hh::cli
