// healthhook labs | lab-accounts | markers | area: the service's lab lookups
// (fetcher/calls/lab_lookups.h), team-level calls ([service], or --team TEAM_ID).
//
//   healthhook labs [--format table|json]
//   healthhook lab-accounts [--status S] [--lab-account-id ID]
//   healthhook markers [--lab-slug S]
//   healthhook area ZIP [--radius 10|20|25|50|100] [--labs quest,labcorp] [--lab-account-id ID]
//
// Each prints the service's answer, one JSON line per element of an array (labs: a table by default). Input is
// checked first: the zip code is five digits and the radius one of the interface's; a lab
// outside its (non-exhaustive) list is sent with a warning. Exit 0 done, 1 the call
// failed, 2 bad input or configuration (nothing is sent then).
#include <simdjson.h>

#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/service_access.h"
#include "cli/service_input.h"
#include "fetcher/calls/lab_lookups.h"

namespace hh::cli {
namespace {

struct LabsFlags {
  SettingsFlags settings;
  std::string format = "table";
  std::optional<std::string> team;
};

struct LabAccountsFlags {
  SettingsFlags settings;
  std::optional<std::string> status, lab_account_id, team;
};

struct MarkersFlags {
  SettingsFlags settings;
  std::optional<std::string> lab_slug, team;
};

struct AreaFlags {
  SettingsFlags settings;
  std::string zip_code;
  std::optional<int64_t> radius;
  std::vector<std::string> labs;
  std::optional<std::string> lab_account_id, team;
};

// Settings and the team's access; nullopt when reported (exit kExitBadConfig).
std::optional<fetcher::ServiceAccess> lookup_access(const SettingsFlags& flags, std::string_view command,
                                                    const std::optional<std::string>& team) {
  auto settings = load_settings_or_report(flags, command);
  if (!settings) return std::nullopt;
  return service_access_or_report(*settings, command, team.value_or(""));
}

// A JSON array of strings as "a, b".
std::string joined_strings(simdjson::dom::element value) {
  std::string out;
  simdjson::dom::array items;
  if (value.get_array().get(items)) return out;
  for (auto item : items) {
    std::string_view text;
    if (item.get_string().get(text)) continue;
    out.append(out.empty() ? "" : ",").append(text);
  }
  return out;
}

void print_labs_table(const std::string& labs) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(labs);
  simdjson::dom::array items;
  if (parser.parse(padded).get_array().get(items)) return;  // checked by list_labs
  std::string out = table_cell("ID", 7) + table_cell("SLUG", 16) + table_cell("NAME", 28) + table_cell("CITY", 18) +
                    table_cell("ZIP", 8) + table_cell("COLLECTION", 40) + "SAMPLES\n";
  for (auto lab : items) {
    int64_t id = 0;
    std::string_view slug, name, city, zipcode;
    // Checked by list_labs; a value missing anyway prints empty.
    if (lab["id"].get_int64().get(id)) id = 0;
    for (auto [key, field] : {std::pair{"slug", &slug}, std::pair{"name", &name}, std::pair{"city", &city},
                              std::pair{"zipcode", &zipcode}}) {
      if (lab[key].get_string().get(*field)) *field = {};
    }
    out += table_cell(std::to_string(id), 7) + table_cell(slug, 16) + table_cell(name, 28) + table_cell(city, 18) +
           table_cell(zipcode, 8) + table_cell(joined_strings(lab["collection_methods"].value_unsafe()), 40) +
           one_line(joined_strings(lab["sample_types"].value_unsafe())) + "\n";
  }
  std::cout << out << std::flush;
}

int run_labs(const LabsFlags& flags) {
  constexpr std::string_view kCommand = "labs";
  auto access = lookup_access(flags.settings, kCommand, flags.team);
  if (!access) return kExitBadConfig;
  auto labs = fetcher::list_labs(*access);
  if (!labs) return report_call_failure(kCommand, labs.error(), labs.error_kind());
  if (flags.format == "json") {
    print_json_lines(*labs);
  } else {
    print_labs_table(*labs);
  }
  return kExitOk;
}

int run_lab_accounts(const LabAccountsFlags& flags) {
  constexpr std::string_view kCommand = "lab-accounts";
  if (flags.lab_account_id) {
    if (auto checked = check_uuid_option("--lab-account-id", *flags.lab_account_id); !checked) {
      return report_call_failure(kCommand, checked.error(), ErrorKind::data);
    }
  }
  if (flags.status && flags.status->empty()) return report_call_failure(kCommand, "--status: empty", ErrorKind::data);
  auto access = lookup_access(flags.settings, kCommand, flags.team);
  if (!access) return kExitBadConfig;
  auto accounts = fetcher::list_lab_accounts(*access, fetcher::LabAccountFilter{flags.status, flags.lab_account_id});
  if (!accounts) return report_call_failure(kCommand, accounts.error(), accounts.error_kind());
  print_json_lines(*accounts);
  return kExitOk;
}

int run_markers(const MarkersFlags& flags) {
  constexpr std::string_view kCommand = "markers";
  if (flags.lab_slug && flags.lab_slug->empty()) return report_call_failure(kCommand, "--lab-slug: empty", ErrorKind::data);
  auto access = lookup_access(flags.settings, kCommand, flags.team);
  if (!access) return kExitBadConfig;
  std::optional<std::string_view> lab_slug;
  if (flags.lab_slug) lab_slug = *flags.lab_slug;
  auto markers = fetcher::list_markers(*access, lab_slug);
  if (!markers) return report_call_failure(kCommand, markers.error(), markers.error_kind());
  print_json_lines(*markers);
  return kExitOk;
}

int run_area(const AreaFlags& flags) {
  constexpr std::string_view kCommand = "area";
  if (!fetcher::is_five_digit_zip(flags.zip_code)) {
    return report_call_failure(kCommand, "ZIP: " + fetcher::quoted_value(flags.zip_code) + " is not a five-digit zip code",
                               ErrorKind::data);
  }
  if (flags.radius && !fetcher::is_area_radius(*flags.radius)) {
    return report_call_failure(kCommand, "--radius: " + std::to_string(*flags.radius) +
                                             " miles is not one of 10, 20, 25, 50, 100", ErrorKind::data);
  }
  if (flags.lab_account_id) {
    if (auto checked = check_uuid_option("--lab-account-id", *flags.lab_account_id); !checked) {
      return report_call_failure(kCommand, checked.error(), ErrorKind::data);
    }
  }
  fetcher::AreaQuery query{flags.zip_code, flags.radius, split_list(flags.labs), flags.lab_account_id};
  std::vector<std::string> warnings;
  for (const std::string& lab : query.labs) {
    if (!fetcher::is_listed_lab(lab)) {
      warnings.push_back("--labs: " + fetcher::quoted_value(lab) +
                         " is not in the interface's list (quest, labcorp, bioreference, sonora_quest); sent anyway");
    }
  }
  auto access = lookup_access(flags.settings, kCommand, flags.team);
  if (!access) return kExitBadConfig;
  for (const auto& warning : warnings) report_error(kCommand, "warning: " + warning);
  auto area = fetcher::area_info(*access, query);
  if (!area) return report_call_failure(kCommand, area.error(), area.error_kind());
  print_json_line(*area);
  return kExitOk;
}

void add_team_option(CLI::App& command, std::optional<std::string>& team) {
  command.add_option("--team", team, "A [[service.teams]] team id: its base URL and key (default [service])");
}

}  // namespace

