// The PostgreSQL inbox when another instance stores the same message id first and commits
// while this instance's insert waits for it (spec §9: any instance may receive any
// delivery): the delivery is a duplicate with the other instance's seq, and the
// connection goes on working. pg_serve_test met this race at random (two `serve`
// instances answered 503); here it is set up step by step.
#include <boost/test/unit_test.hpp>

#include <thread>

#include "store/postgres/database.h"
#include "store/postgres/pg_inbox.h"
#include "tests/derived/corpus.h"
#include "tests/support/postgres_cluster.h"

BOOST_AUTO_TEST_SUITE(pg_inbox_race_test)

using namespace hh;
using namespace std::chrono_literals;

namespace {

// Until `waiting`'s backend waits for a row lock another transaction holds (asked on
// `asking`); false after 5 s.
bool waits_for_a_lock(pg::Connection& asking, pg::Connection& waiting) {
  const std::string waits = "SELECT count(*) FROM pg_stat_activity WHERE pid = " +
                            std::to_string(waiting.backend_pid()) + " AND wait_event_type = 'Lock'";
  for (int i = 0; i < 500; ++i) {
    auto n = asking.query_int(waits);
    if (n && n->value_or(0) == 1) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_duplicate_committed_while_the_insert_waits_gets_the_other_seq) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto first = store::connect_migrated({uri, ""});
  BOOST_REQUIRE_MESSAGE(first, first.error());
  auto second = store::connect_migrated({uri, ""});
  BOOST_REQUIRE_MESSAGE(second, second.error());
  auto inbox = store::open_postgres_inbox(*second, {});
  BOOST_REQUIRE_MESSAGE(inbox, inbox.error());

  // The other instance: the row inserted, not committed yet.
  BOOST_REQUIRE(first->exec("BEGIN"));
  auto other_seq = first->query_int(
      "INSERT INTO inbox (message_id, origin, received_at, headers, body) "
      "VALUES ('msg_race', 'webhook', 1, '{}', '\\x7b7d'::bytea) RETURNING seq");
  BOOST_REQUIRE_MESSAGE(other_seq, other_seq.error());

  const store::NewDelivery delivery = test::sleep_delivery("msg_race", "sleep-race", 70);
  Result<std::vector<store::Appended>> appended = fail(ErrorKind::other, "not run");
  std::thread waiting([&] {
    const store::NewDelivery* batch[] = {&delivery};
    appended = (*inbox)->append(batch);
  });
  // Until the append waits for the other transaction's row lock.
  const bool blocked = waits_for_a_lock(*first, *second);
  BOOST_TEST(blocked);
  BOOST_REQUIRE(first->exec("COMMIT"));
  waiting.join();

  BOOST_REQUIRE_MESSAGE(appended, appended.error());
  BOOST_REQUIRE_EQUAL(appended->size(), 1u);
  BOOST_TEST(((*appended)[0].status == store::AppendStatus::duplicate));
  BOOST_TEST((*appended)[0].seq == other_seq->value_or(-1));

  // The connection is usable afterwards: not left in pipeline mode or in a transaction.
  const store::NewDelivery next = test::sleep_delivery("msg_after", "sleep-after", 71);
  const store::NewDelivery* batch[] = {&next};
  auto after = (*inbox)->append(batch);
  BOOST_REQUIRE_MESSAGE(after, after.error());
  BOOST_TEST(((*after)[0].status == store::AppendStatus::stored));
  auto count = first->query_int("SELECT count(*) FROM inbox");
  BOOST_REQUIRE(count);
  BOOST_TEST(count->value_or(0) == 2);
}

// Black-box pass: two instances' batches with the same ids in opposite orders (a balancer
// sending a retry to the other instance while the first still stores it) deadlock on the
// unique index, and the server ends one of them: that batch was answered 503 whole. Set up
// step by step: the other instance holds "msg_y" and then wants "msg_x", which this batch
// took first. The other's deadlock_timeout is long, so the server ends this batch's
// transaction; it is stored again and finds both as the other's duplicates.
BOOST_AUTO_TEST_CASE(a_batch_ended_as_a_deadlock_is_stored_again) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto first = store::connect_migrated({uri, ""});
  BOOST_REQUIRE_MESSAGE(first, first.error());
  auto second = store::connect_migrated({uri, ""});
  BOOST_REQUIRE_MESSAGE(second, second.error());
  auto inbox = store::open_postgres_inbox(*second, {});
  BOOST_REQUIRE_MESSAGE(inbox, inbox.error());

  const std::string insert_other =
      "INSERT INTO inbox (message_id, origin, received_at, headers, body) "
      "VALUES ('msg_%', 'webhook', 1, '{}', '\\x7b7d'::bytea) RETURNING seq";
  const auto insert_of = [&](const char* id) {
    std::string sql = insert_other;
    sql.replace(sql.find('%'), 1, id);
    return first->query_int(sql);
  };
  BOOST_REQUIRE(first->exec("BEGIN"));
  BOOST_REQUIRE(first->exec("SET LOCAL deadlock_timeout = '30s'"));
  auto other_y = insert_of("y");
  BOOST_REQUIRE_MESSAGE(other_y, other_y.error());

  const store::NewDelivery x = test::sleep_delivery("msg_x", "sleep-x", 70);
  const store::NewDelivery y = test::sleep_delivery("msg_y", "sleep-y", 71);
  Result<std::vector<store::Appended>> appended = fail(ErrorKind::other, "not run");
  std::thread waiting([&] {
    const store::NewDelivery* batch[] = {&x, &y};
    appended = (*inbox)->append(batch);
  });
  const bool blocked = waits_for_a_lock(*first, *second);
  BOOST_REQUIRE(blocked);  // this batch holds msg_x and waits for msg_y
  // Waits for this batch's msg_x: a deadlock, which the server finds on this batch's side
  // first (its 1 s deadlock_timeout) and ends there; then this insert goes through.
  auto other_x = insert_of("x");
  BOOST_REQUIRE_MESSAGE(other_x, other_x.error());
  BOOST_REQUIRE(first->exec("COMMIT"));
  waiting.join();

  BOOST_REQUIRE_MESSAGE(appended, appended.error());
  BOOST_REQUIRE_EQUAL(appended->size(), 2u);
  BOOST_TEST(((*appended)[0].status == store::AppendStatus::duplicate));
  BOOST_TEST((*appended)[0].seq == other_x->value_or(-1));
  BOOST_TEST(((*appended)[1].status == store::AppendStatus::duplicate));
  BOOST_TEST((*appended)[1].seq == other_y->value_or(-1));
  auto count = first->query_int("SELECT count(*) FROM inbox");
  BOOST_REQUIRE(count);
  BOOST_TEST(count->value_or(0) == 2);
}

BOOST_AUTO_TEST_SUITE_END()  // pg_inbox_race_test
