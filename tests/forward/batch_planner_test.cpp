// The ordering rule of spec §10 as forward/batch_planner.h plans it, on a real outbox (a
// SQLite file, entries marked by classify()): per key (user/resource) one POST in flight
// and no overtaking, a failing entry holding back only its own key however many entries
// wait behind it, POSTs that went out kept whole, nothing held back without `ordered`.
#include <boost/test/unit_test.hpp>

#include "forward/batch_planner.h"
#include "store/sqlite/database.h"
#include "store/sqlite/outbox/sqlite_outbox.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(batch_planner_test)

using namespace hh;

namespace {

constexpr int64_t kNow = 100;

// An outbox with entries written as the store's writer writes them (unmarked), and the
// sender's handle on it.
struct Planned {
  test::TempDir dir;
  std::string path = dir.file("healthhook.db");
  sqlite::Connection writer = open_writer(path);
  std::unique_ptr<store::Outbox> outbox = open_sender(path);

  static sqlite::Connection open_writer(const std::string& path) {
    auto db = store::open_for_writing(path, {});
    BOOST_REQUIRE_MESSAGE(db, db.error());
    return std::move(*db);
  }
  static std::unique_ptr<store::Outbox> open_sender(const std::string& path) {
    auto outbox = store::open_sqlite_outbox(path, store::OutboxUse::sender);
    BOOST_REQUIRE_MESSAGE(outbox, outbox.error());
    return std::move(*outbox);
  }

  // Entry `id` of `key`, due at `due_at`, pinned to `post` when it went out before.
  void add(int64_t id, const std::string& key, int64_t due_at = 0, std::optional<int64_t> post = {}) {
    auto stmt = writer.prepare(
        "INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, order_key, created_at, "
        "next_attempt_at, post_id) VALUES (?1, 'backend', 'change', ?1, 'summaries', 'sleep/' || ?1, 'insert', ?2, 0, "
        "?3, ?4)");
    BOOST_REQUIRE(stmt);
    stmt->bind(1, id).bind(2, std::string_view(key)).bind(3, due_at).bind(4, post);
    BOOST_REQUIRE(stmt->run());
  }

  // Each planned POST as its entries' ids, after the sender marked what is new.
  std::vector<std::vector<int64_t>> plan(const forward::PlanLimits& limits, const forward::Busy& busy = {},
                                         int64_t now = kNow) {
    auto marked = outbox->classify("backend", limits.ordered, 10000);
    BOOST_REQUIRE_MESSAGE(marked, marked.error());
    auto posts = forward::plan_posts(*outbox, "backend", busy, now, limits);
    BOOST_REQUIRE_MESSAGE(posts, posts.error());
    std::vector<std::vector<int64_t>> out;
    for (const auto& post : *posts) {
      out.emplace_back();
      for (const auto& e : post.entries) out.back().push_back(e.outbox_id);
    }
    return out;
  }

