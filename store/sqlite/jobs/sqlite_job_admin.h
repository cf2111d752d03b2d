#pragma once
// `healthhook jobs` and `healthhook backfill`: reading, re-queueing and queueing jobs from
// outside the server. These run on a connection of their own while `serve` may be
// writing: every write is one short BEGIN IMMEDIATE transaction, and the connection must
// have a busy_timeout so it waits for the writer's transaction instead of failing
// (open_admin_connection sets both up).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/jobs/job_admin.h"
#include "store/sqlite/connection.h"

namespace hh::store {

// The JobAdmin (store/jobs/job_admin.h) of the existing database at `path`, on an admin
// connection.
Result<std::unique_ptr<JobAdmin>> open_sqlite_job_admin(const std::string& path);

// An existing, migrated database, read-write, busy_timeout `busy_timeout_ms`.
Result<sqlite::Connection> open_admin_connection(const std::string& path, int64_t busy_timeout_ms = 5000);

// All jobs, or those in `state` (queued|running|done|dead), by job_id; the first `at_most`
// when given (JobAdmin::list).
Result<std::vector<JobRow>> list_jobs(sqlite::Connection& db, const std::optional<std::string>& state,
                                      std::optional<int64_t> at_most = std::nullopt);
Result<std::optional<JobRow>> find_job(sqlite::Connection& db, int64_t job_id);

// queued/done/dead → queued, due now, attempts 0. A done backfill starts its window again
// (the progress keys cursor and next_start_ms are removed; `page` keeps counting, so the
// refetched pages get new message ids and are stored). A running job is left alone.
Result<RequeueStatus> requeue_job(sqlite::Connection& db, int64_t job_id, int64_t now_ms);
// Every dead job → queued, due now, attempts 0 (continuing where it stopped). Returns how many.
Result<int64_t> requeue_dead_jobs(sqlite::Connection& db, int64_t now_ms);
// JobAdmin::queue_backfills (store/jobs/job_admin.h): one BEGIN IMMEDIATE transaction.
Result<std::vector<QueuedBackfill>> queue_backfill_jobs(sqlite::Connection& db, std::span<const BackfillWindow> windows,
                                                        int64_t now_ms);

}  // namespace hh::store
