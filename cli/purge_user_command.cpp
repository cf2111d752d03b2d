// healthhook purge-user: erase everything stored about one user (spec §11, store/erasure.h).
//
//   healthhook purge-user USER_ID [--dry-run] [--database FILE | --config FILE]
//
// Prints the rows per table that were (or, with --dry-run, would be) removed, and records
// the erasure in the `erasures` table (who, when, counts). --dry-run changes nothing.
// USER_ID is the service's user id as stored (a UUID from the service; any other id is
// accepted too, since test and replayed data use short ones like "u1"): non-empty, at most
// kMaxUserIdBytes, no whitespace or control characters (a pasted id with a trailing
// newline or space would otherwise match nobody and look like a successful erasure).
// Refused while another healthhook process applies the inbox (a running `serve`: stop it
// first); a database whose write lock is held past commit_deadline_ms fails the same way.
// Exit: 0 done, 1 store failure or database in use, 2 bad input or configuration.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "store/database_location.h"
#include "store/open_store.h"

namespace hh::cli {
namespace {

constexpr size_t kMaxUserIdBytes = 256;

struct PurgeUserFlags {
  SettingsFlags settings;
  std::string user_id;
  bool dry_run = false;
};

// Why `user_id` cannot be a stored user id; empty when it can.
std::string user_id_problem(std::string_view user_id) {
  if (user_id.empty()) return "USER_ID is empty";
  if (user_id.size() > kMaxUserIdBytes) return "USER_ID is longer than " + std::to_string(kMaxUserIdBytes) + " bytes";
  for (const char c : user_id) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) return "USER_ID contains whitespace or a control character";
  }
  return {};
}

void print_erasure_counts(const store::ErasureReport& report) {
  for (const auto& table : report.tables) {
    std::printf("  %-18s %lld\n", table.table.c_str(), static_cast<long long>(table.rows));
  }
  std::printf("  %-18s %lld\n", "total", static_cast<long long>(report.total_rows()));
}

int run_purge_user(const PurgeUserFlags& flags) {
  constexpr std::string_view kCommand = "purge-user";
  if (auto problem = user_id_problem(flags.user_id); !problem.empty()) {
    report_error(kCommand, problem);
    return kExitBadConfig;
  }
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  if (auto kind = store::database_kind(settings->database); !kind) {
    report_error(kCommand, kind.error());
    return kExitBadConfig;
  }
  if (store::names_missing_file(settings->database)) {
    report_error(kCommand, "database: " + settings->database + " does not exist");
    return kExitBadConfig;
  }
  auto erasure = store::open_erasure(settings->database, settings->commit_deadline_ms);
  if (!erasure) {
    report_error(kCommand, erasure.error());
    return kExitFailure;
  }
  if (flags.dry_run) {
    auto counted = (*erasure)->count(flags.user_id);
    if (!counted) {
      report_error(kCommand, counted.error());
      return kExitFailure;
    }
    std::printf("purge-user %s: dry run, nothing changed; rows that would be removed:\n", flags.user_id.c_str());
    print_erasure_counts(*counted);
    return kExitOk;
  }

  // --deregister PROVIDER goes here (issue 37): call DELETE /v2/user/{user_id}/{provider}
  // on the service first, print the service's caveats, and stop before erasing anything
  // when the call fails. Not built yet; until then nothing is sent to the service.

  const int64_t erased_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  auto erased = (*erasure)->erase(flags.user_id, erased_at_ms);
  if (!erased) {
    if (erased.error_kind() == ErrorKind::busy && erased.error().find("stop it first") == std::string::npos) {
      report_error(kCommand, settings->database + " is busy: another process held its write lock for " +
                                 std::to_string(settings->commit_deadline_ms) +
                                 " ms (run purge-user again; what was already removed stays removed)");
    } else {
      report_error(kCommand, erased.error());
    }
    return kExitFailure;
  }
  std::printf("purge-user %s: removed, recorded in the erasures table; rows removed:\n", flags.user_id.c_str());
  print_erasure_counts(*erased);
  std::printf("space: %s\n", erased->space.c_str());
  return kExitOk;
}

}  // namespace

void add_purge_user_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PurgeUserFlags>();
  auto* command = app.add_subcommand("purge-user", "Erase every row of one user from every table (spec §11)");
  add_settings_flags(*command, flags->settings, /*with_listen=*/false);
  command->add_option("user_id", flags->user_id, "The service's user id")->required();
  command->add_flag("--dry-run", flags->dry_run, "Print what would be removed; change nothing");
  command->callback([flags, &exit_code] { exit_code = run_purge_user(*flags); });
}

}  // namespace hh::cli
