#pragma once
// max_outbox_mib for one destination (spec §10): what the outbox keeps of it, the record of
// what was dropped included, stays within the budget, without that record ever crowding
// out what waits to be sent, and without a long write transaction that the writer thread
// (ingest) would wait for.
//
// What the outbox keeps: entries, pending or dead (kEntryBytes each: the row and its index
// entries; a deliveries-mode entry refers to the inbox row, it does not copy the body), the
// contents pinned POSTs keep (their bytes: a dead POST of large rows keeps them until it is
// sent again or dropped), and dropped ranges (kRangeBytes each). A step drops as many of the
// oldest entries as free what is over at the average size of an entry (its kEntryBytes and
// share of the contents); the next check corrects what the average missed. One step (keep_within_budget()):
//  1. Ranges may take at most a kRangeShare-th of the budget. Past that the oldest are
//     merged into one (Outbox::merge_dropped()), down to half their share: re-creating a
//     merged range makes again what was sent between its parts too (under new ids), which
//     at least once allows, where a record that grew without bound would, once it alone
//     filled the budget, have every new entry dropped at once (the healthy users' too) and
//     add a range for each.
//  2. Past the budget, the oldest entries are dropped (Outbox::drop_oldest(): never those
//     of a POST in flight), at most kDropsPerStep per step, each step one transaction: a
//     budget lowered under a large outbox drops it over several steps (the caller runs the
//     next one soon: `more`), the writer getting the lock in between.
#include <cstdint>
#include <span>

#include "common/result.h"
#include "store/outbox.h"

namespace hh::forward {

inline constexpr int64_t kEntryBytes = 256;
inline constexpr int64_t kRangeBytes = 64;
inline constexpr int64_t kRangeShare = 4;      // ranges take at most a quarter of the budget
inline constexpr int64_t kDropsPerStep = 4096;  // entries dropped in one transaction, at most

struct BudgetStep {
  int64_t ranges_merged = 0;  // ranges fewer (merged into the oldest one)
  store::Dropped dropped;     // entries dropped, ranges written
  bool more = false;          // still over the budget: step again soon
};

// The most ranges a budget of `budget_bytes` keeps (at least 2).
int64_t max_dropped_ranges(int64_t budget_bytes);

// One step for `rule`'s destination, whose outbox holds `figures` now; `busy`: the entries
// of POSTs in flight.
Result<BudgetStep> keep_within_budget(store::Outbox& outbox, const store::ForwardRule& rule,
                                      const store::OutboxFigures& figures, int64_t budget_bytes,
                                      std::span<const int64_t> busy, int64_t now_ms);

}  // namespace hh::forward
