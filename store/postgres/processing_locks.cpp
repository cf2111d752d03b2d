#include "store/postgres/processing_locks.h"

#include <algorithm>

#include "store/postgres/database.h"

namespace hh::store {
namespace {

constexpr auto kRebalanceEvery = std::chrono::seconds(1);

// In this database (advisory locks are per database): how many live sessions hold
// kProcessingLock shared, which shard locks are held (bit n: shard n), and the fewest
// shards any of those sessions holds. Live: in a statement or a transaction, or done with
// one in the last 5 s (a processing session runs this census every second). A session of a
// process that is frozen or cut off keeps its locks until the server ends it (15 s idle:
// pg_store.cpp), but is not counted: the others would otherwise keep shards free for it,
// which nobody would then apply.
constexpr const char* kLockCensus =
    "WITH locks AS (SELECT pid, objid::bigint AS key, mode FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND classid = 0 AND objsubid = 1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())), "
    "sessions AS (SELECT l.pid FROM locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid "
    "WHERE l.key = $1 AND l.mode = 'ShareLock' AND (a.state IS DISTINCT FROM 'idle' "
    "OR a.state_change > now() - interval '5 seconds')), "
    "shards AS (SELECT pid, key - $2 AS shard FROM locks WHERE key BETWEEN $2 AND $2 + $3 - 1) "
    "SELECT (SELECT count(*) FROM sessions), coalesce((SELECT bit_or(1 << shard::int) FROM shards), 0), "
    "coalesce((SELECT min(n) FROM (SELECT count(s.shard) AS n FROM sessions LEFT JOIN shards AS s USING (pid) "
    "GROUP BY sessions.pid) AS held), 0)";

}  // namespace

ProcessingLocks::~ProcessingLocks() {
  if (!held()) return;
  for (int s = 0; s < pgshard::kShardCount; ++s) {
    if (kind_ == Kind::shared && shards_.owned[static_cast<size_t>(s)]) {
      (void)db_->query("SELECT pg_advisory_unlock($1)", pg::Params().add(kShardLockBase + s));
    }
  }
  (void)db_->query(kind_ == Kind::shared ? "SELECT pg_advisory_unlock_shared($1)" : "SELECT pg_advisory_unlock($1)",
                   pg::Params().add(kProcessingLock));
}

void ProcessingLocks::forget() {
  taken_ = false;
  for (int s = 0; s < pgshard::kShardCount; ++s) set_owned(s, false);
}

void ProcessingLocks::set_owned(int shard, bool owned) {
  bool& slot = shards_.owned[static_cast<size_t>(shard)];
  if (slot == owned) return;
  slot = owned;
  ++version_;
}

Result<bool> ProcessingLocks::try_lock(int64_t key) {
  auto locked = db_->query(kind_ == Kind::shared && key == kProcessingLock ? "SELECT pg_try_advisory_lock_shared($1)"
                                                                          : "SELECT pg_try_advisory_lock($1)",
                           pg::Params().add(key));
  if (!locked) return fail(locked);
  return locked->boolean(0, 0);
}

Result<bool> ProcessingLocks::acquire(bool now_please) {
  if (taken_ && !held()) forget();  // the session that held them is gone
  if (!taken_) {
    auto locked = try_lock(kProcessingLock);
    if (!locked) return fail(locked);
    if (!*locked) return false;
    taken_ = true;
    generation_ = db_->generation();
    next_rebalance_ = {};
    if (kind_ == Kind::exclusive) {
      for (int s = 0; s < pgshard::kShardCount; ++s) set_owned(s, true);
      return true;
    }
  }
  if (kind_ == Kind::shared) {
    const auto now = std::chrono::steady_clock::now();
    if (now_please || now >= next_rebalance_) {
      next_rebalance_ = now + kRebalanceEvery;
      if (auto balanced = rebalance(); !balanced) return fail(balanced);
    }
  }
  return shards_.count() > 0;
}

Result<void> ProcessingLocks::rebalance() {
  auto census = db_->query(kLockCensus,
                           pg::Params().add(kProcessingLock).add(kShardLockBase).add(int64_t{pgshard::kShardCount}));
  if (!census) return fail(census, "counting the processing sessions");
  const int64_t sessions = std::max<int64_t>(census->integer(0, 0), 1);
  const int64_t held = census->integer(0, 1);
  const int64_t fewest = census->integer(0, 2);
  // Each session holds floor(16 / sessions) or one more. Above the higher: give back the
  // highest shards; above the lower while another session holds fewer than it (all shards
  // taken, as 4 + 4 + 4 + 4 + 0 with five sessions): give back one. Between steps, so none
  // is being applied; another session takes them at its next rebalance.
  const int low = static_cast<int>(pgshard::kShardCount / sessions);
  const int high = static_cast<int>((pgshard::kShardCount + sessions - 1) / sessions);
  const bool one_starves = fewest < low;  // another session (not this one, then) holds too few
  const int keep = one_starves && shards_.count() > low ? std::min(high, shards_.count() - 1) : high;
  for (int s = pgshard::kShardCount - 1; s >= 0 && shards_.count() > keep; --s) {
    if (!shards_.owned[static_cast<size_t>(s)]) continue;
    auto unlocked = db_->query("SELECT pg_advisory_unlock($1)", pg::Params().add(kShardLockBase + s));
    if (!unlocked) return fail(unlocked, "giving back a processing shard");
    set_owned(s, false);
  }
  // Below the share: the free ones, lowest first; past the lower share only while no
  // session holds fewer, so the free ones go to those that have too few.
  const int fair = one_starves && shards_.count() >= low ? low : high;
  for (int s = 0; s < pgshard::kShardCount && shards_.count() < fair; ++s) {
    if (shards_.owned[static_cast<size_t>(s)] || (held & (int64_t{1} << s)) != 0) continue;
    auto locked = try_lock(kShardLockBase + s);
    if (!locked) return fail(locked, "taking a processing shard");
    if (*locked) set_owned(s, true);
  }
  return {};
}

}  // namespace hh::store
