#pragma once
// The store settings of a configuration (busy timeout; a SQLite file's synchronous, cache
// size and size cap), for every command that opens a store.
#include <string>
#include <vector>

#include "common/result.h"
#include "config/secrets.h"
#include "config/settings.h"
#include "store/database_location.h"
#include "store/store_options.h"

namespace hh::app {

// The store the settings name, with the PostgreSQL password read from
// `database_password_file` (config/secrets.h: a credential or a path); a missing or empty
// file is an error naming it.
Result<store::Database> database(const config::Settings& settings);
// The same, with the password `serve` read with its other secrets.
store::Database database(const config::Settings& settings, const config::Secrets& secrets);

// What serve warns about, and check-config notes, in the database location before anything
// connects (health data must not travel in clear text unnoticed, and secrets belong in
// files): a connection that may travel in plain text (PGSSLMODE and PGHOST read from the
// environment, as libpq reads them), a password in the URI. Each with its log event.
struct LocationWarning {
  const char* event;
  std::string detail;
};
std::vector<LocationWarning> location_warnings(const std::string& database);

// Refuses a key that only a SQLite file has (synchronous, cache_size_mib, max_database_mib,
// min_free_disk_mib) when `database` is a postgresql:// URI, and one that only PostgreSQL
// has (processing_sessions) with a SQLite file: it would be ignored. The error names the
// key (ErrorKind::data).
Result<void> check_backend_keys(const config::Settings& settings);

// The store options of the settings (check_backend_keys first).
Result<store::StoreOptions> store_options(const config::Settings& settings);

// `serve`'s: the store options plus the [[forward]] rules, so the inbox and the processor
// write outbox entries. Only `serve` forwards: a rebuild re-derives rows the backend
// already has, and an offline replay has no sender running.
Result<store::StoreOptions> serve_store_options(const config::Settings& settings);

}  // namespace hh::app
