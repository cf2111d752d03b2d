// healthhook migrate: copies a SQLite store into a PostgreSQL store (spec §9, issue 35).
//
//   healthhook migrate --from FILE.db --to postgresql://… [--to-password-file FILE]
//                      [--config FILE] [--batch-rows N]
//
// Every table is copied as it is (deliveries byte for byte with their seq, message ids,
// outcomes, the derived tables with their series and change ids, jobs, erasures, outbox),
// then the target's sequences are set past the copied maxima. The copying is
// store/migrate/sqlite_to_postgres.h, which says how it resumes: a copy interrupted
// (killed, network lost) is finished by running the same command again.
//
// Stop the server first: the source's processing lock is taken, so a `serve` (or rebuild,
// replay) running on FILE.db makes migrate refuse; so does a PostgreSQL instance
// processing the target (its advisory processing lock), and migrate holds that lock while
// it copies, so no instance's processor starts on a half-copied store. The target must be
// empty (freshly created, or migrated by healthhook) or hold an unfinished copy of this
// same source: it never merges two stores.
//
// The password: --to-password-file, else the config's database_password_file, else the
// URI, ~/.pgpass or PGPASSFILE. It is never printed (store::loggable_location).
// Progress on stderr: a line per table and about every 2 s while one is copied. One
// summary line on stdout. Exit: 0 done, 1 failure or refusal, 2 bad usage or configuration
// (a missing source file, a --to that is not a PostgreSQL URI).
#include <cstdio>
#include <cstdlib>

#include "app/store_settings.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "config/secrets.h"
#include "store/database_location.h"
#include "store/migrate/sqlite_to_postgres.h"

namespace hh::cli {
namespace {

struct MigrateFlags {
  SettingsFlags settings;
  std::string from;
  std::string to;
  std::string to_password_file;
  int64_t batch_rows = 10000;
  int64_t stop_after_batches = 0;  // hidden, for tests: an interrupted copy
};

int run_migrate(const MigrateFlags& flags) {
  constexpr std::string_view kCommand = "migrate";
  auto kind = store::database_kind(flags.to);
  if (!kind) {
    report_error(kCommand, "--to: " + kind.error());
    return kExitBadConfig;
  }
  if (*kind != store::DatabaseKind::postgresql) {
    report_error(kCommand, "--to must be a postgresql:// URI (got " + store::loggable_location(flags.to) + ")");
    return kExitBadConfig;
  }
  if (auto from = store::database_kind(flags.from); !from || *from != store::DatabaseKind::sqlite_file) {
    report_error(kCommand, "--from must be a SQLite database file");
    return kExitBadConfig;
  }
  if (store::names_missing_file(flags.from)) {
    report_error(kCommand, "--from: " + flags.from + " does not exist");
    return kExitBadConfig;
  }
  if (flags.batch_rows < 1) {
    report_error(kCommand, "--batch-rows must be at least 1");
    return kExitBadConfig;
  }
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  store::Database target(flags.to);
  if (!flags.to_password_file.empty()) {
    auto password = config::read_secret_file(flags.to_password_file, settings->base_dir);
    if (!password) {
      report_error(kCommand, "--to-password-file: " + password.error());
      return kExitBadConfig;
    }
    target.password = *password;
  } else if (!settings->database_password_file.empty()) {
    auto database = database_or_report(*settings, kCommand);
    if (!database) return kExitBadConfig;
    target.password = database->password;
  }

  store::SqliteCopyOptions options;
  options.batch_rows = flags.batch_rows;
  options.stop_after_batches = flags.stop_after_batches;
  options.report = [](const std::string& line) {
    std::fprintf(stderr, "migrate: %s\n", line.c_str());
    std::fflush(stderr);
  };
  const std::string target_name = store::loggable_location(flags.to);
  std::fprintf(stderr, "migrate: copying %s into %s\n", flags.from.c_str(), target_name.c_str());
  if (auto risk = store::plaintext_risk(flags.to, std::getenv("PGSSLMODE"), std::getenv("PGHOST"))) {
    std::fprintf(stderr, "migrate: warning: %s\n", risk->c_str());
  }
  auto copied = store::copy_sqlite_to_postgres(flags.from, target, options);
  if (!copied) {
    report_error(kCommand, copied.error());
    return kExitFailure;
  }
  if (copied->stopped) {
    report_error(kCommand, "stopped after " + std::to_string(flags.stop_after_batches) +
                               " batches (--stop-after-batches); run again to finish the copy");
    return kExitFailure;
  }
  std::printf("migrate: %lld tables, %lld rows (%lld copied by this run) from %s into %s\n",
              static_cast<long long>(copied->tables), static_cast<long long>(copied->rows_total),
              static_cast<long long>(copied->rows_copied), flags.from.c_str(), target_name.c_str());
  return kExitOk;
}

}  // namespace

void add_migrate_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<MigrateFlags>();
  auto* command = app.add_subcommand("migrate", "Copy a SQLite store into a PostgreSQL store (resumable)");
  command->add_option("--from", flags->from, "The SQLite database file to copy (stop its server first)")->required();
  command->add_option("--to", flags->to, "The PostgreSQL store: postgresql://… (empty, or an unfinished copy)")
      ->required();
  command->add_option("--to-password-file", flags->to_password_file,
                      "A file holding the PostgreSQL password (default: the config's database_password_file)");
  command->add_option("--batch-rows", flags->batch_rows, "Rows per transaction (default 10000)");
  command->add_option("--stop-after-batches", flags->stop_after_batches)->group("");  // tests: an interrupted copy
  add_settings_flags(*command, flags->settings, /*with_listen=*/false);
  command->callback([flags, &exit_code] { exit_code = run_migrate(*flags); });
}

}  // namespace hh::cli
