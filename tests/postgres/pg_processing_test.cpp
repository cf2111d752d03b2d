// Processing on PostgreSQL as `serve`, `rebuild` and `replay` run it (store::open_store,
// processor::Processor): the same inbox processed on SQLite and on PostgreSQL leaves the
// same tables; one instance leads at a time and another takes over from where it stopped;
// a server restart costs one failed batch and the lead, nothing else.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <span>
#include <thread>

#include "processor/processor.h"
#include "store/open_store.h"
#include "store/postgres/database.h"
#include "store/postgres/processing_shards.h"
#include "store/sqlite/database.h"
#include "tests/derived/corpus.h"
#include "tests/postgres/derived_dump.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(pg_processing_test)

using namespace hh;

namespace {

template <typename T>
T must(Result<T> result) {
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  return std::move(result.value());
}

void append_all(store::Inbox& inbox, const std::vector<store::NewDelivery>& deliveries, size_t from = 0,
                size_t to = SIZE_MAX, size_t batch = 40) {
  to = std::min(to, deliveries.size());
  for (size_t at = from; at < to; at += batch) {
    std::vector<const store::NewDelivery*> pointers;
    for (size_t i = at; i < std::min(at + batch, to); ++i) pointers.push_back(&deliveries[i]);
    auto appended = inbox.append(pointers);
    BOOST_REQUIRE_MESSAGE(appended, appended.error());
  }
}

std::unique_ptr<processor::Processor> processor_of(store::Store& store,
                                                   store::Leadership leadership = store::Leadership::now) {
  return must(processor::Processor::create(must(store.open_processing(leadership)), processor::kCatchUpSteps));
}

// Runs live steps (as `serve` does) until everything up to `newest` is applied; bounded.
void run_live_until(processor::Processor& processor, int64_t newest) {
  for (int round = 0; round < 2000 && processor.applied_seq() < newest; ++round) {
    if (!processor.run_once(INT64_MAX)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  BOOST_REQUIRE_EQUAL(processor.applied_seq(), newest);
}

// The corpus processed on SQLite in one go: what every PostgreSQL run must equal.
struct Reference {
  test::TempDir dir;
  std::string path = dir.file("reference.db");
  explicit Reference(const std::vector<store::NewDelivery>& corpus) {
    auto store = must(store::open_store(path, {}));
    append_all(*must(store->open_inbox()), corpus);
    BOOST_REQUIRE(processor_of(*store)->run_until_caught_up({}).ok());
  }
  sqlite::Connection connection() const { return must(store::open_for_writing(path, {})); }
};

int64_t newest_seq(const std::string& uri) {
  pg::Connection db = must(store::connect({uri, ""}));
  return must(db.query_int("SELECT max(seq) FROM inbox")).value_or(0);
}

// Every derived table of a PostgreSQL store (as derived_dump.h renders them), in a fixed order.
std::vector<std::vector<std::string>> dump_pg(const std::string& uri) {
  pg::Connection db = must(store::connect({uri, ""}));
  std::vector<std::vector<std::string>> tables;
  for (const test::DerivedDump& dump : test::derived_dumps(true)) {
    auto rows = test::derived_pg_rows(db, dump.pg_sql.empty() ? dump.sql : dump.pg_sql);
    if (!dump.ordered) std::sort(rows.begin(), rows.end());
    tables.push_back(std::move(rows));
  }
  tables.push_back(test::derived_pg_rows(db, "SELECT i.seq, o.status FROM inbox i LEFT JOIN delivery_outcomes o "
                                             "USING (seq) ORDER BY i.seq"));
  return tables;
}

std::vector<std::string> outcomes_lite(sqlite::Connection& db) {
  return test::rows(db, "SELECT seq, status, family, error, user_id FROM delivery_outcomes ORDER BY seq");
}
std::vector<std::string> outcomes_pg(pg::Connection& db) {
  return test::derived_pg_rows(db, "SELECT seq, status, family, error, user_id FROM delivery_outcomes ORDER BY seq");
}

// Deliveries a processor applied, of any status.
uint64_t applied_by(const processor::Processor& p) {
  const auto& s = p.stats();
  return s.processed.load() + s.invalid.load() + s.ignored.load() + s.unknown.load();
}

int64_t processed_seq(const std::string& uri) {
  pg::Connection db = must(store::connect({uri, ""}));
  return must(db.query_int("SELECT hh_processed_seq()")).value_or(-1);
}

// Live steps on every processor in turn (as their `serve`s would run them), until
// `done()`; bounded (30 s).
template <typename Done>
void run_all_until(std::span<processor::Processor* const> processors, Done done) {
  for (int round = 0; round < 3000 && !done(); ++round) {
    bool more = false;
    for (processor::Processor* p : processors) more = p->run_once(INT64_MAX) || more;
    if (!more) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  BOOST_REQUIRE(done());
}


// Two `serve`s' processors on a database (a fresh one unless given), each with its share
// of the shards.
struct SharingPair {
  // The first took every shard, alone; the second gets its share once the first gives it.
  explicit SharingPair(std::string database = test::PostgresCluster::shared().fresh_database())
      : uri(std::move(database)) {
    run_all_until(both, [&] { return a->stats().leading.load() == 1 && b->stats().leading.load() == 1; });
  }
  std::string uri;
  std::unique_ptr<store::Store> first = must(store::open_store(uri, {}));
  std::unique_ptr<store::Store> second = must(store::open_store(uri, {}));
  std::unique_ptr<processor::Processor> a = processor_of(*first, store::Leadership::when_free);
  std::unique_ptr<processor::Processor> b = processor_of(*second, store::Leadership::when_free);
  std::array<processor::Processor*, 2> both{a.get(), b.get()};
};

// The derived tables of both, row for row without ids, except the two that record the
// order deliveries were applied in (the change feed, a job's created_at): the corpus
// reuses summary and workout ids across users, which the service never does, and
// sessions apply different users' deliveries in any order. Their row counts must still
// agree where order does not change them (jobs).
size_t compare_order_free_tables(sqlite::Connection& lite, pg::Connection& pg) {
  size_t compared = 0;
  for (const test::DerivedDump& dump : test::derived_dumps(false)) {
    if (dump.name == std::string_view("changes")) continue;
    const bool jobs = dump.name == std::string_view("jobs");
    std::vector<std::string> lite_rows = test::rows(lite, jobs ? "SELECT kind, job_key FROM jobs" : dump.sql);
    std::vector<std::string> pg_rows =
        test::derived_pg_rows(pg, jobs ? "SELECT kind, job_key FROM jobs" : dump.pg_sql.empty() ? dump.sql : dump.pg_sql);
    std::sort(lite_rows.begin(), lite_rows.end());
    std::sort(pg_rows.begin(), pg_rows.end());
    BOOST_TEST_CONTEXT("table " << dump.name) { BOOST_TEST(pg_rows == lite_rows, boost::test_tools::per_element()); }
    compared += lite_rows.size();
  }
  return compared;
}


// Both applied some, together each of `deliveries` once (none twice, none left), and the
// tables are what SQLite makes of the same inbox.
void expect_shared_and_equal(const SharingPair& pair, const Reference& reference, pg::Connection& pg,
                             size_t deliveries) {
  BOOST_TEST(applied_by(*pair.a) > 0u);
  BOOST_TEST(applied_by(*pair.b) > 0u);
  BOOST_TEST(applied_by(*pair.a) + applied_by(*pair.b) == deliveries);
  sqlite::Connection lite = reference.connection();
  BOOST_TEST(compare_order_free_tables(lite, pg) > 300u);
  BOOST_TEST(outcomes_pg(pg) == outcomes_lite(lite), boost::test_tools::per_element());
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_same_inbox_processed_on_postgresql_equals_sqlite) {
  const auto corpus = test::make_corpus(600, 7);
  Reference reference(corpus);
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto store = must(store::open_store(uri, {}));
  append_all(*must(store->open_inbox()), corpus);
  auto processor = processor_of(*store);
  auto done = processor->run_until_caught_up({});
  BOOST_REQUIRE_MESSAGE(done, done.error());

  sqlite::Connection lite = reference.connection();
  pg::Connection pg = must(store::connect({uri, ""}));
  BOOST_TEST(test::compare_derived_tables(lite, pg) > 600u);
  BOOST_TEST(outcomes_pg(pg) == outcomes_lite(lite), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(one_instance_leads_and_another_takes_over_where_it_stopped) {
  const auto corpus = test::make_corpus(400, 11);
  Reference reference(corpus);
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto first = must(store::open_store(uri, {}));
  auto second = must(store::open_store(uri, {}));
  auto leader = processor_of(*first);
  // While the first leads: a command that needs the lock is refused, a server stands by.
  auto refused = second->open_processing(store::Leadership::now);
  BOOST_REQUIRE(!refused);
  BOOST_TEST((refused.error_kind() == ErrorKind::in_use));
  auto standby = processor_of(*second, store::Leadership::when_free);
  BOOST_TEST(!standby->run_once(INT64_MAX));
  BOOST_TEST(standby->stats().leading.load() == 0);

  // Both instances take deliveries; the leader applies what is there.
  auto first_inbox = must(first->open_inbox());
  auto second_inbox = must(second->open_inbox());
  append_all(*first_inbox, corpus, 0, 150);
  append_all(*second_inbox, corpus, 150, 250);
  run_live_until(*leader, 250);
  BOOST_TEST(leader->stats().leading.load() == 1);

  // The leader stops (its lock goes with it): the standby takes over from seq 250.
  leader.reset();
  append_all(*second_inbox, corpus, 250);
  run_live_until(*standby, 400);
  BOOST_TEST(standby->stats().leading.load() == 1);

  sqlite::Connection lite = reference.connection();
  pg::Connection pg = must(store::connect({uri, ""}));
  test::compare_derived_tables(lite, pg);
  BOOST_TEST(outcomes_pg(pg) == outcomes_lite(lite), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_server_restart_costs_one_batch_and_the_lead_and_nothing_else) {
  const auto corpus = test::make_corpus(200, 3);
  test::PostgresCluster cluster;  // a server of its own, to restart
  const std::string uri = cluster.fresh_database();
  auto store = must(store::open_store(uri, {}));
  auto inbox = must(store->open_inbox());
  auto processor = processor_of(*store, store::Leadership::when_free);
  append_all(*inbox, corpus, 0, 100);
  run_live_until(*processor, 100);

  cluster.stop();  // as a crash: the sequence may skip values it had logged ahead
  cluster.start();
  // The inbox finds its connection broken and stores the batch on a new one.
  append_all(*inbox, corpus, 100);
  // The processor lost its lock with the old session: it stands by, takes the lock again
  // and goes on from the position stored with its last step.
  run_live_until(*processor, newest_seq(uri));
  BOOST_TEST(processor->stats().leading.load() == 1);
  BOOST_TEST(must(must(store::connect({uri, ""})).query_int("SELECT count(*) FROM inbox")).value_or(0) == 200);

  // Every delivery applied once, and the tables what a rebuild makes of the inbox.
  const auto live = dump_pg(uri);
  BOOST_TEST(live.back().size() == 200u);
  for (const std::string& row : live.back()) BOOST_TEST(row.find("NULL") == std::string::npos, row);
  BOOST_REQUIRE(processor->reset_derived({.keep_statuses = true}).ok());
  processor.reset();
  auto rebuilt = processor_of(*store);
  auto caught_up = rebuilt->run_until_caught_up({});
  BOOST_REQUIRE_MESSAGE(caught_up, caught_up.error());
  const auto again = dump_pg(uri);
  for (size_t t = 0; t < live.size(); ++t) BOOST_TEST(again[t] == live[t], boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(rebuild_on_postgresql_recreates_the_same_tables) {
  const auto corpus = test::make_corpus(300, 5);
  Reference reference(corpus);
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto store = must(store::open_store(uri, {}));
  append_all(*must(store->open_inbox()), corpus);
  auto processor = processor_of(*store);
  BOOST_REQUIRE(processor->run_until_caught_up({}).ok());
  BOOST_REQUIRE(processor->reset_derived({.keep_statuses = true}).ok());
  auto again = processor->run_until_caught_up({});
  BOOST_REQUIRE_MESSAGE(again, again.error());
  sqlite::Connection lite = reference.connection();
  pg::Connection pg = must(store::connect({uri, ""}));
  test::compare_derived_tables(lite, pg);
}

// Two `serve`s on one store: within a few seconds each applies half of the shards, and
// every delivery is applied exactly once, by the owner of its user's shard.
BOOST_AUTO_TEST_CASE(two_serving_sessions_share_the_shards_and_apply_each_delivery_once) {
  const auto corpus = test::make_corpus(400, 5);
  Reference reference(corpus);
  SharingPair pair;
  // A command needs the store alone: refused while `serve`s share it.
  auto refused = pair.second->open_processing(store::Leadership::now);
  BOOST_REQUIRE(!refused);
  BOOST_TEST((refused.error_kind() == ErrorKind::in_use));

  auto first_inbox = must(pair.first->open_inbox());
  auto second_inbox = must(pair.second->open_inbox());
  append_all(*first_inbox, corpus, 0, 200);
  append_all(*second_inbox, corpus, 200);
  const int64_t newest = newest_seq(pair.uri);
  run_all_until(pair.both, [&] { return processed_seq(pair.uri) >= newest; });

  // processor_state follows the lowest shard (what a tool or an older version reads), within
  // a second once both are idle.
  run_all_until(pair.both, [&] {
    pg::Connection db = must(store::connect({pair.uri, ""}));
    return must(db.query_int("SELECT applied_seq FROM processor_state WHERE id = 1")).value_or(0) >= newest;
  });
  pg::Connection pg = must(store::connect({pair.uri, ""}));
  BOOST_TEST(must(pg.query_int("SELECT count(DISTINCT shard) FROM inbox")).value_or(0) > 1);
  expect_shared_and_equal(pair, reference, pg, corpus.size());
}

// Rows stored without a shard (before migration 008, by `healthhook migrate`, or by an
// instance of the previous version during a rolling upgrade) are applied once, by the
// owner of the shard their content gives; the stream of each session skips the others'.
BOOST_AUTO_TEST_CASE(rows_stored_without_a_shard_are_applied_once_by_their_users_shard) {
  const auto corpus = test::make_corpus(300, 9);
  Reference reference(corpus);
  SharingPair pair;
  append_all(*must(pair.first->open_inbox()), corpus);
  pg::Connection pg = must(store::connect({pair.uri, ""}));
  BOOST_REQUIRE(pg.exec("UPDATE inbox SET shard = NULL WHERE seq % 3 <> 0"));
  const int64_t newest = newest_seq(pair.uri);
  run_all_until(pair.both, [&] { return processed_seq(pair.uri) >= newest; });

  expect_shared_and_equal(pair, reference, pg, corpus.size());
}

// One of two sharing sessions goes (its connection ended by the server, as for a process
// killed with -9): the other takes its shards at its next rebalance, from the positions
// the gone one committed, and applies the rest.
BOOST_AUTO_TEST_CASE(the_shards_of_a_session_that_went_away_are_taken_by_the_other) {
  const auto corpus = test::make_corpus(300, 13);
  Reference reference(corpus);
  SharingPair pair;
  auto inbox = must(pair.first->open_inbox());
  append_all(*inbox, corpus, 0, 150);
  run_all_until(pair.both, [&] { return processed_seq(pair.uri) >= newest_seq(pair.uri); });
  const uint64_t applied_by_b = applied_by(*pair.b);
  BOOST_TEST(applied_by_b > 0u);

  // b's sessions end as a kill -9 would end them; b is not run again.
  pg::Connection pg = must(store::connect({pair.uri, ""}));
  // a kept the lowest shards and gave back the highest: b owns shard 15.
  auto ended = pg.query(
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted "
      "AND objid::bigint = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      pg::Params().add(store::kShardLockBase + 15));
  BOOST_REQUIRE_MESSAGE(ended, ended.error());
  BOOST_REQUIRE_EQUAL(ended->size(), 1);
  pair.b.reset();
  processor::Processor* survivor[] = {pair.a.get()};
  append_all(*inbox, corpus, 150);
  const int64_t newest = newest_seq(pair.uri);
  run_all_until(survivor, [&] { return processed_seq(pair.uri) >= newest; });
  BOOST_TEST(applied_by(*pair.a) + applied_by_b == corpus.size());
  sqlite::Connection lite = reference.connection();
  BOOST_TEST(compare_order_free_tables(lite, pg) > 300u);
  BOOST_TEST(outcomes_pg(pg) == outcomes_lite(lite), boost::test_tools::per_element());
}

// An instance of the version before shards applies the inbox alone (it holds the processing
// lock exclusively) and moves only processor_state. Once it stops, the serves that share
// the store start from there: nothing it applied is applied again.
BOOST_AUTO_TEST_CASE(serves_go_on_from_where_an_instance_of_the_previous_version_stopped) {
  const auto corpus = test::make_corpus(300, 17);
  Reference reference(corpus);
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  {
    // As the previous version: exclusive, and its position in processor_state only.
    auto store = must(store::open_store(uri, {}));
    append_all(*must(store->open_inbox()), corpus, 0, 150);
    auto old_version = processor_of(*store);
    BOOST_REQUIRE(old_version->run_until_caught_up({}).ok());
    BOOST_TEST(applied_by(*old_version) == 150u);
    pg::Connection pg = must(store::connect({uri, ""}));
    BOOST_REQUIRE(pg.exec("UPDATE processor_shards SET applied_seq = 0"));
  }
  SharingPair pair(uri);
  append_all(*must(pair.first->open_inbox()), corpus, 150);
  const int64_t newest = newest_seq(uri);
  run_all_until(pair.both, [&] { return processed_seq(uri) >= newest; });
  BOOST_TEST(applied_by(*pair.a) + applied_by(*pair.b) == 150u);  // the other 150, once
  pg::Connection pg = must(store::connect({uri, ""}));
  sqlite::Connection lite = reference.connection();
  BOOST_TEST(compare_order_free_tables(lite, pg) > 300u);
  BOOST_TEST(outcomes_pg(pg) == outcomes_lite(lite), boost::test_tools::per_element());
}

// Five `serve`s: every one gets shards (16 = 4 + 3 + 3 + 3 + 3), also the last to start,
// when the first four had already split them 4 + 4 + 4 + 4.
BOOST_AUTO_TEST_CASE(every_serving_session_gets_a_share_however_many_there_are) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  std::vector<std::unique_ptr<store::Store>> stores;
  std::vector<std::unique_ptr<processor::Processor>> processors;
  std::vector<processor::Processor*> running;
  const auto all_lead = [&] {
    return std::all_of(running.begin(), running.end(),
                       [](const processor::Processor* p) { return p->stats().leading.load() == 1; });
  };
  for (int i = 0; i < 5; ++i) {
    stores.push_back(must(store::open_store(uri, {})));
    processors.push_back(processor_of(*stores.back(), store::Leadership::when_free));
    running.push_back(processors.back().get());
    if (i == 3) run_all_until(running, all_lead);
  }
  run_all_until(running, all_lead);
  pg::Connection pg = must(store::connect({uri, ""}));
  BOOST_TEST(must(pg.query_int("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                               "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                               "AND objid::bigint BETWEEN " + std::to_string(store::kShardLockBase) + " AND " +
                               std::to_string(store::kShardLockBase + 15)))
                 .value_or(0) == 16);
}

// A session that holds the shared processing lock and then runs nothing (its process
// frozen or cut off before it got a shard) is not counted in the fair share: the live
// sessions keep applying every shard instead of keeping some free for it.
BOOST_AUTO_TEST_CASE(a_session_that_stopped_running_does_not_hold_shards_back) {
  SharingPair pair;
  pg::Connection frozen = must(store::connect({pair.uri, ""}));
  BOOST_REQUIRE(frozen.query("SELECT pg_advisory_lock_shared($1)", pg::Params().add(store::kProcessingLock)));
  pg::Connection pg = must(store::connect({pair.uri, ""}));
  const auto shards_held = [&] {
    return must(pg.query_int("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                             "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                             "AND objid::bigint BETWEEN " + std::to_string(store::kShardLockBase) + " AND " +
                             std::to_string(store::kShardLockBase + 15)))
        .value_or(0);
  };
  // Ten seconds of rebalances with the frozen session idle (counted for its first 5 s, while
  // it looks live, so some shards are given back for it meanwhile): then every shard is
  // owned again.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    for (processor::Processor* p : pair.both) p->run_once(INT64_MAX);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  BOOST_TEST(shards_held() == 16);
  BOOST_TEST(pair.a->stats().leading.load() == 1);
  BOOST_TEST(pair.b->stats().leading.load() == 1);
}

// The shard of a user is part of the stored data: it must not change between versions.
BOOST_AUTO_TEST_CASE(a_users_shard_is_stable_and_follows_the_rows_user) {
  using store::pgshard::shard_of_row;
  using store::pgshard::shard_of_user;
  BOOST_TEST(shard_of_user(std::nullopt) == 0);
  BOOST_TEST(shard_of_user("") == 0);
  BOOST_TEST(shard_of_user("a") == 12);     // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c
  BOOST_TEST(shard_of_user("foobar") == 8);  // 0x85944171f73967e8
  // The rows' user: data's first (the parser writes rows under it), the envelope's else.
  BOOST_TEST(shard_of_row("webhook", "{}", R"({"user_id":"a","data":{"user_id":"foobar"}})") == 8);
  BOOST_TEST(shard_of_row("webhook", "{}", R"({"user_id":"a","data":[]})") == 12);
  BOOST_TEST(shard_of_row("fetch", R"({"user_id":"foobar"})", "[]") == 8);
  BOOST_TEST(shard_of_row("webhook", "{}", "not json") == 0);
  // As the parser reads them: a number as its text, the last of duplicate keys, the first
  // "data" only, null clearing the envelope's.
  BOOST_TEST(shard_of_row("webhook", "{}", R"({"user_id":123,"data":{}})") == shard_of_user("123"));
  BOOST_TEST(shard_of_row("webhook", "{}", R"({"user_id":"foobar","user_id":"a","data":{}})") == 12);
  BOOST_TEST(shard_of_row("webhook", "{}", R"({"data":{"user_id":"a","user_id":"foobar"}})") == 8);
  BOOST_TEST(shard_of_row("webhook", "{}", R"({"user_id":"a","data":{},"data":{"user_id":"foobar"}})") == 12);
  BOOST_TEST(shard_of_row("webhook", "{}", R"({"user_id":"a","user_id":null,"data":{}})") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