void add_lab_lookup_commands(CLI::App& app, int& exit_code) {
  auto labs = std::make_shared<LabsFlags>();
  auto* labs_command = app.add_subcommand("labs", "List the service's labs (GET /v3/lab_tests/labs)");
  add_settings_flags(*labs_command, labs->settings, false);
  labs_command->add_option("--format", labs->format, "table (default) or json")->check(CLI::IsMember({"table", "json"}));
  add_team_option(*labs_command, labs->team);
  labs_command->callback([labs, &exit_code] { exit_code = run_labs(*labs); });

  auto accounts = std::make_shared<LabAccountsFlags>();
  auto* accounts_command = app.add_subcommand("lab-accounts", "List the team's lab accounts (GET /v3/lab_test/lab_account)");
  add_settings_flags(*accounts_command, accounts->settings, false);
  accounts_command->add_option("--status", accounts->status, "Only accounts with this status");
  accounts_command->add_option("--lab-account-id", accounts->lab_account_id, "Only this account (a UUID)");
  add_team_option(*accounts_command, accounts->team);
  accounts_command->callback([accounts, &exit_code] { exit_code = run_lab_accounts(*accounts); });

  auto markers = std::make_shared<MarkersFlags>();
  auto* markers_command = app.add_subcommand("markers", "List the markers (GET /v3/lab_tests/markers)");
  add_settings_flags(*markers_command, markers->settings, false);
  markers_command->add_option("--lab-slug", markers->lab_slug, "Only markers of this lab");
  add_team_option(*markers_command, markers->team);
  markers_command->callback([markers, &exit_code] { exit_code = run_markers(*markers); });

  auto area = std::make_shared<AreaFlags>();
  auto* area_command = app.add_subcommand(
      "area", "Patient service centers and phlebotomy around a zip code (GET /v3/order/area/info)");
  add_settings_flags(*area_command, area->settings, false);
  area_command->add_option("zip_code", area->zip_code, "A five-digit US zip code")->required();
  area_command->add_option("--radius", area->radius, "Miles: 10, 20, 25 (the service's default), 50 or 100");
  area_command->add_option("--labs", area->labs, "Labs to check for centers, e.g. quest,labcorp");
  area_command->add_option("--lab-account-id", area->lab_account_id, "The lab account for availability (a UUID)");
  add_team_option(*area_command, area->team);
  area_command->callback([area, &exit_code] { exit_code = run_area(*area); });
}

}  // namespace hh::cli
