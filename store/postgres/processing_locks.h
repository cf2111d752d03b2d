#pragma once
// The session advisory locks that make a PostgreSQL session a processor of the store
// (docs/decisions/050): kProcessingLock, and one lock per processing shard
// (processing_shards.h).
//
//  - exclusive (`rebuild`, `replay`, `purge-user`, `user deregister`, and instances of
//    versions before shards): kProcessingLock alone, held exclusively, stands for every
//    shard. No other session processes meanwhile.
//  - shared (`serve`): kProcessingLock shared, so commands and older versions wait, then
//    a fair share of the shards: every second, rebalance() counts the sessions that hold
//    kProcessingLock shared and takes free shards up to ceil(16 / sessions), or gives back
//    those above it. A session that dies (kill -9, a lost connection) frees its locks with
//    its session; the others take its shards at their next rebalance.
//
// All locks go with the session: once the connection was opened again (its generation
// changed), none is held any more and held() says so.
//
// Lifetime: `db` must outlive this object; used on the thread that owns the connection,
// between steps (never inside a step's transaction: a shard must not change owner while
// its rows are being applied).
#include <chrono>
#include <cstdint>

#include "common/result.h"
#include "store/postgres/connection.h"
#include "store/postgres/processing_shards.h"

namespace hh::store {

class ProcessingLocks {
 public:
  enum class Kind { exclusive, shared };
  ProcessingLocks(pg::Connection& db, Kind kind) : db_(&db), kind_(kind) {}
  ProcessingLocks(const ProcessingLocks&) = delete;
  ProcessingLocks& operator=(const ProcessingLocks&) = delete;
  ~ProcessingLocks();

  // Takes kProcessingLock if not held (false while a session holds it in the other mode),
  // then, shared, rebalances the shards when a second has passed since the last time (or
  // `now_please`). True when this session may apply some shard.
  Result<bool> acquire(bool now_please = false);
  // Whether the locks taken are still held (the connection was not opened again).
  bool held() const { return taken_ && db_->generation() == generation_; }
  // Forgets the locks after the session that held them ended.
  void forget();

  // The shards this session applies (all of them, exclusive).
  const pgshard::OwnedShards& shards() const { return shards_; }
  pgshard::OwnedShards& shards() { return shards_; }
  // Changes whenever the owned shards change.
  uint64_t version() const { return version_; }

 private:
  Result<void> rebalance();
  Result<bool> try_lock(int64_t key);
  void set_owned(int shard, bool owned);

  pg::Connection* db_;
  const Kind kind_;
  bool taken_ = false;  // kProcessingLock, in kind_'s mode
  uint64_t generation_ = 0;
  pgshard::OwnedShards shards_;
  uint64_t version_ = 0;
  std::chrono::steady_clock::time_point next_rebalance_{};
};

}  // namespace hh::store
