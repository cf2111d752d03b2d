#pragma once
// The settings every backend is opened with (config: `database = …` and the store keys).
#include <cstdint>
#include <vector>

#include "store/outbox.h"

namespace hh::store {

struct StoreOptions {
  // Durability of each commit. true (default): a commit survives power loss, so the 2xx
  // we send after it is a promise. false: a commit survives a crash of the process, but
  // the last commits can be lost on power loss or an OS crash, after the service was told
  // they arrived; faster only where syncs are slow.
  bool synchronous_full = true;
  int64_t cache_size_mib = 64;      // the backend's page cache, per write connection
  int64_t busy_timeout_ms = 5000;   // a lock held longer than this fails the commit (503)
  int64_t max_database_mib = 0;     // 0: unlimited; else commits that would grow the store past it fail (503)
  // PostgreSQL: how long a claimed follow-up job stays this instance's without a renewal
  // (store/postgres/jobs/pg_job_queue.h); SQLite has no leases.
  int64_t job_lease_ms = 5 * 60 * 1000;
  // [[forward]] destinations (`serve` only): the inbox and the processor write their
  // outbox entries (store/outbox.h) in the transactions of what they describe.
  std::vector<ForwardRule> forward_rules;
};

}  // namespace hh::store