  int64_t head_of(int64_t id) {
    auto head = writer.query_int("SELECT head FROM outbox WHERE outbox_id = " + std::to_string(id));
    BOOST_REQUIRE(head);
    return head->value_or(-1);
  }
};

using Posts = std::vector<std::vector<int64_t>>;

forward::Busy busy_with(std::initializer_list<int64_t> ids, std::initializer_list<std::string> keys) {
  forward::Busy busy;
  busy.ids.insert(ids.begin(), ids.end());
  busy.keys.insert(keys.begin(), keys.end());
  return busy;
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_post_per_key_in_flight_and_other_keys_flow) {
  Planned p;
  p.add(1, "a/sleep");
  p.add(2, "a/sleep");
  p.add(3, "b/sleep");
  p.add(4, "a/sleep");
  p.add(5, "c/heartrate");
  // Batches of one: a's first, b's and c's go out; a's later ones wait for its first.
  BOOST_TEST(p.plan({.ordered = true, .batch = 1, .posts = 8}) == (Posts{{1}, {3}, {5}}));
  BOOST_TEST(p.head_of(1) == 1);
  BOOST_TEST(p.head_of(2) == 0);
  // a's first is in flight: a waits, the rest flows.
  BOOST_TEST(p.plan({.ordered = true, .batch = 1, .posts = 8}, busy_with({1}, {"a/sleep"})) == (Posts{{3}, {5}}));
  // Lanes bound the POSTs.
  BOOST_TEST(p.plan({.ordered = true, .batch = 1, .posts = 2}) == (Posts{{1}, {3}}));
}

BOOST_AUTO_TEST_CASE(a_failing_entry_holds_back_only_its_own_key_however_many_wait) {
  Planned p;
  // a's first waits for its retry (an hour); 3,000 more of a's wait behind it, then one of b.
  p.add(1, "a/sleep", 3'600'000);
  BOOST_REQUIRE(p.writer.exec(
      "WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < 3001) "
      "INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, order_key, created_at, "
      "next_attempt_at) SELECT i, 'backend', 'change', i, 'summaries', 'sleep/' || i, 'insert', 'a/sleep', 0, 0 FROM n"));
  p.add(3002, "b/sleep");
  BOOST_TEST(p.plan({.ordered = true, .batch = 1, .posts = 1}) == (Posts{{3002}}));
  // Due again: a's first goes, its second still waits behind it.
  BOOST_REQUIRE(p.writer.exec("DELETE FROM outbox WHERE outbox_id = 3002"));
  BOOST_TEST(p.plan({.ordered = true, .batch = 1, .posts = 4}, {}, 3'600'000) == (Posts{{1}}));
}

BOOST_AUTO_TEST_CASE(a_batch_keeps_a_keys_entries_together_and_in_order) {
  Planned p;
  p.add(1, "a/sleep");
  p.add(2, "b/sleep");
  p.add(3, "a/sleep");
  p.add(4, "c/sleep");
  p.add(5, "a/sleep");
  // A key's entries join the POST together, as many as there is room for; the key's next
  // ones wait for that POST.
  BOOST_TEST(p.plan({.ordered = true, .batch = 3, .posts = 2}) == (Posts{{1, 3, 5}, {2, 4}}));
  BOOST_TEST(p.plan({.ordered = true, .batch = 2, .posts = 2}) == (Posts{{1, 3}, {2, 4}}));
}

// A POST's entries are in outbox order, as a retry of it reads them (post_entries): one id,
// one sequence of changes. A key's run and the next key's heads interleave by id.
BOOST_AUTO_TEST_CASE(a_batch_lists_its_entries_in_outbox_order) {
  Planned p;
  p.add(1, "a/sleep");
  p.add(2, "b/sleep");
  p.add(3, "a/sleep");
  p.add(4, "b/sleep");
  p.add(5, "c/sleep");
  BOOST_TEST(p.plan({.ordered = true, .batch = 5, .posts = 1}) == (Posts{{1, 2, 3, 4, 5}}));
}

BOOST_AUTO_TEST_CASE(a_post_that_went_out_before_goes_out_again_whole_and_alone) {
  Planned p;
  // 1 and 2 went out together as POST 1 and failed; 3 is new; 4 is a's next.
  p.add(1, "a/sleep", 0, 1);
  p.add(2, "b/sleep", 0, 1);
  p.add(3, "c/sleep");
  p.add(4, "a/sleep");
  BOOST_TEST(p.plan({.ordered = true, .batch = 10, .posts = 4}) == (Posts{{1, 2}, {3}}));
  // Not due yet: neither of its entries goes, and their keys wait.
  BOOST_REQUIRE(p.writer.exec("UPDATE outbox SET next_attempt_at = 500 WHERE post_id = 1"));
  BOOST_TEST(p.plan({.ordered = true, .batch = 10, .posts = 4}) == (Posts{{3}}));
  // A single entry that went out alone stays alone too: a's next does not join it.
  BOOST_REQUIRE(p.writer.exec("DELETE FROM outbox WHERE outbox_id IN (2, 3)"));
  BOOST_REQUIRE(p.writer.exec("UPDATE outbox SET post_id = 1, next_attempt_at = 0 WHERE outbox_id = 1"));
  BOOST_TEST(p.plan({.ordered = true, .batch = 10, .posts = 4}) == (Posts{{1}}));
}

BOOST_AUTO_TEST_CASE(without_ordered_nothing_waits_for_its_key) {
  Planned p;
  p.add(1, "a/sleep", 500);
  p.add(2, "a/sleep");
  p.add(3, "a/sleep");
  BOOST_TEST(p.plan({.ordered = false, .batch = 1, .posts = 8}, busy_with({2}, {})) == (Posts{{3}}));
  BOOST_TEST(p.plan({.ordered = false, .batch = 5, .posts = 8}) == (Posts{{2, 3}}));
}

BOOST_AUTO_TEST_CASE(a_mark_on_an_entry_that_is_not_its_keys_first_moves_there) {
  // PostgreSQL hands out ids when rows are inserted, not when they commit: 5 can be marked
  // as its key's first before 3 commits. Both marked; the planner finds 3 ahead of 5.
  Planned p;
  p.add(5, "a/sleep", 10);
  BOOST_REQUIRE(p.outbox->classify("backend", true, 100));
  p.add(3, "a/sleep", 20);
  BOOST_REQUIRE(p.outbox->classify("backend", true, 100));
  BOOST_TEST(p.head_of(5) == 1);
  BOOST_TEST(p.head_of(3) == 1);
  // 5 is due first: the planner sees 3 ahead of it, moves the mark, sends nothing of a now.
  BOOST_TEST(p.plan({.ordered = true, .batch = 1, .posts = 4}, {}, 15) == Posts{});
  BOOST_TEST(p.head_of(5) == 0);
  BOOST_TEST(p.head_of(3) == 1);
  BOOST_TEST(p.plan({.ordered = true, .batch = 5, .posts = 4}, {}, 20) == (Posts{{3, 5}}));
}

BOOST_AUTO_TEST_SUITE_END()
