#pragma once
// Opening a PostgreSQL store: connections with the session settings every healthhook
// connection runs with, and the schema brought up to date (schema_migrations).
#include <string>

#include "common/result.h"
#include "store/database_location.h"
#include "store/postgres/connection.h"

namespace hh::store {

// A connection to the store, migrated or not: synchronous_commit on (a commit is durable
// on the server before COMMIT returns, so an ack after it is a promise, whatever the
// server's default), UTC for any time the server formats.
Result<pg::Connection> connect(const Database& database);

// What a store's schema is, and what its role may do there.
struct SchemaState {
  bool table_exists = false;  // schema_migrations
  bool may_create = false;    // CREATE on the current schema
  int64_t version = 0;        // migrations applied
  std::string role, schema;   // quoted as identifiers
};
Result<SchemaState> schema_state(pg::Connection& db);
// Whether this binary can open the store as it is: refused when migrations are pending and
// the role may not apply them, or when the schema is newer than this binary.
Result<void> may_open(const SchemaState& state);

// Applies pending migrations, each with its schema_migrations row in one transaction,
// under an advisory lock so that instances starting together apply each once. Refuses a
// schema newer than this binary.
Result<void> migrate(pg::Connection& db);

// connect() then migrate(): what every opener of a store for writing does; a store holding
// an unfinished `healthhook migrate` copy is refused (store/postgres/copy_progress.h), so
// that nothing writes into it before the copy is finished (migrate itself connects and
// migrates without this).
Result<pg::Connection> connect_migrated(const Database& database);

// The schema version this binary writes (number of PostgreSQL migrations).
int postgres_schema_version();

// Advisory lock keys (pg_advisory_lock): one per purpose, the same in every instance.
inline constexpr int64_t kMigrationLock = 0x6868'0001;   // "hh" 1: applying migrations
inline constexpr int64_t kProcessingLock = 0x6868'0002;  // "hh" 2: processing (processing_locks.h)
inline constexpr int64_t kBodyRetentionLock = 0x6868'0003;  // "hh" 3: one retention batch at a time
inline constexpr int64_t kForwardLock = 0x6868'0004;  // "hh" 4: the one instance that forwards
inline constexpr int64_t kNewIdsLock = 0x6868'0005;  // "hh" 5: max(id) + 1 (lock_new_ids, pg_statements.h)
// "hh" 0x100 + n: the processing shard n (processing_locks.h), n < pgshard::kShardCount.
inline constexpr int64_t kShardLockBase = 0x6868'0100;

}  // namespace hh::store
