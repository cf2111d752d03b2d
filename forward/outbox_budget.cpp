#include "forward/outbox_budget.h"

#include <algorithm>

namespace hh::forward {

int64_t max_dropped_ranges(int64_t budget_bytes) {
  return std::max<int64_t>(2, budget_bytes / kRangeShare / kRangeBytes);
}

Result<BudgetStep> keep_within_budget(store::Outbox& outbox, const store::ForwardRule& rule,
                                      const store::OutboxFigures& figures, int64_t budget_bytes,
                                      std::span<const int64_t> busy, int64_t now_ms) {
  BudgetStep step;
  int64_t ranges = figures.dropped_ranges;
  const int64_t max_ranges = max_dropped_ranges(budget_bytes);
  if (ranges > max_ranges) {
    auto merged = outbox.merge_dropped(rule.destination, max_ranges / 2);
    if (!merged) return fail(merged);
    step.ranges_merged = *merged;
    ranges -= *merged;
  }
  const int64_t kept = (figures.pending + figures.dead) * kEntryBytes + figures.content_bytes + ranges * kRangeBytes;
  if (kept <= budget_bytes) return step;
  // What an entry frees when dropped, on average: kEntryBytes, and its share of the contents.
  const int64_t entries = figures.pending + figures.dead;
  const int64_t per_entry =
      entries > 0 ? std::max(kEntryBytes, (entries * kEntryBytes + figures.content_bytes) / entries) : kEntryBytes;
  const int64_t over = (kept - budget_bytes + per_entry - 1) / per_entry;
  const int64_t count = std::min(over, kDropsPerStep);
  auto dropped = outbox.drop_oldest(rule, count, busy, now_ms);
  if (!dropped) return fail(dropped);
  step.dropped = *dropped;
  // Another step when this one could not drop all that is over (and dropped something: what
  // is left may all be in flight).
  step.more = over > count && dropped->entries > 0;
  return step;
}

}  // namespace hh::forward
