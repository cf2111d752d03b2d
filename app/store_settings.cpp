#include "app/store_settings.h"

#include "config/secrets.h"

namespace hh::app {

Result<store::Database> database(const config::Settings& settings) {
  if (settings.database_password_file.empty()) return store::Database(settings.database);
  auto password = config::read_secret_file(settings.database_password_file, settings.base_dir);
  if (!password) return fail(ErrorKind::unavailable, "database_password_file: " + password.error());
  return store::Database(settings.database, std::move(*password));
}

store::Database database(const config::Settings& settings, const config::Secrets& secrets) {
  return store::Database(settings.database, secrets.database_password);
}

store::StoreOptions store_options(const config::Settings& settings) {
  store::StoreOptions options;
  options.synchronous_full = settings.synchronous == "full";
  options.cache_size_mib = settings.cache_size_mib;
  options.busy_timeout_ms = settings.commit_deadline_ms;
  options.max_database_mib = settings.max_database_mib;
  options.job_lease_ms = settings.service.job_lease_s * 1000;
  return options;
}

store::StoreOptions serve_store_options(const config::Settings& settings) {
  store::StoreOptions options = store_options(settings);
  for (const config::ForwardSettings& f : settings.forwards) {
    options.forward_rules.push_back(store::ForwardRule{
        .destination = f.name,
        .mode = f.mode == "deliveries" ? store::ForwardMode::deliveries : store::ForwardMode::changes,
        .events = f.events});
  }
  return options;
}

}  // namespace hh::app
