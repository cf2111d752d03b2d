// healthhook teams: the organization's teams from the management endpoint
// (GET {management.url}/v1/org/{management.org_id}/team with the management key), every
// page.
//
//   healthhook teams [--region us,eu] [--search TEXT] [--format table|jsonl] [--as-config]
//
// The table (default) shows id, region, created_on and name; jsonl one object per team.
// --as-config prints a ready [[service.teams]] block per team instead: its base URL from
// [management.base_urls] by the team's region, and a key file name to fill in. Input is
// checked first (regions us/eu, the search text against the interface's pattern). Exit 0
// done, 1 the call failed, 2 bad input or configuration (nothing is sent then).
#include <algorithm>
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/service_access.h"
#include "cli/service_input.h"
#include "common/json_writer.h"
#include "fetcher/calls/org_teams.h"

namespace hh::cli {
namespace {

struct TeamsFlags {
  SettingsFlags settings;
  std::vector<std::string> regions;
  std::optional<std::string> search;
  std::string format = "table";
  bool as_config = false;
};

// A TOML basic string: quotes and backslashes escaped, control characters dropped.
std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out.push_back(c);
  }
  return out + "\"";
}

// One line of a TOML comment: no line breaks or control characters.
std::string comment_text(std::string_view text) {
  std::string out;
  for (const char c : text) out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c);
  return out;
}

const std::string* base_url_of(const config::ManagementSettings& management, std::string_view region) {
  for (const auto& [name, url] : management.base_urls) {
    if (name == region) return &url;
  }
  return nullptr;
}

int print_as_config(const config::ManagementSettings& management, const std::vector<fetcher::OrgTeam>& teams) {
  for (const auto& team : teams) {
    if (!base_url_of(management, team.region)) {
      report_error("teams", "--as-config: management.base_urls has no entry for region " + fetcher::quoted_value(team.region) +
                                " (team " + team.id + "); add one, e.g. [management.base_urls] " +
                                comment_text(team.region) + " = \"https://…\"");
      return kExitBadConfig;
    }
  }
  std::string out;
  for (const auto& team : teams) {
    out += "# " + comment_text(team.name) + " (region " + comment_text(team.region) + ", created " +
           comment_text(team.created_on) + "); put the team's API key in the file below\n";
    out += "[[service.teams]]\n";
    out += "team_id = " + toml_string(team.id) + "\n";
    out += "base_url = " + toml_string(*base_url_of(management, team.region)) + "\n";
    out += "api_key_file = " + toml_string("team-" + team.id + ".api-key") + "\n\n";
  }
  std::cout << out << std::flush;
  return kExitOk;
}

int run_teams(const TeamsFlags& flags) {
  constexpr std::string_view kCommand = "teams";
  fetcher::TeamListing listing;
  for (std::string& region : split_list(flags.regions)) {
    if (std::find(std::begin(fetcher::kTeamRegions), std::end(fetcher::kTeamRegions), region) ==
        std::end(fetcher::kTeamRegions)) {
      return report_call_failure(kCommand, "--region: " + fetcher::quoted_value(region) + " is not us or eu", ErrorKind::data);
    }
    if (std::find(listing.regions.begin(), listing.regions.end(), region) == listing.regions.end()) {
      listing.regions.push_back(std::move(region));
    }
  }
  if (flags.search) {
    if (auto problem = fetcher::team_search_problem(*flags.search); !problem.empty()) {
      return report_call_failure(kCommand, "--search: " + problem, ErrorKind::data);
    }
    listing.search = *flags.search;
  }
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  auto access = management_access_or_report(*settings, kCommand);
  if (!access) return kExitBadConfig;
  auto teams = fetcher::list_org_teams(*access, settings->management.org_id, listing);
  if (!teams) return report_call_failure(kCommand, teams.error(), teams.error_kind());

  if (flags.as_config) return print_as_config(settings->management, *teams);
  if (flags.format == "jsonl") {
    for (const auto& team : *teams) {
      std::string line;
      json::ObjectWriter(line)
          .string("id", team.id)
          .string("name", team.name)
          .string("created_on", team.created_on)
          .string("region", team.region)
          .close();
      print_json_line(line);
    }
    return kExitOk;
  }
  std::string out = table_cell("ID", 37) + table_cell("REGION", 7) + table_cell("CREATED", 26) + "NAME\n";
  for (const auto& team : *teams) {
    out += table_cell(team.id, 37) + table_cell(team.region, 7) + table_cell(team.created_on, 26) +
           comment_text(team.name) + "\n";
  }
  std::cout << out << std::flush;
  return kExitOk;
}

}  // namespace

void add_teams_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<TeamsFlags>();
  auto* command = app.add_subcommand("teams", "List the organization's teams ([management]; every page)");
  add_settings_flags(*command, flags->settings, false);
  command->add_option("--region", flags->regions, "Only teams of these regions: us, eu (comma-separated)");
  command->add_option("--search", flags->search, "Only teams whose name matches this text (at most 80 characters)");
  command->add_option("--format", flags->format, "table (default) or jsonl")->check(CLI::IsMember({"table", "jsonl"}));
  command->add_flag("--as-config", flags->as_config,
                    "Print a [[service.teams]] block per team (base URL from [management.base_urls])");
  command->callback([flags, &exit_code] { exit_code = run_teams(*flags); });
}

}  // namespace hh::cli
