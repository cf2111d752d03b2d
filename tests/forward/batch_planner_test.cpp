// The ordering rule of spec §10 as forward/batch_planner.h plans it: per key (user/resource)
// one POST in flight and no overtaking, a failing entry holding back only its own key,
// batches kept whole across retries, nothing held back without `ordered`.
#include <boost/test/unit_test.hpp>

#include "forward/batch_planner.h"

BOOST_AUTO_TEST_SUITE(batch_planner_test)

using namespace hh;

namespace {

store::OutboxEntry entry(int64_t id, std::string key, int64_t due_at = 0, std::optional<int64_t> batch = {}) {
  store::OutboxEntry e;
  e.outbox_id = id;
  e.order_key = std::move(key);
  e.next_attempt_at_ms = due_at;
  e.batch_id = batch;
  e.state = "pending";
  return e;
}

// Each POST as its entries' ids.
std::vector<std::vector<int64_t>> ids(const std::vector<forward::PlannedPost>& posts) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& post : posts) {
    out.emplace_back();
    for (const auto* e : post.entries) out.back().push_back(e->outbox_id);
  }
  return out;
}

using Posts = std::vector<std::vector<int64_t>>;

}  // namespace

BOOST_AUTO_TEST_CASE(one_post_per_key_in_flight_and_other_keys_flow) {
  const std::vector<store::OutboxEntry> pending = {entry(1, "a/sleep"), entry(2, "a/sleep"), entry(3, "b/sleep"),
                                                   entry(4, "a/sleep"), entry(5, "c/heartrate")};
  // Batches of one: a's first, b's and c's go out; a's later ones wait for its first.
  BOOST_TEST(ids(forward::plan_posts(pending, {}, 100, {.ordered = true, .batch = 1, .posts = 8})) ==
             (Posts{{1}, {3}, {5}}));
  // a's first is in flight: a waits, the rest flows.
  BOOST_TEST(ids(forward::plan_posts(pending, {1}, 100, {.ordered = true, .batch = 1, .posts = 8})) ==
             (Posts{{3}, {5}}));
  // Lanes bound the POSTs.
  BOOST_TEST(ids(forward::plan_posts(pending, {}, 100, {.ordered = true, .batch = 1, .posts = 2})) ==
             (Posts{{1}, {3}}));
}

BOOST_AUTO_TEST_CASE(a_failing_entry_holds_back_only_its_own_key) {
  // a's first waits for its retry (due at 500): a's later entries wait too; b does not.
  const std::vector<store::OutboxEntry> pending = {entry(1, "a/sleep", 500), entry(2, "b/sleep"),
                                                   entry(3, "a/sleep"), entry(4, "b/sleep")};
  BOOST_TEST(ids(forward::plan_posts(pending, {}, 100, {.ordered = true, .batch = 1, .posts = 8})) ==
             (Posts{{2}}));
  // Due again: a's first goes, its second still waits behind it.
  BOOST_TEST(ids(forward::plan_posts(pending, {}, 600, {.ordered = true, .batch = 1, .posts = 8})) ==
             (Posts{{1}, {2}}));
}

BOOST_AUTO_TEST_CASE(a_batch_keeps_a_keys_entries_together_and_in_order) {
  const std::vector<store::OutboxEntry> pending = {entry(1, "a/sleep"), entry(2, "b/sleep"), entry(3, "a/sleep"),
                                                   entry(4, "c/sleep"), entry(5, "a/sleep")};
  // One POST of three, then the next; a's third entry may not go in the second POST.
  BOOST_TEST(ids(forward::plan_posts(pending, {}, 100, {.ordered = true, .batch = 3, .posts = 2})) ==
             (Posts{{1, 2, 3}, {4}}));
}

BOOST_AUTO_TEST_CASE(a_post_that_went_out_before_goes_out_again_whole_and_alone) {
  // 1 and 2 went out together as batch 1 and failed; 3 is new.
  const std::vector<store::OutboxEntry> pending = {entry(1, "a/sleep", 0, 1), entry(2, "b/sleep", 0, 1),
                                                   entry(3, "c/sleep"), entry(4, "a/sleep")};
  BOOST_TEST(ids(forward::plan_posts(pending, {}, 100, {.ordered = true, .batch = 10, .posts = 4})) ==
             (Posts{{1, 2}, {3}}));
  // Not due yet: neither of its entries goes, and their keys wait.
  std::vector<store::OutboxEntry> later = pending;
  later[0].next_attempt_at_ms = later[1].next_attempt_at_ms = 500;
  BOOST_TEST(ids(forward::plan_posts(later, {}, 100, {.ordered = true, .batch = 10, .posts = 4})) == (Posts{{3}}));
}

BOOST_AUTO_TEST_CASE(without_ordered_nothing_waits_for_its_key) {
  const std::vector<store::OutboxEntry> pending = {entry(1, "a/sleep", 500), entry(2, "a/sleep"),
                                                   entry(3, "a/sleep")};
  BOOST_TEST(ids(forward::plan_posts(pending, {2}, 100, {.ordered = false, .batch = 1, .posts = 8})) ==
             (Posts{{3}}));
  BOOST_TEST(ids(forward::plan_posts(pending, {}, 100, {.ordered = false, .batch = 5, .posts = 8})) ==
             (Posts{{2, 3}}));
}

BOOST_AUTO_TEST_SUITE_END()
