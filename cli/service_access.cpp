#include "app/store_settings.h"
#include "cli/service_access.h"

#include <filesystem>
#include <iostream>

#include "cli/command_support.h"
#include "common/json_minify.h"
#include "config/secrets.h"
#include "fetcher/calls/org_teams.h"
#include "store/open_readers.h"
#include "store/database_location.h"

namespace hh::cli {

std::string team_of_user(const config::Settings& settings, std::string_view user_id,
                         const std::optional<std::string>& team_flag) {
  if (team_flag) return *team_flag;
  if (settings.service.teams.empty() || store::names_missing_file(settings.database)) return {};
  auto database = app::database(settings);
  if (!database) return {};
  const std::string team = store::stored_team_of(*database, user_id);
  // A team no [[service.teams]] entry has is [service]'s to serve, as it always was.
  return config::find_team(settings.service, team) ? team : std::string();
}

bool check_team_flag(const config::Settings& settings, std::string_view command, std::string_view team_id) {
  // With [[service.teams]] configured, a --team no entry has (a typo, not a UUID) would send
  // the call, and perhaps a batch of OAuth tokens, to [service]'s team instead: refused,
  // nothing sent. Without any entry, every team is [service]'s, as it always was.
  if (team_id.empty() || settings.service.teams.empty() || config::find_team(settings.service, team_id)) return true;
  report_error(command, "--team " + std::string(team_id).substr(0, 64) +
                            ": no [[service.teams]] entry has this team id (leave --team out for [service])");
  return false;
}

std::optional<fetcher::ServiceAccess> service_access_or_report(const config::Settings& settings,
                                                               std::string_view command, std::string_view team_id) {
  config::ServiceSettings service = settings.service;
  std::string key_setting = "service.api_key_file";
  std::string base_url_setting = "service.base_url";
  if (auto known = check_team_flag(settings, command, team_id); !known) return std::nullopt;
  if (const config::TeamSettings* team = config::find_team(settings.service, team_id)) {
    service.base_url = team->base_url;
    service.api_key_file = team->api_key_file;
    key_setting = "service.teams[" + std::to_string(team - settings.service.teams.data()) + "].api_key_file";
    base_url_setting = "service.teams[" + std::to_string(team - settings.service.teams.data()) + "].base_url";
  }
  if (service.api_key_file.empty()) {
    report_error(command, "service.api_key_file is not set: the service needs the API key");
    return std::nullopt;
  }
  auto api_key = config::read_api_key_file(service.api_key_file, settings.base_dir);
  if (!api_key) {
    report_error(command, key_setting + ": " + api_key.error());
    return std::nullopt;
  }
  fetcher::ServiceAccess access{std::move(service), std::move(*api_key), settings.base_dir};
  access.base_url_setting = std::move(base_url_setting);
  return access;
}

std::optional<fetcher::ServiceAccess> management_access_or_report(const config::Settings& settings,
                                                                  std::string_view command) {
  const config::ManagementSettings& management = settings.management;
  if (management.url.empty()) {
    report_error(command, "management.url is not set: listing teams needs [management] url, key_file and org_id");
    return std::nullopt;
  }
  auto key = config::read_api_key_file(management.key_file, settings.base_dir);
  if (!key) {
    report_error(command, "management.key_file: " + key.error());
    return std::nullopt;
  }
  fetcher::ServiceAccess access{settings.service, std::move(*key), settings.base_dir, "management key"};
  access.service.base_url = management.url;
  access.service.api_key_header = std::string(fetcher::kManagementKeyHeader);
  access.base_url_setting = "management.url";
  return access;
}

int report_call_failure(std::string_view command, const std::string& error, ErrorKind kind) {
  report_error(command, error);
  return failure_exit_code(kind);
}

void print_json_line(std::string_view json) {
  std::string line;
  json::append_minified(line, json);
  line.push_back('\n');
  std::cout << line << std::flush;
}

void print_json_lines(std::string_view json) {
  std::string minified;
  json::append_minified(minified, json);
  std::string lines;
  for (std::string_view element : json::array_elements(minified)) {
    lines.append(element);
    lines.push_back('\n');
  }
  std::cout << lines << std::flush;
}

}  // namespace hh::cli
