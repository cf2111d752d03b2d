#include "app/store_settings.h"

namespace hh::app {

store::StoreOptions store_options(const config::Settings& settings) {
  store::StoreOptions options;
  options.synchronous_full = settings.synchronous == "full";
  options.cache_size_mib = settings.cache_size_mib;
  options.busy_timeout_ms = settings.commit_deadline_ms;
  options.max_database_mib = settings.max_database_mib;
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
