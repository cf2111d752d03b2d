// healthhook purge-user: erase everything stored about one user (spec §11, store/erasure.h).
//
//   healthhook purge-user USER_ID [--deregister PROVIDER] [--dry-run] [--no-vacuum] [--database FILE | --config FILE]
//
// Prints the rows per table that were (or, with --dry-run, would be) removed, and records
// the erasure in the `erasures` table (who, when, counts). --dry-run changes nothing.
// On SQLite the file is rewritten afterwards (VACUUM; --no-vacuum: not) and its WAL
// checkpointed, so that no copy of the erased rows stays in it; what may stay is said on
// stderr (the erasure is done and recorded all the same, exit 0).
// --deregister PROVIDER first calls DELETE /v2/user/{user_id}/{provider} on the service
// (USER_ID must then be the service's UUID) and prints the interface's caveat; when the
// call fails or the service answers success=false, nothing is erased (exit 1): erasing
// first would leave the provider connected, sending data that would be stored again.
// USER_ID is the service's user id as stored (a UUID from the service; any other id is
// accepted too, since test and replayed data use short ones like "u1"): non-empty, at most
// kMaxUserIdBytes, no whitespace or control characters (a pasted id with a trailing
// newline or space would otherwise match nobody and look like a successful erasure),
// unless rows are stored under that very id (a delivery may name any string; every
// stored user can be erased).
// Refused while another healthhook process applies the inbox (a running `serve`: stop it
// first); a database whose write lock is held past commit_deadline_ms fails the same way.
// Exit: 0 done, 1 store failure or database in use, 2 bad input or configuration.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "fetcher/recovery_input.h"
#include "cli/service_access.h"
#include "fetcher/service_calls.h"
#include "store/database_location.h"
#include "store/open_store.h"
#include "common/timestamp.h"

