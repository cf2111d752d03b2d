// healthhook check-config: loads settings and secrets exactly as `serve` would, checks
// the signing secrets decode and the TLS certificate and key load (and that the certificate
// is within its validity period: a warning when it ends within 14 days), and prints the
// effective settings (never a secret): max_connections as serve fits it to the
// file-descriptor limit, max_body_bytes and max_inflight_body_mib as serve fits them to the
// store and to each other, a database file as the absolute path checked. --online also
// checks that service.base_url answers
// and accepts the API key (cli/service_probe.h), and the same for each [[service.teams]]
// entry with its base URL and key; with [management] it lists the organization's teams
// and names each [[service.teams]] entry the organization does not have. Exit 2 for a
// configuration the check proves wrong (including a refused key or a team the
// organization does not have), 1 when the service cannot be reached.
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "app/certificate_validity.h"
#include "app/limits_that_fit.h"
#include "app/store_settings.h"
#include "app/tls_files.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/service_access.h"
#include "cli/service_probe.h"
#include "common/json_writer.h"
#include "common/timestamp.h"
#include "common/uuid_text.h"
#include "config/secrets.h"
#include "config/settings_reference.h"
#include "config/toml_json.h"
#include "fetcher/calls/org_teams.h"
#include "receiver/http/listener.h"
#include "receiver/signature/webhook_signature.h"
#include "store/database_location.h"
#include "store/open_readers.h"
#include "store/open_store.h"
#include "store/read_store.h"

