#pragma once
// Body retention (spec §11, `[retention] body_days`): removing the raw bodies and headers
// of applied deliveries older than the retention, a small batch at a time, on the store's
// write connection (the writer thread runs it between ingest batches: processor/
// body_retention_work.h). One implementation per backend; Store::open_body_retention().
//
// What stays of such a delivery: its inbox row (seq, message id, origin, received_at,
// webhook timestamp, event type) and outcome, so the message id is still refused as a
// duplicate, plus the body's SHA-256, size and when it was removed. Pending deliveries
// (not applied yet) are never touched, whatever their age.
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace hh::store {

// Deliveries seq `first` to `last` (inclusive) all had their body removed.
struct SeqRange {
  int64_t first = 0, last = 0;
};

// Which deliveries have no body any more (for `rebuild`, which cannot re-derive them).
struct RemovedSoFar {
  int64_t deliveries = 0;
  std::vector<SeqRange> ranges;  // the first ranges in seq order, at most as many as asked for
};

// What `rebuild` would lose: the changes (store/sqlite/migrations/002-derived.sql, `changes`)
// recorded by applied deliveries whose body retention removed. Their rows cannot be re-derived,
// and a rebuild empties every derived table, so what they last wrote, and their part of the
// feed, would be gone. An erasure's placeholder (SQLite) records no change, nor do the rows
// of an erased user remain; after a rebuild that dropped them there are none left either.
struct ChangesWithoutBody {
  int64_t deliveries = 0;  // deliveries without a body that recorded a change still in the feed
  int64_t changes = 0;     // their changes in the feed
  int64_t rows = 0;        // the rows those changes cover (a samples change covers many)
  std::vector<SeqRange> ranges;  // the deliveries' first seq ranges, at most as many as asked for
};

struct RemovedBodies {
  int64_t deliveries = 0;  // bodies removed by this call
  int64_t bytes = 0;       // their size
  bool more = false;       // the batch was full: more may be waiting
};

// Where the sweep over deliveries that arrived late stands (remove_late_bodies): after the
// row (received_at_ms, seq) in (received_at, seq) order. The first step starts before all.
struct LateCursor {
  int64_t received_at_ms = INT64_MIN;
  int64_t seq = 0;
};

// One step of that sweep.
struct LateSweep {
  RemovedBodies removed;
  LateCursor next;    // where the next step starts
  bool done = false;  // the cutoff was reached: the sweep is over
};

class BodyRetention {
 public:
  virtual ~BodyRetention() = default;
  // Removes, in one transaction, the bodies of at most `max_deliveries` applied deliveries
  // received before `received_before_ms` (Unix ms), oldest first, recording each at `now_ms`.
  virtual Result<RemovedBodies> remove_bodies(int64_t received_before_ms, int64_t max_deliveries,
                                              int64_t now_ms) = 0;
  // remove_bodies walks in seq order and stops at the first delivery too new, so one
  // received before older-seq ones (a capture replayed with its signed times, a clock set
  // back) would wait behind them. This sweep finds those: it looks at up to `max_rows`
  // deliveries in (received_at, seq) order after `after` (the received_at index, no body
  // read), received before `received_before_ms`, and removes the bodies of those that lie
  // beyond remove_bodies' walk, are applied, and still have one; one transaction.
  virtual Result<LateSweep> remove_late_bodies(int64_t received_before_ms, LateCursor after, int64_t max_rows,
                                               int64_t now_ms) = 0;
  // Gives at most `max_bytes` of freed space back to the file system where the backend can
  // (SQLite: incremental vacuum, on a database created with auto_vacuum = INCREMENTAL).
  // Returns whether freed space is left to give back.
  virtual Result<bool> give_space_back(int64_t max_bytes) = 0;
  // What has been removed so far, as seq ranges (at most `max_ranges` of them).
  virtual Result<RemovedSoFar> removed_so_far(int64_t max_ranges) = 0;
  // The changes in the feed whose delivery has no body any more (at most `max_ranges` seq
  // ranges of those deliveries): what a rebuild would drop.
  virtual Result<ChangesWithoutBody> changes_without_body(int64_t max_ranges) = 0;
};

}  // namespace hh::store
