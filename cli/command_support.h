#pragma once
// What every subcommand shares: the settings flags (--config, --listen, --set key=value…),
// loading settings with one-line errors, and exit codes.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/load_settings.h"
#include "store/open_store.h"
#include "store/database_location.h"
#include "store/read_store.h"

namespace hh::cli {

// Exit statuses (documented in the README).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;     // runtime failure (port in use, I/O error, failed lines)
inline constexpr int kExitBadConfig = 2;   // bad configuration or usage

// The exit status of a command that failed with `kind`: the input (configuration, flags,
// an answer the service refused as bad) is at fault, or something else failed.
inline int failure_exit_code(ErrorKind kind) { return kind == ErrorKind::data ? kExitBadConfig : kExitFailure; }

struct SettingsFlags {
  std::optional<std::string> config_file;
  std::optional<std::string> listen;
  std::optional<std::string> database;
  std::optional<std::string> log_level;
  std::vector<std::string> set;  // "key=value"
};

// Adds --config, --listen, --database, --log-level and --set KEY=VALUE to `command`.
// `with_listen` false for commands that never listen.
void add_settings_flags(CLI::App& command, SettingsFlags& flags, bool with_listen = true);

// Loads settings (file < HEALTHHOOK_* < flags); the error names the file, line and key.
// `file_kind`: config::ConfigFileKind::regular_only for serve's SIGHUP.
Result<config::Settings> read_settings_for(const SettingsFlags& flags,
                                           config::ConfigFileKind file_kind = config::ConfigFileKind::any);
// The same, applying their log_level.
Result<config::Settings> load_settings_for(const SettingsFlags& flags);
// The same; on error prints one line to stderr and returns nullopt (exit with
// kExitBadConfig).
std::optional<config::Settings> load_settings_or_report(const SettingsFlags& flags, std::string_view command);

// Prints "healthhook <command>: <message>" to stderr.
void report_error(std::string_view command, std::string_view message);

// The selection flags capture and query share, checked alike (each reported, false when
// refused): --since before --until (an empty window is the two swapped, not a selection of
// nothing; `since`/`until` are the flags as parsed, the texts as given), and --event-type
// a glob that can match something.
bool window_ok(std::string_view command, std::optional<int64_t> since, std::optional<int64_t> until,
               const std::optional<std::string>& since_text, const std::optional<std::string>& until_text);
bool event_type_ok(std::string_view command, const std::optional<std::string>& glob);
// --event-type's help: the pattern syntax (docs/getting-data-out.md says the same).
inline constexpr const char* kEventTypeGlobHelp =
    "Only event types matching GLOB, e.g. 'daily.data.*': * any characters, ? one character, [abc] one of a set, "
    "[a-z] a range, [!h] or [^h] any but these; case-sensitive; a literal [ is [[]";
// The --event-type glob as the store matches it: `[!...]` (the shell's negated set) as
// `[^...]` (common/glob_problem.h).
std::optional<std::string> event_type_glob(const std::optional<std::string>& glob);

// Text from elsewhere (the service's answers, stored values) for a terminal: on one line,
// every control character (line breaks, tabs, ESC sequences, DEL) a space, so it can
// neither forge a line of our output nor drive the terminal.
std::string one_line(std::string_view text);

// One cell of a fixed-width table (`jobs`, `forward`): `text` one_line(), cut to `width`
// characters ("..." marks the cut) and padded to it.
std::string table_cell(std::string_view text, size_t width);

// The store `database = …` names, with the PostgreSQL password read from
// database_password_file (app::database). On error prints one line and returns nullopt
// (exit with kExitBadConfig).
std::optional<store::Database> database_or_report(const config::Settings& settings, std::string_view command);
// The same for a command that reads or changes a store and never creates one: a SQLite
// file that does not exist is one line ("database: PATH does not exist"), exit 2.
std::optional<store::Database> existing_database_or_report(const config::Settings& settings,
                                                           std::string_view command);

// Opens the store `database = …` names (store/open_store.h; a file is created and
// migrated) with the store settings (synchronous, cache size, busy timeout, size cap).
// On error prints one line and returns null (exit with kExitFailure).
// What a command asks of the store beyond the configuration's settings.
struct StoreRequest {
  bool refuse_while_sender_makes_entries = false;  // store::StoreOptions's (offline replay)
};
std::unique_ptr<store::Store> open_store_or_report(const config::Settings& settings, std::string_view command,
                                                   StoreRequest request = {});

// Opens a reader of the settings' database (store::open_read_store). On error prints one
// line, sets `exit_code` and returns null: kExitBadConfig when the database names a file
// that does not exist or a store this program does not know, else kExitFailure.
std::unique_ptr<store::ReadStore> open_read_store_or_report(const config::Settings& settings, std::string_view command,
                                                            int& exit_code);

}  // namespace hh::cli
