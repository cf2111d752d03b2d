#pragma once
// Which pending outbox entries of one destination go out now, and in which POSTs: the
// ordering rule of spec §10, planned from what is due per key (store/outbox.h: the heads,
// the first pending entry of each user/resource key, by due time), never from a window of
// the oldest ids, so a due entry is not held back by any number of entries of other keys.
//
// For each due head, oldest due first:
//  - a head pinned to a POST that went out before (post_id) brings that POST back whole:
//    the entries pinned to it, nothing else, under the same id;
//  - otherwise, with `ordered`, the key's first entries (the head and those after it that
//    never went out, up to the room left) join the POST being filled: a key's entries stay
//    in one POST, in order, and the key's next POST waits for this one;
//  - without `ordered`, each due head goes alone into the POST being filled;
//  - a user a split isolated (Busy::alone_users: its first part of a failed POST of several
//    users has had no answer yet) goes into POSTs of its own user only, nobody else's
//    beside it: the backend may be hanging on that user, and each POST that put another
//    user beside it again cost that user another timeout_ms.
// A key (or entry, or POST) that is busy (in flight, or delivered and not yet deleted) is
// skipped: with `ordered`, a key never has two POSTs in flight and never overtakes itself.
// POSTs are filled to `batch` entries, at most `posts` of them.
//
// A head whose mark turns out not to be its key's first entry (entries committed out of
// id order on PostgreSQL, a re-queue) is demoted on the spot; its key goes out from its
// true first entry at the next look.
//
// Cost: one due_heads() range read, then one key_entries() or post_entries() seek per
// POST part planned: independent of how many entries wait behind keys that are not due.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/result.h"
#include "store/outbox.h"

namespace hh::forward {

struct PlannedPost {
  std::vector<store::OutboxEntry> entries;  // in outbox order
  std::optional<int64_t> pinned;            // went out before as this POST
};

struct PlanLimits {
  bool ordered = true;
  size_t batch = 1;  // entries per POST
  size_t posts = 1;  // POSTs that may be planned now
};

// What may not go out now: in flight, or delivered and not yet deleted.
struct Busy {
  std::unordered_set<int64_t> ids;
  std::unordered_set<std::string> keys;  // their order keys (with `ordered`)
  std::unordered_set<int64_t> posts;     // their POSTs
  std::unordered_set<std::string> alone_users;  // planned in POSTs of their own only (user_id)
};

Result<std::vector<PlannedPost>> plan_posts(store::Outbox& outbox, const std::string& destination, const Busy& busy,
                                            int64_t now_ms, const PlanLimits& limits);

}  // namespace hh::forward
