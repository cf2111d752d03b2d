#pragma once
// How far the inbox may be read on PostgreSQL (spec §9, the trap): a sequence hands out
// `seq` when a row is inserted, not when its transaction commits, so rows become visible
// out of seq order. A reader that moved past a gap (seq 50 not visible yet, 51 visible)
// would skip row 50 for ever once it commits. The horizon is the newest seq below which
// no row can appear any more: the processor and the change feed never read past it.
//
// How it is found, without blocking ingest (docs/decisions/030-postgresql-store.md):
//   1. L = the sequence's newest value. Every seq <= L was drawn by a transaction that,
//      while it drew it, held its RowExclusiveLock on `inbox` (taken before the INSERT
//      computes its row, held to the transaction's end).
//   2. W = the transactions (virtual ids) holding that lock now, read after L. A
//      transaction that drew a seq <= L is either finished or in W.
//   3. Once none of W is still running, every seq <= L is final: the horizon moves to L.
// An idle inbox (W empty) moves it at once; under load it follows one probe behind.
// Transactions elsewhere in the cluster, however long, do not hold it back.
#include <cstdint>
#include <string>

#include "common/result.h"
#include "store/postgres/connection.h"

namespace hh::store {

class InboxHorizon {
 public:
  explicit InboxHorizon(pg::Connection& db) : db_(&db) {}

  // Moves the horizon as far as is safe now (one round trip) and returns it. Call outside
  // a transaction that wrote to the inbox.
  Result<int64_t> advance();
  int64_t horizon() const { return horizon_; }

 private:
  pg::Connection* db_;
  int64_t horizon_ = 0;
  // The newest seq seen by the last probe that had writers in flight, and those writers
  // (a text array of virtual transaction ids); empty when no candidate waits.
  int64_t candidate_ = 0;
  std::string candidate_writers_;
};

}  // namespace hh::store
