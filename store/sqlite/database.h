#pragma once
// Opening the database file: one write connection (owned by the writer thread) and any
// number of read connections (WAL lets them read while the writer works).
#include <string>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct StoreOptions {
  // Durability of each commit. FULL (default): a commit survives power loss, so the 2xx
  // we send after it is a promise. NORMAL: in WAL mode a commit survives a crash of the
  // process but the last commits can be lost on power loss or an OS crash, after the
  // service was told they arrived; faster only where fsync is slow.
  bool synchronous_full = true;
  int64_t cache_size_mib = 64;      // SQLite's 2 MiB default is too small once the working set grows
  int64_t busy_timeout_ms = 5000;   // a lock held longer than this fails the commit (503)
  int64_t max_database_mib = 0;     // 0: unlimited; else commits that would grow the file past it fail (503)
};

// The page size a database created by open_for_writing gets (database.cpp says why);
// an existing file keeps its own.
inline constexpr int kNewDatabasePageSize = 8192;

// Opens (creating if needed) and migrates the database for writing.
Result<sqlite::Connection> open_for_writing(const std::string& path, const StoreOptions& options);

// Opens an existing database read-only. Fails if it does not exist or is not migrated.
Result<sqlite::Connection> open_for_reading(const std::string& path);

// Applies pending migrations; refuses a database newer than this binary.
Result<void> migrate(sqlite::Connection& db);

// The schema version this binary writes (number of migrations).
int schema_version();

}  // namespace hh::store
