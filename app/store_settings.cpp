#include "app/store_settings.h"

#include <cstdlib>
#include <span>

#include "config/load_settings.h"
#include "config/secrets.h"
#include "forward/forward_rule.h"

namespace hh::app {
namespace {

// The keys that set up a SQLite file only (store::SqliteOptions, and the writer's disk
// guard on the file's folder). Given with a postgresql:// database they would do nothing:
// refused, naming the key, so that nobody believes them in force.
constexpr std::string_view kSqliteOnlyKeys[] = {"synchronous", "cache_size_mib", "max_database_mib",
                                                "min_free_disk_mib"};
// And the keys of a PostgreSQL store only: a SQLite file has one writer, which applies
// everything between its commits.
constexpr std::string_view kPostgresOnlyKeys[] = {"processing_sessions"};

// The first of `keys` the configuration gives, refused: it `applies` to the other backend.
Result<void> refuse_given(const config::Settings& settings, std::span<const std::string_view> keys,
                          std::string_view applies) {
  for (std::string_view key : keys) {
    if (settings.given.contains(std::string(key))) {
      return fail(ErrorKind::data, config::located(settings, std::string(key), std::string(key) + ": " + std::string(applies)));
    }
  }
  return {};
}

}  // namespace

Result<store::Database> database(const config::Settings& settings) {
  if (settings.database_password_file.empty()) return store::Database(settings.database);
  auto password = config::read_secret_file(settings.database_password_file, settings.base_dir);
  if (!password) return fail(ErrorKind::unavailable, "database_password_file: " + password.error());
  return store::Database(settings.database, std::move(*password));
}

store::Database database(const config::Settings& settings, const config::Secrets& secrets) {
  return store::Database(settings.database, secrets.database_password);
}

std::vector<LocationWarning> location_warnings(const std::string& database) {
  std::vector<LocationWarning> warnings;
  if (auto risk = store::plaintext_risk(database, std::getenv("PGSSLMODE"), std::getenv("PGHOST"))) {
    warnings.push_back({"database_plaintext_risk", std::move(*risk)});
  }
  // In the configuration, the environment or the command line (visible to `ps`), where
  // secrets never go.
  if (store::uri_holds_password(database)) {
    warnings.push_back({"database_password_in_uri",
                        "the URI holds a password; give it in database_password_file instead (a file or "
                        "a systemd credential), as every other secret"});
  }
  return warnings;
}

Result<void> check_backend_keys(const config::Settings& settings) {
  auto kind = store::database_kind(settings.database);
  if (!kind) return fail(kind);
  if (*kind == store::DatabaseKind::postgresql) {
    return refuse_given(settings, kSqliteOnlyKeys,
                        "applies to a SQLite database file only; remove it (database is a postgresql:// URI, whose "
                        "server decides durability, caching and size)");
  }
  return refuse_given(settings, kPostgresOnlyKeys,
                      "applies to a postgresql:// database only; remove it (a SQLite file has one writer, which "
                      "applies every delivery)");
}

Result<store::StoreOptions> store_options(const config::Settings& settings) {
  if (auto checked = check_backend_keys(settings); !checked) return fail(checked);
  store::StoreOptions options;
  options.busy_timeout_ms = settings.commit_deadline_ms;
  options.sqlite.synchronous_full = settings.synchronous == "full";
  options.sqlite.cache_size_mib = settings.cache_size_mib;
  options.sqlite.max_database_mib = settings.max_database_mib;
  options.postgres.job_lease_ms = settings.service.job_lease_s * 1000;
  return options;
}

Result<store::StoreOptions> serve_store_options(const config::Settings& settings) {
  auto options = store_options(settings);
  if (!options) return options;
  options->forwarding_configured = true;
  for (const config::ForwardSettings& f : settings.forwards) {
    options->forward_rules.push_back(forward::forward_rule(f));
  }
  return options;
}

}  // namespace hh::app
