#pragma once
// The settings a store is opened with (config: `database = …` and the store keys): those of
// every backend, and each backend's own in a struct of its own, so that none is ignored
// silently (app/store_settings.cpp refuses a SQLite key given with a postgresql:// URI).
#include <cstdint>
#include <vector>

#include "store/outbox.h"

namespace hh::store {

// The SQLite file's own settings (store/sqlite/database.cpp applies them). PostgreSQL has
// no counterparts: its server syncs, caches and sizes its files.
struct SqliteOptions {
  // Durability of each commit. true (default): a commit survives power loss, so the 2xx
  // we send after it is a promise. false: a commit survives a crash of the process, but
  // the last commits can be lost on power loss or an OS crash, after the service was told
  // they arrived; faster only where syncs are slow. (PostgreSQL: synchronous_commit is on
  // for every connection, store/postgres/database.h.)
  bool synchronous_full = true;
  int64_t cache_size_mib = 64;    // the page cache of the write connection
  int64_t max_database_mib = 0;   // 0: unlimited; else commits that would grow the file past it fail (503)
};

// PostgreSQL's own settings (store/postgres/pg_store.cpp applies them). SQLite has no
// counterpart: one instance owns its file and its jobs.
struct PostgresOptions {
  // How long a claimed follow-up job stays this instance's without a renewal
  // (store/postgres/jobs/pg_job_queue.h).
  int64_t job_lease_ms = 5 * 60 * 1000;
};

struct StoreOptions {
  int64_t busy_timeout_ms = 5000;  // a lock held longer than this fails the commit (503)
  // [[forward]] destinations (`serve` only): the inbox and the processor write their
  // outbox entries (store/outbox.h) in the transactions of what they describe.
  std::vector<ForwardRule> forward_rules;
  // forward_rules are the configuration's, all of them (`serve`, `healthhook forward`): a
  // destination's record of how far its entries are made goes when it is no longer among
  // them (SQLite).
  bool forwarding_configured = false;
  // An offline `replay --database` (SQLite): refused while a destination's sender makes its
  // entries (store/outbox.h), which would make the replayed deliveries' too, where a writer
  // that makes them never does: what an offline replay stores is never forwarded
  // (docs/decisions/084-entries-made-ahead-stay-within-the-budget.md).
  bool refuse_while_sender_makes_entries = false;
  SqliteOptions sqlite;
  PostgresOptions postgres;
};

}  // namespace hh::store
