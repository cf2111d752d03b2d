// Two sessions applying deliveries at once, as instances that share the processing will
// (docs/decisions/050: processing in shards by user). New series and change ids are
// max(id) + 1 (SQLite's rowids); without the lock on new ids (lock_new_ids,
// store/postgres/derived/pg_statements.h) the second session to commit computes the ids
// the first took and fails on the unique key: a valid delivery blamed. And the outbox of
// a step takes that step's own changes, not another session's committed meanwhile.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

#include "store/postgres/derived/pg_derived_writer.h"
#include "store/postgres/outbox/pg_outbox_writer.h"
#include "tests/derived/delivery_builders.h"
#include "tests/postgres/twin_stores.h"

BOOST_AUTO_TEST_SUITE(pg_concurrent_steps_test)

using namespace hh;
using test::heartrate;
using test::kReceivedAt;
using test::twin_must;

namespace {

// One session's writer and outbox, as a processing step uses them.
struct Session {
  explicit Session(const test::TwinStores& t, std::vector<store::ForwardRule> rules = {})
      : db(t.pg_connection()),
        writer(twin_must(store::PgDerivedWriter::create(db))),
        outbox(twin_must(store::PgOutboxWriter::create(db, std::move(rules)))) {
    writer->defer_changes();
  }

  // A step of one delivery of `user`'s per seq of `seqs`, each a summary and samples in a
  // series of the user's own (a new series and two changes the first time), its changes
  // flushed; the transaction left open (more() adds to it, commit() ends it). No
  // assertions: it also runs on a thread of its own.
  Result<void> step(std::vector<int64_t> seqs, std::string_view user) {
    if (auto begun = db.exec("BEGIN"); !begun) return begun;
    writer->discard_changes();
    return more(std::move(seqs), user);
  }
  Result<void> more(std::vector<int64_t> seqs, std::string_view user) {
    for (int64_t seq : seqs) {
      rows::DeliveryRows d = test::samples({heartrate(seq * 1000, 60)}, user);
      const std::string id = "s" + std::to_string(seq);
      auto summary = test::sleep_summary(id, "{}");
      d.summaries = summary.summaries;
      d.summaries[0].user_id = user;
      if (auto applied = writer->apply(d, seq, kReceivedAt + seq); !applied) {
        return fail(applied, "seq " + std::to_string(seq));
      }
    }
    return writer->flush_changes();
  }
  // The step's outbox entries, once, after its last change (as PgProcessingStore's
  // write_changes()), then COMMIT.
  Result<void> commit() {
    auto entries = outbox.changes(writer->changes_inserted());
    auto committed = entries ? db.exec("COMMIT") : entries;
    if (!committed) (void)db.exec("ROLLBACK");
    return committed;
  }

  pg::Connection db;
  std::unique_ptr<store::PgDerivedWriter> writer;
  store::PgOutboxWriter outbox;
};

// Waits (bounded: 30 s) until the session with backend `pid` waits for a lock; false if
// it never did. No assertion: a thread is still running.
bool wait_until_blocked(pg::Connection& observer, int pid) {
  for (int i = 0; i < 3000; ++i) {
    auto waiting = observer.query_int("SELECT count(*) FROM pg_locks WHERE pid = $1 AND NOT granted",
                                      pg::Params().add(int64_t{pid}));
    if (waiting && waiting->value_or(0) > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::vector<std::string> column(pg::Connection& db, const std::string& sql) {
  auto rows = db.query(sql);
  BOOST_REQUIRE_MESSAGE(rows, rows.error());
  std::vector<std::string> values;
  for (int r = 0; r < rows->size(); ++r) values.emplace_back(rows->text(r, 0));
  return values;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_second_session_takes_the_ids_after_the_first_commits) {
  test::TwinStores t;
  Session first(t), second(t);
  auto first_step = first.step({1}, "u1");  // holds the lock on new ids from its series to its commit
  BOOST_REQUIRE_MESSAGE(first_step, first_step.error());
  // The second applies a user of its own: a new series and changes, in a transaction of
  // its own, while the first has not committed.
  Result<void> second_step = fail("not run");
  std::thread other([&] {
    second_step = second.step({2}, "u2");
    if (second_step) second_step = second.commit();
  });
  const bool second_waited = wait_until_blocked(t.pg, second.db.backend_pid());
  first_step = first.more({3}, "u1");  // the first step goes on: more changes after it was waited for
  if (first_step) first_step = first.commit();
  other.join();
  BOOST_TEST(second_waited);
  BOOST_TEST(first_step.ok(), first_step.error());
  BOOST_TEST(second_step.ok(), second_step.error());
  // Each step's ids are contiguous and in commit order; no id was given twice.
  BOOST_TEST(column(t.pg, "SELECT user_id || ':' || series_id FROM series ORDER BY series_id") ==
                 (std::vector<std::string>{"u1:1", "u2:2"}),
             boost::test_tools::per_element());
  BOOST_TEST(column(t.pg, "SELECT count(*) = max(change_id) FROM changes") == std::vector<std::string>{"t"});
  const std::vector<std::string> seqs = column(t.pg, "SELECT seq FROM changes ORDER BY change_id");
  BOOST_TEST(seqs.size() >= 6u);  // a summary and samples per delivery, at least
  // The first step's (seqs 1 and 3, committed first), then the second's (seq 2).
  const auto commit_rank = [](const std::string& seq) { return seq == "2" ? 1 : 0; };
  BOOST_TEST(std::is_sorted(seqs.begin(), seqs.end(),
                            [&](const std::string& a, const std::string& b) { return commit_rank(a) < commit_rank(b); }));
  BOOST_TEST(std::count(seqs.begin(), seqs.end(), "2") >= 2);
}

BOOST_AUTO_TEST_CASE(a_steps_outbox_entries_are_its_own_changes) {
  test::TwinStores t;
  for (int64_t seq = 1; seq <= 3; ++seq) {
    t.inbox(seq, "m" + std::to_string(seq), "webhook", seq, "daily.data.sleep.created", "{}", "{}");
  }
  const std::vector<store::ForwardRule> rules{
      store::ForwardRule{.destination = "backend", .mode = store::ForwardMode::changes, .events = {}}};
  Session first(t, rules), second(t, rules);
  // The first step begins; the second runs whole and commits before the first inserts a
  // change (it would have been taken as "after the newest change when the step began").
  BOOST_REQUIRE(first.db.exec("BEGIN"));
  first.writer->discard_changes();
  for (auto done : {second.step({2}, "u2"), second.commit(), first.more({1, 3}, "u1"), first.commit()}) {
    BOOST_REQUIRE_MESSAGE(done, done.error());
  }
  // One entry per change, each under the step that made it.
  BOOST_TEST(column(t.pg, "SELECT seq || ':' || table_name || ':' || row_key FROM outbox ORDER BY outbox_id") ==
                 column(t.pg, "SELECT seq || ':' || table_name || ':' || row_key FROM changes ORDER BY change_id"),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