namespace hh::cli {
namespace {

struct CheckConfigFlags {
  SettingsFlags settings;
  bool online = false;
};

// One --online probe; `where` names the settings ("service" or "service.teams[0]").
// Returns the exit status of a failure (reported), or nullopt when the service accepted
// the key.
std::optional<int> probe_or_report(const config::Settings& settings, const std::string& api_key,
                                   const std::string& where, ServiceProbe& probe) {
  probe = probe_service(settings, api_key);
  switch (probe.verdict) {
    case ServiceProbe::Verdict::ok: return std::nullopt;
    case ServiceProbe::Verdict::key_refused:
      report_error("check-config", where + ".api_key_file: " + probe.detail + " at " + probe.url);
      return kExitBadConfig;
    case ServiceProbe::Verdict::unreachable:
    case ServiceProbe::Verdict::unexpected_status:
      report_error("check-config", where + ".base_url: " +
                                       (probe.url.empty() ? settings.service.base_url : probe.url) + ": " +
                                       probe.detail);
      return kExitFailure;
  }
  return kExitFailure;
}

// --online with [management]: the organization's teams; every [[service.teams]] entry must
// be one of them. Returns the exit status of a failure (reported), or nullopt and the
// number of teams listed.
std::optional<int> compare_teams_or_report(const config::Settings& settings, int64_t& listed) {
  constexpr std::string_view kCommand = "check-config";
  auto access = management_access_or_report(settings, kCommand);
  if (!access) return kExitBadConfig;
  auto teams = fetcher::list_org_teams(*access, settings.management.org_id, {});
  if (!teams) {
    const bool refused = teams.error().find(": HTTP 401: ") != std::string::npos ||
                         teams.error().find(": HTTP 403: ") != std::string::npos;
    report_error(kCommand, "management: " + teams.error());
    return refused ? kExitBadConfig : failure_exit_code(teams.error_kind());
  }
  listed = static_cast<int64_t>(teams->size());
  bool all_known = true;
  for (size_t i = 0; i < settings.service.teams.size(); ++i) {
    const std::string& team_id = settings.service.teams[i].team_id;
    const bool known = std::any_of(teams->begin(), teams->end(),
                                   [&](const fetcher::OrgTeam& team) { return same_uuid(team.id, team_id); });
    if (!known) {
      report_error(kCommand, "service.teams[" + std::to_string(i) + "].team_id: \"" + team_id +
                                 "\" is not a team of organization " + settings.management.org_id);
      all_known = false;
    }
  }
  if (!all_known) return kExitBadConfig;
  return std::nullopt;
}

// One key's value in `values`: integers and true/false as themselves, a TOML string as its
// text, anything else (a list, a table) as its TOML text.
// A key's TOML value as JSON: numbers and booleans as themselves, lists and tables as JSON
// arrays and objects (config/toml_json.h).
void add_setting(json::ObjectWriter& values, const std::string& name, const std::string& toml) {
  values.raw(name, config::toml_value_as_json(toml));
}

// A list of tables ([[forward]], [[service.teams]]) as a JSON array of objects.
std::string tables_array(const std::vector<std::vector<std::pair<std::string, std::string>>>& tables) {
  std::string out = "[";
  for (const auto& table : tables) {
    if (out.size() > 1) out += ",";
    json::ObjectWriter entry(out);
    for (const auto& [name, toml] : table) add_setting(entry, name, toml);
    entry.close();
  }
  return out + "]";
}

// Every key's value in effect as one JSON object; the lists of tables as arrays of them.
std::string settings_object(const config::Settings& settings) {
  std::string out;
  json::ObjectWriter values(out);
  for (const auto& [name, toml] : config::settings_in_effect(settings)) {
    if (name == "database") {  // a URI's password never shows
      values.string(name, store::loggable_location(settings.database));
      continue;
    }
    add_setting(values, name, toml);
  }
  values.raw("forward", tables_array(config::forward_blocks_in_effect(settings)));
  values.raw("service.teams", tables_array(config::teams_in_effect(settings)));
  values.close();
  return out;
}

// What serve would start with but warn about: said, not failed (exit 0).
void print_warning(const std::string& message) { std::cerr << "healthhook check-config: warning: " << message << "\n"; }

int run_check_config(const CheckConfigFlags& flags) {
  auto settings = load_settings_or_report(flags.settings, "check-config");
  if (!settings) return kExitBadConfig;
  auto secrets = config::load_secrets(*settings);
  if (!secrets) {
    report_error("check-config", secrets.error());
    return kExitBadConfig;
  }
  // The management key is read as `teams` reads it, with its words. `serve` never reads it
  // (an operator's key, often not the service user's to read), so offline a missing or
  // unreadable file is a warning, not a refusal of a configuration serve runs with;
  // --online needs it and refuses below, as `teams` does.
  if (!settings->management.url.empty() && !flags.online) {
    if (auto key = config::read_api_key_file(settings->management.key_file, settings->base_dir); !key) {
      print_warning("management.key_file: " + key.error() +
                    " (serve does not read it; `teams` and `check-config --online` need it)");
    }
  }
  auto verifier = signature::Verifier::create(secrets->signing_secrets, settings->timestamp_tolerance_s);
  if (!verifier) {
    report_error("check-config", "signing_secret_files: " + verifier.error());
    return kExitBadConfig;
  }
  auto kind = store::database_kind(settings->database);
  if (!kind) {
    report_error("check-config", kind.error());
    return kExitBadConfig;
  }
  // A postgresql:// URI is checked by connecting. A database file is checked for what serve
  // writes, as the user running this (run check-config as the service's user): its folder
  // must exist; the file and its -wal and -shm where they exist, and always the folder, where
  // serve makes the -wal, -shm and lock files at each start (SQLite removes -wal and -shm when
  // its last connection closes), must be writable. All of it beside the real file, when the
  // path is a symbolic link.
  if (*kind == store::DatabaseKind::sqlite_file) {
    // What it is first: /dev/null is a device before its folder is one this user may not write.
    if (auto file_kind = store::check_sqlite_store_path(settings->database); !file_kind) {
      report_error("check-config", "database: " + file_kind.error());
      return kExitBadConfig;
    }
    std::error_code ec;
    std::filesystem::path file = std::filesystem::absolute(settings->database);
    if (std::filesystem::is_symlink(file, ec)) {
      const auto target = std::filesystem::canonical(file, ec);
      if (ec) {
        report_error("check-config", "database: " + file.string() + ": the link leads nowhere: " + ec.message());
        return kExitBadConfig;
      }
      file = target;
    }
    const std::string folder = file.parent_path().string();
    if (!std::filesystem::is_directory(folder, ec)) {
      report_error("check-config", "database: folder " + folder + " does not exist");
      return kExitBadConfig;
    }
    for (const std::string& path : {folder, file.string(), file.string() + "-wal", file.string() + "-shm"}) {
      if (::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), W_OK) != 0) {
        const bool is_folder = path == folder;
        report_error("check-config", "database: " + std::string(is_folder ? "folder " : "") + path +
                                         " is not writable by this user" +
                                         (is_folder ? " (serve makes its -wal, -shm and lock files there)" : "") +
                                         ": " + std::strerror(errno));
        return kExitBadConfig;
      }
    }
  }
  // What serve opens at start, opened now: a store file that is there, the listen address,
  // the CA files of the service and of each [[forward]].
  // What serve would warn about in the location (none for a SQLite file): notes below, and
  // the plain-text risk in the summary line.
  const auto location_warnings = app::location_warnings(settings->database);
  if (*kind == store::DatabaseKind::sqlite_file) {
    if (auto opened = store::check_sqlite_store_file(settings->database); !opened) {
      report_error("check-config", "database: " + opened.error());
      return kExitBadConfig;
    }
  } else {
    // Said before connecting, as serve says them: a connection that fails still shows them.
    for (const auto& warning : location_warnings) {
      std::cerr << "healthhook check-config: note: database: " << warning.detail << "\n";
    }
    auto database = database_or_report(*settings, "check-config");
    if (!database) return kExitBadConfig;
    if (auto connected = store::check_postgres_store(*database); !connected) {
      report_error("check-config", "database: " + connected.error());
      return kExitBadConfig;
    }
  }
  boost::asio::io_context io;
  auto bindable = http::check_listen_address(io, settings->listen);
  if (!bindable) {
    report_error("check-config", bindable.error());
    return kExitBadConfig;
  }
  if (*bindable == http::BindCheck::in_use) {
    // Most often the running serve whose configuration this is: said, not failed.
    std::cerr << "healthhook check-config: note: listen: " << settings->listen
              << " is in use now (serve cannot start there until its holder stops)\n";
  }
  auto loaded = app::check_tls_files(*settings);
  if (!loaded) {
    report_error("check-config", loaded.error());
    return kExitBadConfig;
  }
  if (*loaded) {
    // serve starts with such a certificate (and warns): every client's handshake fails.
    const auto validity = app::certificate_validity(**loaded, unix_now_ms() / 1000);
    switch (validity.verdict) {
      case app::CertificateValidity::Verdict::valid: break;
      case app::CertificateValidity::Verdict::expires_soon: print_warning(validity.detail); break;
      case app::CertificateValidity::Verdict::expired:
      case app::CertificateValidity::Verdict::not_yet_valid:
        report_error("check-config", validity.detail);
        return kExitBadConfig;
    }
  }
  // The max_connections serve would run with, by the function serve fits it with, and what
  // serve would warn about it.
  const app::ConnectionsFit connections =
      app::fit_connections(settings->max_connections, app::outgoing_sockets(*settings));
  if (!connections.nofile_error.empty()) {
    print_warning("nofile_limit: cannot raise the file-descriptor limit: " + connections.nofile_error);
  }
  if (!connections.reason.empty()) {
    print_warning("max_connections: " + std::to_string(connections.configured) + " lowered to " +
                  std::to_string(connections.max_connections) + " (file-descriptor limit " +
                  std::to_string(connections.nofile_limit) + ", outgoing_sockets " +
                  std::to_string(connections.outgoing) + "): " + connections.reason);
  }
  config::Settings in_effect = *settings;
  in_effect.max_connections = static_cast<int64_t>(connections.max_connections);
  // max_body_bytes and the in-flight body budget as serve fits them at start (the limit to
  // one row of this store, the budget to one body the limit allows), by the same functions,
  // with the warnings serve logs.
  const app::BodyLimitFit body = app::fit_body_limit(*settings, store::max_delivery_bytes(*kind));
  if (!body.reason.empty()) {
    print_warning("max_body_bytes: " + std::to_string(body.configured) + " lowered to " +
                  std::to_string(body.max_body_bytes) + " (one row of this store holds " +
                  std::to_string(body.row_bytes) + " bytes with the headers, max_header_bytes " +
                  std::to_string(settings->max_header_bytes) + "): " + body.reason);
  }
  const app::InflightBudgetFit budget = app::fit_inflight_budget(*settings, body.max_body_bytes);
  if (!budget.reason.empty()) {
    print_warning("max_inflight_body_mib: " + std::to_string(budget.configured_mib) + " raised to " +
                  std::to_string(budget.budget_bytes) + " bytes (max_body_bytes): " + budget.reason);
  }
  in_effect.max_body_bytes = static_cast<int64_t>(body.max_body_bytes);
  // The setting counts whole MiB: the budget rounded up (its bytes are in the summary).
  constexpr uint64_t kMiB = 1024 * 1024;
  in_effect.max_inflight_body_mib = static_cast<int64_t>((budget.budget_bytes + kMiB - 1) / kMiB);
  // A relative database file is taken from the working directory (serve's too): the file
  // checked, said as an absolute path, shows which one that was.
  if (*kind == store::DatabaseKind::sqlite_file) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(settings->database, ec);
    if (!ec) in_effect.database = absolute.lexically_normal().string();
  }
  std::optional<ServiceProbe> probe;
  if (flags.online) {
    if (secrets->api_key.empty()) {
      report_error("check-config", "--online: service.api_key_file is not set, so there is no API key to check");
      return kExitBadConfig;
    }
    probe.emplace();
    if (auto failed = probe_or_report(*settings, secrets->api_key, "service", *probe)) return *failed;
    for (size_t i = 0; i < settings->service.teams.size(); ++i) {
      config::Settings team = *settings;
      team.service.base_url = settings->service.teams[i].base_url;
      ServiceProbe team_probe;
      const std::string where = "service.teams[" + std::to_string(i) + "]";
      if (auto failed = probe_or_report(team, secrets->team_api_keys.at(i), where, team_probe)) return *failed;
    }
  }
  std::optional<int64_t> management_teams;
  if (flags.online && !settings->management.url.empty()) {
    int64_t listed = 0;
    if (auto failed = compare_teams_or_report(*settings, listed)) return *failed;
    management_teams = listed;
  }
  std::string out;
  json::ObjectWriter object(out);
  object.string("status", "ok")
      .string("listen", settings->listen)
      .string("database", store::loggable_location(in_effect.database))
      .string("webhook_path", settings->webhook_path)
      .integer("max_body_bytes", in_effect.max_body_bytes)
      .integer("max_inflight_body_bytes", static_cast<int64_t>(budget.budget_bytes))
      .integer("max_connections", in_effect.max_connections)
      .integer("signing_secrets", static_cast<int64_t>(secrets->signing_secrets.size()))
      .integer("timestamp_tolerance_s", settings->timestamp_tolerance_s)
      .string("synchronous", settings->synchronous)
      .string("service_base_url", settings->service.base_url)
      .boolean("follow_ups", !secrets->api_key.empty())
      .integer("service_teams", static_cast<int64_t>(settings->service.teams.size()))
      .integer("retention_body_days", settings->retention.body_days)
      .boolean("read_api", !secrets->read_api_token.empty())
      .boolean("tls", !settings->tls.cert_file.empty());
  if (probe) object.string("service_checked", probe->url).integer("service_status", probe->status);
  object.raw("settings", settings_object(in_effect));
  if (management_teams) object.integer("management_teams", *management_teams);
  for (const auto& warning : location_warnings) {
    if (std::string_view(warning.event) == "database_plaintext_risk") object.string("database_warning", warning.detail);
  }
  object.close();
  std::cout << out << "\n";
  return kExitOk;
}

}  // namespace

void add_check_config_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<CheckConfigFlags>();
  auto* command = app.add_subcommand("check-config", "Check the configuration and secrets, print the effective settings");
  add_settings_flags(*command, flags->settings);
  command->add_flag("--online", flags->online,
                    "Also GET <service.base_url>/v2/providers with the API key: is the service reachable, is the key "
                    "accepted; with [management], are the configured teams the organization's");
  command->callback([flags, &exit_code] { exit_code = run_check_config(*flags); });
}

}  // namespace hh::cli