namespace hh::cli {
namespace {

constexpr size_t kMaxUserIdBytes = 256;

struct PurgeUserFlags {
  SettingsFlags settings;
  std::string user_id;
  std::string deregister;  // a provider slug; empty: the service is not called
  std::optional<std::string> team;  // --team: whose base URL and key --deregister uses
  bool dry_run = false;
  bool no_vacuum = false;  // --no-vacuum: SQLite's file is not rewritten after the erasure
};

// Why `user_id` looks like a mistake (refused unless rows are stored under it); empty when
// it does not.
std::string user_id_problem(std::string_view user_id) {
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
  // Rows no user column names (written before healthhook recorded users, their bodies
  // already removed by retention): they may be this user's, and nothing can tell.
  if (!report.unattributed.empty()) {
    std::string tables;
    for (const auto& table : report.unattributed) {
      tables += (tables.empty() ? "" : ", ") + table.table + " " + std::to_string(table.rows);
    }
    std::printf("note: rows that name no user, which no erasure can attribute (docs/erasure-and-retention.md, \"Erasing a user\"): %s\n",
                tables.c_str());
  }
}

// Which deliveries are the user's: what the erasure looks for, and nothing beyond it.
void print_search_note() {
  std::printf("note: a delivery is the user's when its $.user_id, else its $.data.user_id, is this id (a "
              "string); an id only elsewhere in a body is not looked for (docs/erasure-and-retention.md)\n");
}

void print_no_row_note(const std::string& user_id) {
  std::printf("note: no row names %s (ids are matched exactly, letter case included)\n", one_line(user_id).c_str());
}

// --deregister's input, checked before anything is sent or erased.
Result<void> check_deregister(const PurgeUserFlags& flags) {
  if (flags.deregister.empty()) return {};
  if (auto checked = fetcher::check_user_id(flags.user_id); !checked) return checked;
  std::vector<std::string> warnings;
  if (auto checked = fetcher::check_provider(flags.deregister, warnings, "--deregister"); !checked) return checked;
  for (const auto& warning : warnings) report_error("purge-user", "warning: " + warning);
  return {};
}

// DELETE /v2/user/{user_id}/{provider}; a failure (reported, `exit_code` set) when the user
// is still registered.
Result<void> deregister_at_service(const fetcher::ServiceAccess& access, const PurgeUserFlags& flags,
                                   int& exit_code) {
  constexpr std::string_view kCommand = "purge-user";
  auto deregistered = fetcher::deregister_user(access, flags.user_id, flags.deregister);
  if (!deregistered || !*deregistered) {
    // No answer (a timeout, a connection lost, a gateway's 502 or 504 in front of the
    // service): the service may have acted before it was lost; its own answer, even an
    // error, says it did not.
    const bool answer_lost = !deregistered && (deregistered.error().find(": HTTP ") == std::string::npos ||
                                               deregistered.error().find(": HTTP 502") != std::string::npos ||
                                               deregistered.error().find(": HTTP 504") != std::string::npos);
    report_error(kCommand, (deregistered ? "the service answered success=false to deregistering from " + flags.deregister
                                         : deregistered.error()) +
                               "; nothing was erased" +
                               (answer_lost ? " (should the service have deregistered the user before its answer was "
                                              "lost, purge-user without --deregister erases the stored rows)"
                                            : ""));
    exit_code = failure_exit_code(deregistered.error_kind());
    return fail(ErrorKind::other, "not deregistered");
  }
  std::printf("deregistered %s from %s at the service. Note: only cloud providers are well defined; with the\n"
              "mobile SDK's Auto Connect mode, apple_health_kit, health_connect and samsung_health are\n"
              "disconnected in the SDK, not by this call.\n",
              flags.user_id.c_str(), flags.deregister.c_str());
  return {};
}

int run_purge_user(const PurgeUserFlags& flags) {
  constexpr std::string_view kCommand = "purge-user";
  if (flags.user_id.empty()) {
    report_error(kCommand, "USER_ID is empty");
    return kExitBadConfig;
  }
  if (auto checked = check_deregister(flags); !checked) {
    report_error(kCommand, checked.error());
    return kExitBadConfig;
  }
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  auto database = existing_database_or_report(*settings, kCommand);
  if (!database) return kExitBadConfig;
  auto erasure = store::open_erasure(*database, settings->commit_deadline_ms);
  if (!erasure) {
    report_error(kCommand, erasure.error());
    return kExitFailure;
  }
  // The rows are counted for a dry run, and for an id no delivery could have named unless
  // one did (a blank in it, too long): such an id is refused only when no row holds it.
  const std::string problem = user_id_problem(flags.user_id);
  std::optional<store::ErasureReport> counted;
  if (flags.dry_run || !problem.empty()) {
    auto rows = (*erasure)->count(flags.user_id);
    if (!rows) {
      report_error(kCommand, rows.error());
      return kExitFailure;
    }
    counted = std::move(*rows);
    if (!problem.empty() && counted->total_rows() == 0) {
      report_error(kCommand, problem + ", and no row names it");
      return kExitBadConfig;
    }
  }
  if (flags.dry_run) {
    if (!flags.deregister.empty()) {
      // What the real run needs before it calls the service (the team, its API key): a
      // dry run must not promise a deregistration the real run refuses.
      if (!service_access_or_report(*settings, kCommand, team_of_user(*settings, flags.user_id, flags.team))) {
        return kExitBadConfig;
      }
      std::printf("purge-user %s: dry run, the service is not called (would deregister from %s first)\n",
                  flags.user_id.c_str(), flags.deregister.c_str());
    }
    std::printf("purge-user %s: dry run, nothing changed; rows that would be removed:\n",
                one_line(flags.user_id).c_str());
    print_erasure_counts(*counted);
    print_search_note();
    if (counted->total_rows() == 0) print_no_row_note(flags.user_id);
    return kExitOk;
  }

  // --deregister: the service is called once the erasure can go on (store/erasure.h), so
  // that a store another process holds refuses the erasure before the service is called;
  // a failed call erases nothing.
  store::Erasure::OnceLocked deregister;
  std::optional<fetcher::ServiceAccess> access;
  int service_exit_code = kExitOk;
  bool deregistered = false;
  if (!flags.deregister.empty()) {
    if (auto free = (*erasure)->check_free(); !free) {
      report_error(kCommand, free.error() + " (nothing was sent to the service or erased)");
      return kExitFailure;
    }
    access = service_access_or_report(*settings, kCommand, team_of_user(*settings, flags.user_id, flags.team));
    if (!access) return kExitBadConfig;
    deregister = [&]() -> Result<void> {
      auto done = deregister_at_service(*access, flags, service_exit_code);
      deregistered = done.ok();
      return done;
    };
  }

  (*erasure)->set_rewrite_file(!flags.no_vacuum);
  auto erased = (*erasure)->erase(flags.user_id, unix_now_ms(), deregister);
  if (!erased) {
    if (service_exit_code != kExitOk) return service_exit_code;  // reported: nothing was erased
    // Deregistered, then not erased (the commit failed): the rerun must not ask the service
    // again (it would refuse a user it no longer has).
    const std::string sent = deregistered ? "the user was deregistered at the service, but " : "";
    const std::string again = deregistered ? "run purge-user again without --deregister" : "run purge-user again";
    if (erased.error_kind() == ErrorKind::busy) {
      report_error(kCommand, sent + store::loggable_location(settings->database) +
                                 " is busy: another process held its write lock for " +
                                 std::to_string(settings->commit_deadline_ms) + " ms (nothing was removed" +
                                 (!flags.deregister.empty() && !deregistered ? " or sent to the service" : "") +
                                 "; " + again + ")");
    } else {
      report_error(kCommand, sent + erased.error() + (deregistered ? " (nothing was removed; " + again + ")" : ""));
    }
    return kExitFailure;
  }
  // An id a delivery named may hold anything: shown on one line, without control characters.
  // An erasure that found nothing is recorded too (the request, and when it was done, is
  // what an audit asks for), and says it removed nothing.
  const bool found = erased->total_rows() > 0;
  std::printf("purge-user %s: %s, recorded in the erasures table; rows removed:\n", one_line(flags.user_id).c_str(),
              found ? "removed" : "nothing to remove");
  print_erasure_counts(*erased);
  print_search_note();
  if (!found) print_no_row_note(flags.user_id);
  std::printf("space: %s\n", erased->space.c_str());
  // Erased and recorded all the same: what of it the files may still hold, and what to do.
  if (!erased->left_in_files.empty()) report_error(kCommand, "warning: " + erased->left_in_files);
  return kExitOk;
}

}  // namespace

void add_purge_user_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PurgeUserFlags>();
  auto* command = app.add_subcommand("purge-user", "Erase every row of one user from every table");
  add_settings_flags(*command, flags->settings, /*with_listen=*/false);
  command->add_option("user_id", flags->user_id, "The service's user id")->required();
  command->add_option("--deregister", flags->deregister,
                      "Deregister the user from this provider at the service first (DELETE /v2/user/{id}/{provider})");
  command->add_option("--team", flags->team, "The user's team id, for [[service.teams]] (default: the team the user's deliveries named)");
  command->add_flag("--dry-run", flags->dry_run, "Print what would be removed; change nothing");
  command->add_flag("--no-vacuum", flags->no_vacuum,
                    "SQLite: do not rewrite the file afterwards (VACUUM); copies of the erased rows may stay in "
                    "unused space of pages in use");
  command->callback([flags, &exit_code] { exit_code = run_purge_user(*flags); });
}

}  // namespace hh::cli
