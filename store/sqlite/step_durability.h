#pragma once
// Live processor steps commit without their own sync (WAL, synchronous = NORMAL for the
// step's COMMIT only); every other commit on the connection keeps the configured level.
//
// Why it is safe: the derived tables are a function of the inbox, and a step writes its
// rows and processor_state.applied_seq in one transaction. The WAL is an append-only log
// that SQLite recovers as a prefix (each frame's checksum covers the frames before it),
// and the next synced commit on the file (the writer's next ingest batch, or a
// checkpoint) syncs the step's frames with it. So a power loss can only forget the newest
// steps as a whole, rows and applied_seq together, and the processor applies those
// deliveries again from the durable inbox. A process crash (kill -9) loses nothing: the
// frames are in the OS's page cache. What this buys: an ingest commit no longer waits
// behind a second fsync per writer round, which is where the 2xx of `serve` spent most of
// its time (docs/decisions/004-live-steps-without-own-sync.md). Since then
// `serve` syncs ingest commits on a thread of its own (store/sqlite/wal_sync.h) and its write
// connection is NORMAL throughout: relax() and restore() do nothing there.
//
// Lifetime: `db` must outlive this object; used on the processing thread only.
#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class StepDurability {
 public:
  // Reads the connection's level: nothing to relax when it is not FULL (or EXTRA).
  static Result<StepDurability> create(sqlite::Connection& db);

  // Around one step: relax() before BEGIN, restore() after COMMIT or ROLLBACK.
  Result<void> relax();
  Result<void> restore();

 private:
  StepDurability(sqlite::Connection& db, int64_t level) : db_(&db), configured_level_(level) {}
  sqlite::Connection* db_;
  int64_t configured_level_;  // PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA
};

}  // namespace hh::store
