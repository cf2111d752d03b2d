#pragma once
// `healthhook jobs` and `healthhook backfill` on PostgreSQL (store/jobs/job_admin.h): on a
// connection of their own beside running servers. Each write is one short transaction;
// a row a server holds (a claim in progress) is waited for up to the lock timeout.
#include <cstdint>
#include <memory>

#include "common/result.h"
#include "store/database_location.h"
#include "store/jobs/job_admin.h"
#include "store/postgres/connection.h"

namespace hh::store {

Result<std::unique_ptr<JobAdmin>> open_postgres_job_admin(const Database& database);

// A connection to an existing store for the admin commands (jobs, forward, purge-user):
// nothing is created or migrated; a schema older than `min_version` (schema_migrations)
// or newer than this binary is refused. lock_timeout `busy_timeout_ms`: a lock held longer
// fails the statement as ErrorKind::busy, as SQLite's busy_timeout does.
Result<pg::Connection> open_postgres_admin_connection(const Database& database, int64_t min_version,
                                                      int64_t busy_timeout_ms = 5000);

// The schema version that has everything the jobs, outbox and erasure code here use
// (migration 002: hh_json_or_null; 003: the user columns, jobs.user_id among them).
inline constexpr int64_t kPgJobsSchemaVersion = 3;

}  // namespace hh::store
