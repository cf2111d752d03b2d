// Processing on PostgreSQL as `serve`, `rebuild` and `replay` run it (store::open_store,
// processor::Processor): the same inbox processed on SQLite and on PostgreSQL leaves the
// same tables; one instance leads at a time and another takes over from where it stopped;
// a server restart costs one failed batch and the lead, nothing else.
#include <boost/test/unit_test.hpp>

#include <thread>

#include "processor/processor.h"
#include "store/open_store.h"
#include "store/postgres/database.h"
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
  BOOST_TEST((refused.error_kind() == ErrorKind::busy));
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

BOOST_AUTO_TEST_SUITE_END()
