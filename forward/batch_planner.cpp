#include "forward/batch_planner.h"

#include <algorithm>
#include <unordered_map>

namespace hh::forward {

Result<std::vector<PlannedPost>> plan_posts(store::Outbox& outbox, const std::string& destination, const Busy& busy,
                                            int64_t now_ms, const PlanLimits& limits) {
  std::vector<PlannedPost> posts;
  if (limits.posts == 0) return posts;
  const size_t batch = std::max<size_t>(limits.batch, 1);
  // Enough heads to fill every POST even when each brings one entry, plus the busy ones
  // that are skipped.
  const auto want = static_cast<int64_t>(limits.posts * batch + busy.ids.size());
  auto heads = outbox.due_heads(destination, now_ms, want);
  if (!heads) return fail(heads);

  std::unordered_set<std::string> planned_keys;
  std::unordered_set<int64_t> planned_posts, planned_ids;
  // The unpinned POST being filled with the parts of users not isolated, and each isolated
  // user's own (the user's id; "" for the others).
  std::unordered_map<std::string, size_t> open;
  auto alone_user = [&](const store::OutboxEntry& e) -> std::string {
    return e.user_id && busy.alone_users.contains(*e.user_id) ? *e.user_id : std::string();
  };
  // Room for an unpinned part of `user`: in its open POST, else in a new one.
  auto room = [&](const std::string& user) -> size_t {
    const auto it = open.find(user);
    if (it != open.end() && posts[it->second].entries.size() < batch) return batch - posts[it->second].entries.size();
    return posts.size() < limits.posts ? batch : 0;
  };
  auto add_part = [&](const std::string& user, std::vector<store::OutboxEntry> part) {
    auto it = open.find(user);
    if (it == open.end() || posts[it->second].entries.size() >= batch) {
      posts.emplace_back();
      it = open.insert_or_assign(user, posts.size() - 1).first;
    }
    for (auto& e : part) {
      planned_ids.insert(e.outbox_id);
      posts[it->second].entries.push_back(std::move(e));
    }
  };
  auto key_taken = [&](const std::optional<std::string>& key) {
    return limits.ordered && key && (busy.keys.contains(*key) || planned_keys.contains(*key));
  };

  for (const store::OutboxEntry& head : *heads) {
    if (busy.ids.contains(head.outbox_id) || planned_ids.contains(head.outbox_id)) continue;
    if (head.post_id) {
      // A POST that went out before: whole, alone, under its id.
      const int64_t post_id = *head.post_id;
      if (busy.posts.contains(post_id) || planned_posts.contains(post_id)) continue;
      if (posts.size() >= limits.posts) continue;
      auto members = outbox.post_entries(post_id);
      if (!members) return fail(members);
      const bool blocked = members->empty() || std::any_of(members->begin(), members->end(), [&](const auto& e) {
                             return busy.ids.contains(e.outbox_id) || planned_ids.contains(e.outbox_id) ||
                                    e.next_attempt_at_ms > now_ms || key_taken(e.order_key);
                           });
      if (blocked) continue;
      planned_posts.insert(post_id);
      for (const auto& e : *members) {
        planned_ids.insert(e.outbox_id);
        if (limits.ordered && e.order_key) planned_keys.insert(*e.order_key);
      }
      posts.push_back(PlannedPost{std::move(*members), post_id});
      continue;
    }
    if (key_taken(head.order_key)) continue;
    const std::string user = alone_user(head);
    const size_t space = room(user);
    if (space == 0) continue;
    if (!limits.ordered || !head.order_key) {
      add_part(user, {head});
      continue;
    }
    auto run = outbox.key_entries(destination, *head.order_key, static_cast<int64_t>(space));
    if (!run) return fail(run);
    if (run->empty()) continue;
    if (run->front().outbox_id != head.outbox_id) {
      // Marked, but an earlier entry of its key is pending: the mark moves there.
      if (auto moved = outbox.demote(head.outbox_id); !moved) return fail(moved);
      continue;
    }
    // The head, then the key's next entries while they never went out and may go now.
    std::vector<store::OutboxEntry> part;
    for (store::OutboxEntry& e : *run) {
      const bool first = e.outbox_id == head.outbox_id;
      if (!first && (e.post_id || busy.ids.contains(e.outbox_id) || e.next_attempt_at_ms > now_ms)) break;
      part.push_back(std::move(e));
    }
    planned_keys.insert(*head.order_key);
    add_part(user, std::move(part));
  }
  // A new POST's entries in outbox order (each key's entries are already, their ids grow):
  // the order the schema promises, and the one post_entries() gives a retry of the POST,
  // so that one id always carries one sequence. Its first entry names the POST.
  for (PlannedPost& post : posts) {
    if (post.pinned) continue;
    std::sort(post.entries.begin(), post.entries.end(),
              [](const store::OutboxEntry& a, const store::OutboxEntry& b) { return a.outbox_id < b.outbox_id; });
  }
  return posts;
}

}  // namespace hh::forward
