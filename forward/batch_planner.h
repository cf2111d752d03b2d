#pragma once
// Which pending outbox entries of one destination go out now, and in which POSTs: the
// ordering rule of spec §10, as a pure function of what the store lists.
//
// Walking the pending entries in outbox order (due or not):
//  - an entry of a key (user/resource) that has an earlier entry in flight, waiting for
//    its retry, or left for later, is held back: with `ordered`, a key never has two POSTs
//    in flight and never overtakes itself, and a failing entry holds back only its own key;
//  - an entry that went out before in a POST (batch_id) goes out again in that same POST,
//    whole, so the POST's id stays the same across retries;
//  - the others fill new POSTs of up to `batch` entries; the entries of one key stay in
//    one POST (in order), so a key's next POST waits for this one.
// Without `ordered`, nothing is held back by its key.
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_set>
#include <vector>

#include "store/outbox.h"

namespace hh::forward {

struct PlannedPost {
  std::vector<const store::OutboxEntry*> entries;  // in outbox order
  std::optional<int64_t> pinned_batch;             // went out before under this id
};

struct PlanLimits {
  bool ordered = true;
  size_t batch = 1;      // entries per POST
  size_t posts = 1;      // POSTs that may start now (free lanes)
};

// `pending`: one destination's pending entries in outbox order; `in_flight`: ids being
// sent now; `now_ms`: entries due after it wait.
std::vector<PlannedPost> plan_posts(std::span<const store::OutboxEntry> pending,
                                    const std::unordered_set<int64_t>& in_flight, int64_t now_ms,
                                    const PlanLimits& limits);

}  // namespace hh::forward
