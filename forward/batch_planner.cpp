#include "forward/batch_planner.h"

#include <string_view>
#include <unordered_map>

namespace hh::forward {

std::vector<PlannedPost> plan_posts(std::span<const store::OutboxEntry> pending,
                                    const std::unordered_set<int64_t>& in_flight, int64_t now_ms,
                                    const PlanLimits& limits) {
  std::vector<PlannedPost> posts;
  std::unordered_set<std::string_view> held;               // keys whose later entries wait
  std::unordered_map<std::string_view, size_t> key_post;   // key → the POST its entries are in
  std::unordered_map<int64_t, size_t> pinned_post;         // batch_id → its POST
  std::unordered_set<int64_t> unsendable_pins;             // batch_ids held back (an entry in flight or not due)
  const size_t batch = std::max<size_t>(limits.batch, 1);

  for (const store::OutboxEntry& e : pending) {
    const bool keyed = limits.ordered && e.order_key.has_value();
    const std::string_view key = keyed ? std::string_view(*e.order_key) : std::string_view();
    auto hold = [&] {
      if (keyed) held.insert(key);
    };
    if (keyed && held.contains(key)) continue;
    if (in_flight.contains(e.outbox_id) || e.next_attempt_at_ms > now_ms) {
      if (e.batch_id) unsendable_pins.insert(*e.batch_id);
      hold();
      continue;
    }
    if (e.batch_id) {
      if (unsendable_pins.contains(*e.batch_id)) {
        hold();
        continue;
      }
      auto found = pinned_post.find(*e.batch_id);
      if (found == pinned_post.end()) {
        if (posts.size() >= limits.posts) {
          hold();
          continue;
        }
        posts.push_back(PlannedPost{{}, e.batch_id});
        found = pinned_post.emplace(*e.batch_id, posts.size() - 1).first;
      }
      posts[found->second].entries.push_back(&e);
      // Nothing else joins a POST that went out before, and the key's later entries wait for it.
      hold();
      continue;
    }
    size_t post = posts.size();
    if (keyed) {
      if (auto found = key_post.find(key); found != key_post.end()) post = found->second;
    }
    if (post == posts.size()) {
      // The newest unpinned POST with room, else a new one.
      if (!posts.empty() && !posts.back().pinned_batch && posts.back().entries.size() < batch) {
        post = posts.size() - 1;
      } else if (posts.size() >= limits.posts) {
        hold();
        continue;
      } else {
        posts.push_back(PlannedPost{});
      }
    }
    if (posts[post].pinned_batch || posts[post].entries.size() >= batch) {
      hold();
      continue;
    }
    posts[post].entries.push_back(&e);
    if (keyed) key_post[key] = post;
  }
  return posts;
}

}  // namespace hh::forward
