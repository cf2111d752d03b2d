#include "store/postgres/pg_store.h"

#include "store/postgres/database.h"
#include "store/postgres/jobs/pg_job_queue.h"
#include "store/postgres/pg_body_retention.h"
#include "store/postgres/pg_inbox.h"
#include "store/postgres/pg_processing_store.h"

namespace hh::store {
namespace {

// busy_timeout_ms: a lock held longer fails the statement (busy: answered 503, or a step
// retried), as SQLite's busy timeout does.
Result<void> limit_lock_waits(pg::Connection& db, const StoreOptions& options) {
  return db.set_session("SET lock_timeout = " + std::to_string(options.busy_timeout_ms));
}

// The processing session holds the processing lock (kProcessingLock). An instance that
// stops without its connections closing (SIGSTOP, a frozen VM, a host gone without a FIN)
// would keep the lock, and no other instance would take over. While its instance lives
// this session runs a statement at least every 8 s (the leader probes the inbox horizon on
// each 100 ms idle wake-up and waits at most 8 s to retry a failed step; a standby tries
// the lock every second), so the server may end it after 15 s without one, in or out of a
// transaction: the lock goes with it, an open step rolls back, a standby takes over. An
// instance that resumes finds its session gone, reconnects and stands by (decision 051).
// Set through pg_settings, so that a server without one of the settings (PostgreSQL
// before 14 has no idle_session_timeout) keeps the other, and the statement, replayed on
// every reconnect, never fails for it.
Result<void> end_stalled_session(pg::Connection& db) {
  return db.set_session(
      "SELECT set_config(name, '15s', false) FROM pg_settings "
      "WHERE name IN ('idle_session_timeout', 'idle_in_transaction_session_timeout')");
}

}  // namespace

Result<std::unique_ptr<PgStore>> PgStore::open(const Database& database, const StoreOptions& options) {
  auto db = connect_migrated(database);
  if (!db) return fail(db);
  if (auto set = limit_lock_waits(*db, options); !set) return fail(set);
  return std::unique_ptr<PgStore>(new PgStore(database, std::move(*db), options));
}

Result<std::unique_ptr<Inbox>> PgStore::open_inbox() { return open_postgres_inbox(db_, options_.forward_rules); }

Result<std::unique_ptr<ProcessingStore>> PgStore::open_processing(Leadership leadership) {
  return open_postgres_processing(db_, database_, leadership, options_.forward_rules);
}

Result<std::unique_ptr<ProcessingStore>> PgStore::open_processing_alongside(Leadership leadership) {
  auto session = connect(database_);
  if (!session) return fail(session, "processing session");
  if (auto set = limit_lock_waits(*session, options_); !set) return fail(set);
  if (auto set = end_stalled_session(*session); !set) return fail(set, "processing session");
  return open_postgres_processing_session(std::move(*session), database_, leadership, options_.forward_rules);
}

Result<std::unique_ptr<JobQueue>> PgStore::open_job_queue() {
  return open_postgres_job_queue(db_, options_.postgres.job_lease_ms);
}

Result<std::unique_ptr<BodyRetention>> PgStore::open_body_retention() { return open_postgres_body_retention(db_); }

// None: PostgreSQL makes each commit durable before COMMIT returns.
Result<std::unique_ptr<CommitSync>> PgStore::sync_commits_on_thread() { return std::unique_ptr<CommitSync>(); }

// None: PostgreSQL checkpoints by itself.
Result<std::unique_ptr<Checkpointer>> PgStore::start_checkpointer() { return std::unique_ptr<Checkpointer>(); }

}  // namespace hh::store
