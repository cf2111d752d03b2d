#include "store/postgres/processing_locks.h"

#include "store/postgres/database.h"

namespace hh::store {
namespace {

constexpr auto kRebalanceEvery = std::chrono::seconds(1);

// In this database (advisory locks are per database): how many sessions hold
// kProcessingLock shared, and which shard locks are held (bit n: shard n).
constexpr const char* kLockCensus =
    "SELECT count(*) FILTER (WHERE objid::bigint = $1 AND mode = 'ShareLock'), "
    "coalesce(bit_or(1 << (objid::bigint - $2)::int) FILTER (WHERE objid::bigint BETWEEN $2 AND $2 + $3 - 1), 0) "
    "FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = 0 AND objsubid = 1 "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

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
  const int fair = static_cast<int>((pgshard::kShardCount + sessions - 1) / sessions);
  // Above the fair share: give back the highest shards (between steps, so none is being
  // applied); another session takes them at its next rebalance.
  for (int s = pgshard::kShardCount - 1; s >= 0 && shards_.count() > fair; --s) {
    if (!shards_.owned[static_cast<size_t>(s)]) continue;
    auto unlocked = db_->query("SELECT pg_advisory_unlock($1)", pg::Params().add(kShardLockBase + s));
    if (!unlocked) return fail(unlocked, "giving back a processing shard");
    set_owned(s, false);
  }
  // Below it: the free ones, lowest first.
  for (int s = 0; s < pgshard::kShardCount && shards_.count() < fair; ++s) {
    if (shards_.owned[static_cast<size_t>(s)] || (held & (int64_t{1} << s)) != 0) continue;
    auto locked = try_lock(kShardLockBase + s);
    if (!locked) return fail(locked, "taking a processing shard");
    if (*locked) set_owned(s, true);
  }
  return {};
}

}  // namespace hh::store
