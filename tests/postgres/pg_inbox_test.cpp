// The inbox on PostgreSQL (store/postgres/pg_inbox.h, inbox_horizon.h, pg_delivery_cursor.h)
// on a real server: group commits, the message-id check across instances, bodies kept
// byte for byte, and the horizon that keeps a reader from skipping a row committed late.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "store/postgres/database.h"
#include "store/postgres/inbox_horizon.h"
#include "store/postgres/pg_delivery_cursor.h"
#include "store/postgres/pg_inbox.h"
#include "store/postgres/pg_store.h"
#include "tests/support/postgres_cluster.h"

BOOST_AUTO_TEST_SUITE(pg_inbox_test)

using namespace hh;

namespace {

struct Instance {
  explicit Instance(const std::string& uri) : db(store::connect_migrated({uri, ""}).value()) {
    inbox = store::open_postgres_inbox(db, {}).value();
  }
  pg::Connection db;
  std::unique_ptr<store::Inbox> inbox;
};

store::NewDelivery delivery(std::string id, std::string body = "{\"event_type\":\"daily.data.sleep.created\"}") {
  store::NewDelivery d;
  d.message_id = std::move(id);
  d.received_at_ms = 1717200000000;
  d.webhook_timestamp = 1717200000;
  d.event_type = "daily.data.sleep.created";
  d.headers_json = R"({"webhook-id":"x"})";
  d.body = std::move(body);
  return d;
}

std::vector<store::Appended> append(store::Inbox& inbox, const std::vector<store::NewDelivery>& batch) {
  std::vector<const store::NewDelivery*> pointers;
  for (const auto& d : batch) pointers.push_back(&d);
  auto appended = inbox.append(pointers);
  BOOST_REQUIRE_MESSAGE(appended, appended.error());
  return *appended;
}

// (seq, body) of every row a cursor reads after `after`, up to `last`.
std::vector<std::pair<int64_t, std::string>> read_all(store::DeliveryCursor& cursor, int64_t after, int64_t last,
                                                      int64_t limit = 1000000) {
  std::vector<std::pair<int64_t, std::string>> rows;
  cursor.start(after, last, limit);
  store::PendingDelivery pending;
  for (;;) {
    auto next = cursor.next(pending);
    BOOST_REQUIRE_MESSAGE(next, next.error());
    if (!*next) break;
    rows.emplace_back(pending.row.seq, std::string(pending.row.body));
  }
  cursor.finish();
  return rows;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_batch_is_stored_in_order_and_repeated_ids_are_duplicates) {
  Instance one(test::PostgresCluster::shared().fresh_database());
  const std::string binary("{\"a\":\"\0\xff\xfe\"}", 12);
  auto first = append(*one.inbox, {delivery("m1"), delivery("m2", binary), delivery("m1")});
  BOOST_REQUIRE(first.size() == 3u);
  BOOST_TEST((first[0].status == store::AppendStatus::stored));
  BOOST_TEST((first[1].status == store::AppendStatus::stored));
  BOOST_TEST(first[1].seq > first[0].seq);
  BOOST_TEST((first[2].status == store::AppendStatus::duplicate));
  BOOST_TEST(first[2].seq == first[0].seq);
  auto again = append(*one.inbox, {delivery("m2"), delivery("m3")});
  BOOST_TEST((again[0].status == store::AppendStatus::duplicate));
  BOOST_TEST(again[0].seq == first[1].seq);
  BOOST_TEST((again[1].status == store::AppendStatus::stored));

  store::PgDeliveryCursor cursor(one.db);
  auto rows = read_all(cursor, 0, again[1].seq);
  BOOST_REQUIRE(rows.size() == 3u);
  BOOST_TEST(rows[1].second == binary);  // NUL and 0xff kept
  BOOST_TEST(one.db.query_int("SELECT count(*) FROM inbox")->value_or(0) == 3);
}

BOOST_AUTO_TEST_CASE(a_failure_inside_the_transaction_stores_nothing) {
  Instance one(test::PostgresCluster::shared().fresh_database());
  auto d = delivery("m1");
  std::vector<const store::NewDelivery*> batch{&d};
  auto appended = one.inbox->append_with(batch, [](std::span<const store::Appended>) -> Result<void> {
    return fail(ErrorKind::other, "the job moved on");
  });
  BOOST_TEST(!appended);
  BOOST_TEST(appended.error() == "the job moved on");
  BOOST_TEST(one.db.query_int("SELECT count(*) FROM inbox")->value_or(-1) == 0);
  auto later = append(*one.inbox, {delivery("m1")});  // the connection is usable again
  BOOST_TEST((later[0].status == store::AppendStatus::stored));
}

BOOST_AUTO_TEST_CASE(instances_receiving_the_same_messages_at_once_store_each_once) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  constexpr int kBatches = 40, kPerBatch = 10;
  std::vector<std::vector<store::Appended>> results(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> instances;
  for (int i = 0; i < 2; ++i) {
    instances.emplace_back([&, i] {
      try {
        Instance instance(uri);
        for (int b = 0; b < kBatches; ++b) {
          std::vector<store::NewDelivery> batch;
          for (int k = 0; k < kPerBatch; ++k) batch.push_back(delivery("m" + std::to_string(b * kPerBatch + k)));
          std::vector<const store::NewDelivery*> pointers;
          for (const auto& d : batch) pointers.push_back(&d);
          auto appended = instance.inbox->append(pointers);
          if (!appended) {
            errors[i] = appended.error();
            return;
          }
          results[i].insert(results[i].end(), appended->begin(), appended->end());
        }
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : instances) t.join();
  for (const auto& e : errors) BOOST_TEST(e.empty(), e);
  BOOST_REQUIRE(results[0].size() == results[1].size());
  int stored = 0;
  for (size_t k = 0; k < results[0].size(); ++k) {
    const auto& a = results[0][k];
    const auto& b = results[1][k];
    stored += (a.status == store::AppendStatus::stored) + (b.status == store::AppendStatus::stored);
    BOOST_TEST(((a.status == store::AppendStatus::stored) != (b.status == store::AppendStatus::stored)));
    BOOST_TEST(a.seq == b.seq);  // the duplicate names the stored row
  }
  BOOST_TEST(stored == kBatches * kPerBatch);
  Instance check(uri);
  BOOST_TEST(check.db.query_int("SELECT count(*) FROM inbox")->value_or(0) == kBatches * kPerBatch);
}

BOOST_AUTO_TEST_CASE(the_horizon_waits_for_a_transaction_held_open_and_no_row_is_skipped) {
  Instance one(test::PostgresCluster::shared().fresh_database());
  append(*one.inbox, {delivery("before")});
  store::InboxHorizon horizon(one.db);
  auto h0 = horizon.advance();
  BOOST_REQUIRE_MESSAGE(h0, h0.error());
  BOOST_TEST(*h0 == 1);

  // Another instance's ingest: its row draws seq 2 and stays uncommitted.
  Instance slow(test::PostgresCluster::shared().uri(PQdb(one.db.get())));
  BOOST_REQUIRE(slow.db.exec("BEGIN"));
  BOOST_REQUIRE(slow.db.exec("INSERT INTO inbox (message_id, received_at, headers, body) "
                             "VALUES ('late', 1, '{}', 'x')"));
  // A third instance commits seq 3 meanwhile.
  auto later = append(*one.inbox, {delivery("after")});
  BOOST_TEST(later[0].seq == 3);

  store::PgDeliveryCursor cursor(one.db);
  for (int probe = 0; probe < 3; ++probe) {
    auto h = horizon.advance();
    BOOST_REQUIRE_MESSAGE(h, h.error());
    BOOST_TEST(*h == 1, "the horizon passed seq 2 while its transaction was open");
  }
  BOOST_TEST(read_all(cursor, 1, horizon.horizon()).empty());

  BOOST_REQUIRE(slow.db.exec("COMMIT"));
  int64_t reached = 0;
  for (int probe = 0; probe < 3 && reached < 3; ++probe) reached = horizon.advance().value();
  BOOST_TEST(reached == 3);
  auto rows = read_all(cursor, 1, reached);
  BOOST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(rows[0].first == 2);
  BOOST_TEST(rows[0].second == "x");
  BOOST_TEST(rows[1].first == 3);
}

// A writer frozen inside its ingest transaction (SIGSTOP, a paused VM) has drawn a seq that
// every instance's processing must wait for (the horizon). The server ends an ingest
// transaction idle for 15 s (pg_inbox.cpp): the horizon moves on, and the frozen writer's
// batch fails (its clients got no 2xx and send again). Other transactions on the same
// connection keep the server's default (a `rebuild` step may wait on a large body).
BOOST_AUTO_TEST_CASE(a_writer_frozen_inside_its_transaction_holds_the_horizon_back_15_s_at_most) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto store = store::PgStore::open({uri, ""}, store::StoreOptions{});
  BOOST_REQUIRE_MESSAGE(store, store.error());
  auto inbox = (*store)->open_inbox();
  BOOST_REQUIRE_MESSAGE(inbox, inbox.error());
  Instance other(uri);
  std::promise<void> entered_promise;
  std::future<void> entered = entered_promise.get_future();
  std::atomic<bool> release{false};
  Result<std::vector<store::Appended>> frozen_result = fail("not run");
  const store::NewDelivery held = delivery("held");
  std::thread frozen([&] {  // no assertions on this thread
    const std::vector<const store::NewDelivery*> batch{&held};
    frozen_result = (*inbox)->append_with(batch, [&](std::span<const store::Appended>) {
      entered_promise.set_value();
      for (int i = 0; i < 900 && !release; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return Result<void>{};
    });
  });
  // (No assertion may end the case while the thread runs: checks after the join.)
  const bool inside = entered.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  bool later_stored = false, passed = false;
  if (inside) {
    const store::NewDelivery after = delivery("after");
    const std::vector<const store::NewDelivery*> batch{&after};
    auto stored = other.inbox->append(batch);
    later_stored = stored && stored->at(0).seq == 2;
    store::InboxHorizon horizon(other.db);
    for (int probe = 0; probe < 600 && !passed; ++probe) {  // a minute at most
      auto h = horizon.advance();
      passed = h && *h >= 2;
      if (!passed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  release = true;
  frozen.join();
  BOOST_TEST(inside);
  BOOST_TEST(later_stored);
  BOOST_TEST(passed, "the horizon waited a minute for the frozen writer's transaction");
  BOOST_TEST(!frozen_result.ok());
  BOOST_TEST(other.db.query_int("SELECT count(*) FROM inbox WHERE message_id = 'held'")->value_or(-1) == 0);
  // The write connection's other transactions are not limited.
  auto& db = (*store)->write_connection();
  BOOST_REQUIRE(db.reconnect_if_broken());
  BOOST_REQUIRE(db.exec("BEGIN"));
  BOOST_TEST(db.query("SHOW idle_in_transaction_session_timeout")->text(0, 0) == "0");
  BOOST_REQUIRE(db.exec("ROLLBACK"));
}

BOOST_AUTO_TEST_CASE(a_rolled_back_insert_leaves_a_gap_that_the_horizon_passes) {
  Instance one(test::PostgresCluster::shared().fresh_database());
  Instance other(test::PostgresCluster::shared().uri(PQdb(one.db.get())));
  BOOST_REQUIRE(other.db.exec("BEGIN"));
  BOOST_REQUIRE(other.db.exec("INSERT INTO inbox (message_id, received_at, headers, body) VALUES ('x', 1, '{}', '')"));
  append(*one.inbox, {delivery("kept")});
  store::InboxHorizon horizon(one.db);
  BOOST_TEST(horizon.advance().value() == 0);
  BOOST_REQUIRE(other.db.exec("ROLLBACK"));
  BOOST_TEST(horizon.advance().value() == 2);
}

BOOST_AUTO_TEST_CASE(a_cursor_reads_across_chunks_up_to_its_limit) {
  Instance one(test::PostgresCluster::shared().fresh_database());
  std::vector<store::NewDelivery> batch;
  for (int i = 0; i < 150; ++i) batch.push_back(delivery("m" + std::to_string(i), "body " + std::to_string(i)));
  append(*one.inbox, batch);
  store::PgDeliveryCursor cursor(one.db);
  auto all = read_all(cursor, 0, 1000);
  BOOST_REQUIRE(all.size() == 150u);
  BOOST_TEST(all[149].second == "body 149");
  auto some = read_all(cursor, 10, 1000, 100);
  BOOST_REQUIRE(some.size() == 100u);
  BOOST_TEST(some.front().first == 11);
  BOOST_TEST(some.back().first == 110);
  BOOST_TEST(read_all(cursor, 140, 145).size() == 5u);
  auto reader = store::open_postgres_delivery_reader({test::PostgresCluster::shared().uri(PQdb(one.db.get())), ""});
  BOOST_REQUIRE_MESSAGE(reader, reader.error());
  BOOST_TEST(read_all(**reader, 0, 150).size() == 150u);
}

BOOST_AUTO_TEST_SUITE_END()
