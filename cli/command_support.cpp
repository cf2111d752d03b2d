#include "cli/command_support.h"

#include <cstdlib>
#include <iostream>

#include "app/store_settings.h"
#include "common/glob_problem.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/timestamp.h"
#include "store/database_location.h"
#include "store/open_readers.h"
#include "store/read_rows.h"

namespace hh::cli {

void add_settings_flags(CLI::App& command, SettingsFlags& flags, bool with_listen) {
  command.add_option("-c,--config", flags.config_file, "TOML configuration file")->check(CLI::ExistingFile);
  if (with_listen) command.add_option("--listen", flags.listen, "HOST:PORT to listen on (key: listen)");
  command.add_option("--database", flags.database, "SQLite database file (key: database)");
  command.add_option("--log-level", flags.log_level, "debug, info, warn or error (key: log_level)");
  command.add_option("--set", flags.set, "Any setting as KEY=VALUE, e.g. --set service.concurrency=8")
      ->type_name("KEY=VALUE");
}

std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

std::string table_cell(std::string_view text, size_t width) {
  std::string out = one_line(text);
  if (out.size() > width) {
    out.resize(width - 3);
    out += "...";
  }
  out.resize(width, ' ');
  return out;
}

void report_error(std::string_view command, std::string_view message) {
  // On a terminal, not after a progress line.
  Progress::write_line("healthhook " + std::string(command) + ": " + std::string(message) + "\n");
}

bool window_ok(std::string_view command, std::optional<int64_t> since, std::optional<int64_t> until,
               const std::optional<std::string>& since_text, const std::optional<std::string>& until_text) {
  if (!since || !until || *since < *until) return true;
  report_error(command, "--since " + since_text.value_or("") + " is not before --until " + until_text.value_or("") +
                            same_millisecond_note(*since, *until, since_text.value_or(""), until_text.value_or("")));
  return false;
}

bool event_type_ok(std::string_view command, const std::optional<std::string>& glob) {
  if (!glob) return true;
  if (glob->empty()) {
    report_error(command, "--event-type: empty pattern");
    return false;
  }
  if (const std::string problem = store::event_type_glob_problem(*event_type_glob(glob)); !problem.empty()) {
    report_error(command, "--event-type: " + problem);
    return false;
  }
  return true;
}

std::optional<std::string> event_type_glob(const std::optional<std::string>& glob) {
  if (!glob) return std::nullopt;
  return glob_with_shell_negation(*glob);
}

Result<config::Settings> read_settings_for(const SettingsFlags& flags, config::ConfigFileKind file_kind) {
  config::Overrides overrides;
  for (const auto& entry : flags.set) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) return fail("--set " + entry + ": expected KEY=VALUE");
    overrides[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  if (flags.listen) overrides["listen"] = *flags.listen;
  if (flags.database) overrides["database"] = *flags.database;
  if (flags.log_level) overrides["log_level"] = *flags.log_level;

  auto settings = config::load_settings(
      flags.config_file, [](const char* name) -> const char* { return std::getenv(name); }, overrides, file_kind);
  if (!settings) return fail(settings);
  // A key of the other backend is a configuration error for every command (exit 2), not
  // only when a command gets to open the store.
  if (auto keys = app::check_backend_keys(*settings); !keys) return fail(keys);
  return std::move(*settings);
}

Result<config::Settings> load_settings_for(const SettingsFlags& flags) {
  auto settings = read_settings_for(flags);
  if (settings) log::set_level(log::parse_level(settings->log_level).value_or(log::Level::info));
  return settings;
}

std::optional<config::Settings> load_settings_or_report(const SettingsFlags& flags, std::string_view command) {
  auto settings = load_settings_for(flags);
  if (!settings) {
    report_error(command, settings.error());
    return std::nullopt;
  }
  return std::move(*settings);
}

std::optional<store::Database> database_or_report(const config::Settings& settings, std::string_view command) {
  auto database = app::database(settings);
  if (!database) {
    report_error(command, database.error());
    return std::nullopt;
  }
  return std::move(*database);
}

std::unique_ptr<store::Store> open_store_or_report(const config::Settings& settings, std::string_view command,
                                                   StoreRequest request) {
  auto database = database_or_report(settings, command);
  if (!database) return nullptr;
  auto options = app::store_options(settings);
  if (!options) {
    report_error(command, options.error());
    return nullptr;
  }
  options->refuse_while_sender_makes_entries = request.refuse_while_sender_makes_entries;
  auto opened = store::open_store(*database, *options);
  if (!opened) {
    report_error(command, opened.error());
    return nullptr;
  }
  return std::move(*opened);
}

std::optional<store::Database> existing_database_or_report(const config::Settings& settings,
                                                           std::string_view command) {
  if (auto kind = store::database_kind(settings.database); !kind) {
    report_error(command, kind.error());
    return std::nullopt;
  }
  if (store::names_missing_file(settings.database)) {
    report_error(command, "database: " + settings.database + " does not exist");
    return std::nullopt;
  }
  return database_or_report(settings, command);
}

std::unique_ptr<store::ReadStore> open_read_store_or_report(const config::Settings& settings, std::string_view command,
                                                            int& exit_code) {
  auto database = existing_database_or_report(settings, command);
  if (!database) {
    exit_code = kExitBadConfig;
    return nullptr;
  }
  auto reader = store::open_read_store(*database);
  if (!reader) {
    report_error(command, reader.error());
    exit_code = kExitFailure;
    return nullptr;
  }
  return std::move(*reader);
}

}  // namespace hh::cli
