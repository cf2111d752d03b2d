// Body retention and `purge-user` on PostgreSQL (store/postgres/pg_body_retention.h,
// pg_erasure.h) against SQLite's on the same rows: the same bodies go in the same batches
// with the same hashes; the same rows of every table are counted, erased and recorded for
// a user; and what only a shared store needs: a purge is refused while an instance applies
// the inbox, and every table with a user column is covered.
#include <boost/test/unit_test.hpp>

#include "common/sha256.h"
#include "store/erasure_plan.h"
#include "store/open_readers.h"
#include "store/read_store.h"
#include "store/schema/tables.h"
#include "store/postgres/pg_body_retention.h"
#include "store/postgres/database.h"
#include "store/postgres/migrations.h"
#include "store/postgres/pg_erasure.h"
#include "store/sqlite/sqlite_body_retention.h"
#include "store/sqlite/sqlite_erasure.h"
#include "processor/processor.h"
#include "store/open_store.h"
#include "tests/derived/store_dump.h"
#include "tests/derived/two_users.h"
#include "tests/postgres/derived_dump.h"
#include "tests/postgres/twin_stores.h"

BOOST_AUTO_TEST_SUITE(pg_retention_erasure_test)

using namespace hh;
using test::twin_must;

namespace {

std::string pgre_describe(const store::RemovedBodies& removed) {
  return std::to_string(removed.deliveries) + "/" + std::to_string(removed.bytes) + "/" +
         (removed.more ? "more" : "done");
}

std::string pgre_describe(const store::RemovedSoFar& so_far) {
  std::string out = std::to_string(so_far.deliveries) + ":";
  for (const auto& range : so_far.ranges) out += " " + std::to_string(range.first) + "-" + std::to_string(range.last);
  return out;
}

std::string pgre_describe(const store::ChangesWithoutBody& found) {
  std::string out = std::to_string(found.deliveries) + "/" + std::to_string(found.changes) + "/" +
                    std::to_string(found.rows) + ":";
  for (const auto& range : found.ranges) out += " " + std::to_string(range.first) + "-" + std::to_string(range.last);
  return out;
}

std::string pgre_describe(const store::ErasureReport& report) {
  std::string out;
  for (const auto& t : report.tables) out += t.table + "=" + std::to_string(t.rows) + " ";
  return out;
}

std::string pgre_describe_unattributed(const store::ErasureReport& report) {
  std::string out;
  for (const auto& t : report.unattributed) out += t.table + "=" + std::to_string(t.rows) + " ";
  return out;
}

// Rows of user A that pgre_fill writes (every table erase() covers).
constexpr int64_t kPgreRowsOfA = 33;

// Two users' rows in every table erase() covers, with their user columns as the processor
// writes them, and some of nobody's (SQL valid on both). Per user: applied deliveries
// (outcomes naming the user; one whose body retention removed; an invalid one naming
// nobody), one not applied yet whose body names the user with a JSON escape (found by
// reading it), and a summary whose user nothing names (written before the user columns).
void pgre_fill(test::TwinStores& t) {
  int64_t seq = 0;
  int64_t pending = 100;
  for (const std::string user : {"user-a", "user-b"}) {
    const std::string v = "'" + user + "'";
    const std::string n = user == "user-a" ? "1" : "2";
    ++seq;
    const std::string s = std::to_string(seq);
    t.inbox(seq, "w1-" + user, "webhook", seq, "daily.data.sleep.created", "{}",
            R"({"event_type":"daily.data.sleep.created","user_id":")" + user + R"(","data":{"id":"s-)" + user +
                R"("}})");
    ++seq;
    t.inbox(seq, "w2-" + user, "webhook", seq, "labtest.result.critical.created", "{}",
            R"({"event_type":"labtest.result.critical.created","data":{"user_id":")" + user + R"("}})");
    ++seq;
    const std::string fetched = std::to_string(seq);
    t.inbox(seq, "f1-" + user, "fetch", seq, "fetch.workout_stream", R"({"user_id":")" + user + R"("})",
            R"({"time":[1,2]})");
    ++seq;
    t.inbox(seq, "w3-" + user, "webhook", seq, "daily.data.body.created", "{}", "");  // body removed
    t.exec("INSERT INTO removed_bodies (seq, body_sha256, body_bytes, removed_at_ms, user_id) VALUES (" +
           std::to_string(seq) + ", 'ab', 10, 5, " + v + ")");
    ++seq;
    t.inbox(seq, "w4-" + user, "webhook", seq, "daily.data.body.created", "{}", "not json " + user);
    t.exec("INSERT INTO delivery_outcomes (seq, status, family, user_id) VALUES (" + s + ", 'processed', 'summary', " +
           v + "), (" + std::to_string(seq - 3) + ", 'processed', 'lab_result', " + v + "), (" + fetched +
           ", 'processed', 'fetched_stream', " + v + "), (" + std::to_string(seq - 1) + ", 'processed', 'summary', " +
           v + "), (" + std::to_string(seq) + ", 'invalid', NULL, NULL)");
    // Not applied yet: the id spelt with a JSON escape, found all the same.
    ++pending;
    t.inbox(pending, "p1-" + user, "webhook", pending, "daily.data.body.created", "{}",
            R"({"user_id":"user-)" + user.substr(5) + R"("})");
    t.exec("INSERT INTO series (series_id, user_id, resource, provider, source_type) VALUES (" + n + ", " + v +
           ", 'heartrate', 'oura', 'ring')");
    t.exec("INSERT INTO samples (series_id, t_ms, seq) VALUES (" + n + ", 1, " + s + "), (" + n + ", 2, " + s + ")");
    t.exec("INSERT INTO summaries (resource, id, user_id, source_type, seq, data) VALUES ('sleep', 's-" + user +
           "', " + v + ", 'ring', " + s + ", '{}'), ('sleep', 'orphan-" + user + "', NULL, 'ring', " + s + ", '{}')");
    // Fetched before any notice: the fetch's user names it.
    t.exec("INSERT INTO workout_streams (workout_id, user_id, fetched_seq, seq) VALUES ('wo-" + user + "', " + v +
           ", " + fetched + ", " + fetched + ")");
    t.exec("INSERT INTO stream_points (workout_id, idx) VALUES ('wo-" + user + "', 0), ('wo-" + user + "', 1)");
    t.exec("INSERT INTO connections (user_id, provider, status, event_type, seq, data) VALUES (" + v +
           ", 'garmin', 'connected', 'provider.connection.created', " + s + ", '{}')");
    t.exec("INSERT INTO devices (id, user_id, seq, data) VALUES ('d-" + user + "', " + v + ", " + s + ", '{}')");
    t.exec("INSERT INTO lab_orders (id, user_id, seq, data) VALUES ('o-" + user + "', " + v + ", " + s + ", '{}')");
    t.exec("INSERT INTO lab_appointments (id, user_id, seq, data) VALUES ('a-" + user + "', " + v + ", " + s +
           ", '{}')");
    t.exec("INSERT INTO lab_results (order_id, user_id, seq, data) VALUES ('o-" + user + "', " + v + ", " + s +
           ", '{}')");
    t.exec("INSERT INTO lab_parsing_jobs (id, user_id, seq, data) VALUES ('p-" + user + "', " + v + ", " + s +
           ", '{}')");
    t.exec("INSERT INTO backfills (user_id, resource, provider, start_ms, end_ms, seq) VALUES (" + v +
           ", 'sleep', 'oura', 0, 86400000, " + s + ")");
    t.exec("INSERT INTO users (user_id, first_seen_ms, last_seen_ms, seq) VALUES (" + v + ", 1, 1, " + s + ")");
    t.exec("INSERT INTO jobs (kind, job_key, state, next_attempt_at, trigger_seq, payload, created_at, updated_at, "
           "user_id) VALUES ('workout_stream', 'wo-" + user + "', 'done', 0, 0, '{\"user_id\":\"" + user +
           "\"}', 0, 0, " + v + "), ('backfill', '" + user + "/sleep/oura/0/1', 'queued', 0, 0, 'not json', 0, 0, " +
           v + ")");
    t.exec("INSERT INTO changes (seq, table_name, row_key, op, user_id) VALUES (" + s + ", 'summaries', 'sleep/s-" +
           user + "', 'insert', " + v + "), (999, 'devices', 'd-" + user + "', 'update', " + v +
           "), (999, 'users', " + v + ", 'insert', " + v + "), (999, 'backfills', '" + user +
           "/sleep/oura/0/86400000', 'insert', " + v + ")");
    // A forward of a delivery written before the outbox knew its user: found by its seq.
    t.exec("INSERT INTO outbox (destination, kind, seq, table_name, row_key, op, user_id, created_at, "
           "next_attempt_at) VALUES ('b', 'delivery', " + s + ", 'deliveries', 'w1-" + user +
           "', 'insert', NULL, 0, 0), "
           "('b', 'change', 999, 'users', " + v + ", 'insert', " + v + ", 0, 0)");
  }
  t.exec("UPDATE processor_state SET applied_seq = 99");
  t.exec("INSERT INTO providers (slug, seq, data) VALUES ('oura', 1, '{}')");
  t.exec("INSERT INTO changes (seq, table_name, row_key, op) VALUES (1, 'providers', 'oura', 'insert')");
}

// Users A and B (tests/derived/two_users.h) stored and applied on both, as `serve` does,
// with a [[forward]] of their deliveries not sent yet.
void pgre_two_users_on_both(test::TwinStores& t) {
  int64_t clock = test::kTwoUsersBaseMs;
  const auto corpus = test::two_users_corpus(clock);
  const std::vector<store::ForwardRule> rules = {
      {.destination = "raw", .mode = store::ForwardMode::deliveries, .events = {}}};
  test::append_deliveries(t.lite, corpus);
  test::apply_inbox(t.lite);
  {
    // Forwards not sent yet, as the sender makes them (PostgreSQL's writer: below).
    test::make_outbox_entries(t.lite, rules.front(), 1, INT64_MAX);
  }
  store::StoreOptions options;
  options.forward_rules = rules;
  auto store = twin_must(store::open_store({t.pg_uri, ""}, options));
  auto inbox = twin_must(store->open_inbox());
  std::vector<const store::NewDelivery*> batch;
  for (const auto& d : corpus) batch.push_back(&d);
  twin_must(inbox->append(batch));
  auto processor = twin_must(processor::Processor::create(twin_must(store->open_processing(store::Leadership::now)),
                                                          processor::kCatchUpSteps));
  twin_must(processor->run_until_caught_up({}));
}

// Retention of every body on both stores, in the same rounds: each round removes the same
// bodies on both (compared round by round).
void pgre_remove_every_body(test::TwinStores& t) {
  auto lite_retention = twin_must(store::open_sqlite_body_retention(t.lite));
  auto pg_retention = twin_must(store::open_postgres_body_retention(t.pg));
  for (int round = 0; round < 100; ++round) {
    const auto lite_removed = twin_must(lite_retention->remove_bodies(INT64_MAX, 256, 1));
    const auto pg_removed = twin_must(pg_retention->remove_bodies(INT64_MAX, 256, 1));
    BOOST_REQUIRE_EQUAL(pgre_describe(lite_removed), pgre_describe(pg_removed));
    if (!pg_removed.more) break;
  }
}

// The PostgreSQL store as healthhook left it before migration 003 (as test::strip_user_columns
// does to SQLite's).
void pgre_strip_user_columns(pg::Connection& pg) {
  for (const char* sql : {"DROP VIEW unattributed_rows", "DROP INDEX lab_parsing_jobs_user",
                          "DROP INDEX workout_streams_user", "DROP INDEX jobs_user", "DROP VIEW change_owners"}) {
    BOOST_REQUIRE_MESSAGE(pg.exec(sql), sql);
  }
  const std::string_view v1 = store::postgres_migrations().at(0).sql;
  BOOST_REQUIRE(pg.exec(std::string(v1.substr(v1.find("CREATE VIEW change_owners")))));
  for (const char* table : {"delivery_outcomes", "removed_bodies", "lab_parsing_jobs", "changes", "jobs"}) {
    BOOST_REQUIRE_MESSAGE(pg.exec("ALTER TABLE " + std::string(table) + " DROP COLUMN user_id"), table);
  }
  BOOST_REQUIRE(pg.exec("UPDATE workout_streams SET user_id = NULL WHERE notice_seq IS NULL"));
  // Migrations 004 (the outbox's pinned POSTs), 005 (the service's calls), 006 (paused
  // destinations), 009 and 010 (indexes), 011 (the retention walk), 012 (the outbox's contents), 013 (hh_is_utf8),
  // 014 (the rebuild marker) came after 003: taken away too, so that opening the store runs them all
  // again, in order, as an upgrade from version 2 does.
  for (const char* sql : {"ALTER TABLE processor_state DROP COLUMN rebuild_through", "DROP FUNCTION hh_is_utf8(bytea)", "ALTER TABLE outbox DROP COLUMN content", "ALTER TABLE outbox DROP COLUMN content_bytes", "DROP TABLE retention_walk", "DROP TABLE forward_pauses", "ALTER TABLE connections DROP COLUMN deregistered_at", "ALTER TABLE summaries DROP COLUMN app_id",
                          "ALTER TABLE series DROP COLUMN app_id", "DROP TRIGGER outbox_head_deleted ON outbox", "DROP TRIGGER outbox_head_left ON outbox",
                          "DROP FUNCTION hh_outbox_next_head()", "DROP INDEX outbox_keys", "DROP INDEX outbox_due_heads",
                          "DROP INDEX outbox_unclassified", "DROP INDEX outbox_posts", "DROP INDEX outbox_oldest", "DROP INDEX jobs_state", "DROP TABLE outbox_dropped",
                          "ALTER TABLE outbox DROP COLUMN head", "ALTER TABLE outbox RENAME COLUMN post_id TO batch_id",
                          "CREATE INDEX outbox_destination ON outbox (destination, state, outbox_id)"}) {
    BOOST_REQUIRE_MESSAGE(pg.exec(sql), sql);
  }
  // 008 (processing shards) too.
  for (const char* sql : {"DROP FUNCTION hh_processed_seq()", "DROP TABLE processor_shards",
                          "ALTER TABLE inbox DROP COLUMN shard"}) {
    BOOST_REQUIRE_MESSAGE(pg.exec(sql), sql);
  }
  BOOST_REQUIRE(pg.exec("DELETE FROM schema_migrations WHERE version >= 3"));
}

// `sql`'s rows on both, compared in a sorted order (the servers' text collations differ).
void pgre_same_sorted(test::TwinStores& t, const std::string& sql, int columns) {
  auto [lite_rows, pg_rows] = t.rows(sql, columns);
  std::sort(lite_rows.begin(), lite_rows.end());
  std::sort(pg_rows.begin(), pg_rows.end());
  BOOST_TEST(lite_rows == pg_rows, boost::test_tools::per_element());
}

// Every covered table's rows, counted on both.
void pgre_same_tables(test::TwinStores& t) {
  for (const auto* erased : store::schema::erased_tables()) {
    t.same_rows("SELECT count(*) FROM " + std::string(erased->name), 1);
  }
  t.same_rows("SELECT seq, message_id FROM inbox ORDER BY seq", 2);
  t.same_rows("SELECT count(*) FROM providers", 1);
}

// The seqs a search by `users` lists (the console's GET /v1/deliveries?user_id=: every row
// of the inbox newest first, those the store says are theirs kept).
std::vector<int64_t> pgre_search(const store::Database& database, const std::vector<std::string>& users) {
  auto reader = twin_must(store::open_read_store(database));
  store::ReadSnapshot read(*reader);
  twin_must(read.begun());
  store::DeliveryFilter filter;
  filter.webhooks_only = false;
  filter.user_ids = users;
  store::DeliveryQuery& deliveries = reader->deliveries();
  twin_must(deliveries.start_newest_first(filter, std::nullopt));
  std::vector<int64_t> seqs;
  store::StoredDelivery row;
  while (twin_must(deliveries.next(row))) {
    if (row.of_searched_users) seqs.push_back(row.seq);
  }
  deliveries.finish();
  return seqs;
}

}  // namespace

BOOST_AUTO_TEST_CASE(bodies_go_in_the_same_batches_with_the_same_hashes) {
  test::TwinStores t;
  const std::string big(9 * 1024 * 1024, 'x');  // two of these fill a batch (16 MB)
  t.inbox(1, "m1", "webhook", 100, "a.b", R"({"h":1})", R"({"a":1})");
  t.inbox(2, "m2", "webhook", 200, "a.b", "{}", std::string_view("\x00\xff", 2));
  t.inbox(3, "m3", "fetch", 300, "a.b", "{}", big);
  t.inbox(4, "m4", "webhook", 400, "a.b", "{}", big);
  t.inbox(5, "m5", "webhook", 500, "a.b", "{}", "{}");
  t.inbox(6, "m6", "webhook", 600, "a.b", "{}", "{}");  // too new
  t.inbox(7, "m7", "webhook", 50, "a.b", "{}", "{}");   // pending (not applied): kept whatever its age
  t.exec("UPDATE processor_state SET applied_seq = 6");
  auto lite = twin_must(store::open_sqlite_body_retention(t.lite));
  auto pg = twin_must(store::open_postgres_body_retention(t.pg));
  BOOST_TEST(pgre_describe(twin_must(lite->removed_so_far(10))) == pgre_describe(twin_must(pg->removed_so_far(10))));
  for (int64_t max : {2, 5, 5, 5}) {
    const auto lite_removed = twin_must(lite->remove_bodies(600, max, 7000 + max));
    const auto pg_removed = twin_must(pg->remove_bodies(600, max, 7000 + max));
    BOOST_TEST(pgre_describe(lite_removed) == pgre_describe(pg_removed));
  }
  t.same_rows("SELECT seq, body_sha256, body_bytes, removed_at_ms FROM removed_bodies ORDER BY seq", 4);
  t.same_rows("SELECT seq, headers, length(body) FROM inbox ORDER BY seq", 3);
  const auto rows = t.same_rows("SELECT body_sha256 FROM removed_bodies WHERE seq = 2", 1);
  BOOST_TEST(rows.at(0) == sha256_hex(std::string_view("\x00\xff", 2)));
  BOOST_TEST(twin_must(t.pg.query_int("SELECT count(*) FROM removed_bodies")).value_or(0) == 5);
  BOOST_TEST(pgre_describe(twin_must(lite->removed_so_far(10))) == pgre_describe(twin_must(pg->removed_so_far(10))));
  BOOST_TEST(!twin_must(pg->give_space_back(1 << 20)));
}

// What `rebuild` would drop (it refuses unless --drop-expired): the changes still in the feed
// of deliveries whose body is gone, counted alike on both; a delivery without a change (an
// invalid one, an erasure's placeholder) is not among them.
BOOST_AUTO_TEST_CASE(the_changes_of_deliveries_without_a_body_are_counted_alike) {
  test::TwinStores t;
  for (int64_t seq = 1; seq <= 6; ++seq) {
    t.inbox(seq, "m" + std::to_string(seq), "webhook", 100 * seq, "a.b", "{}", R"({"a":1})");
  }
  t.exec("UPDATE processor_state SET applied_seq = 6");
  t.exec("INSERT INTO changes (seq, table_name, row_key, op) VALUES (1, 'summaries', 'sleep/1', 'insert')");
  t.exec("INSERT INTO changes (seq, table_name, row_key, op, row_count) VALUES (1, 'samples', 'u/steps', 'insert', 40)");
  t.exec("INSERT INTO changes (seq, table_name, row_key, op) VALUES (2, 'summaries', 'sleep/2', 'insert')");
  t.exec("INSERT INTO changes (seq, table_name, row_key, op) VALUES (4, 'summaries', 'sleep/4', 'insert')");
  t.exec("INSERT INTO changes (seq, table_name, row_key, op) VALUES (6, 'summaries', 'sleep/6', 'insert')");
  auto lite = twin_must(store::open_sqlite_body_retention(t.lite));
  auto pg = twin_must(store::open_postgres_body_retention(t.pg));
  BOOST_TEST(pgre_describe(twin_must(lite->changes_without_body(10))) == "0/0/0:");
  BOOST_TEST(pgre_describe(twin_must(pg->changes_without_body(10))) == "0/0/0:");
  // Bodies 1 to 5 go; 3 and 5 wrote no change.
  twin_must(lite->remove_bodies(550, 100, 7000));
  twin_must(pg->remove_bodies(550, 100, 7000));
  BOOST_TEST(pgre_describe(twin_must(lite->changes_without_body(10))) == "3/4/43: 1-2 4-4");
  BOOST_TEST(pgre_describe(twin_must(pg->changes_without_body(10))) == "3/4/43: 1-2 4-4");
  BOOST_TEST(pgre_describe(twin_must(pg->changes_without_body(1))) == "3/4/43: 1-2");
}

// Old deliveries stored after newer ones (an old capture replayed into a database in use):
// the walk stops at the first new one; the late sweep removes the old ones behind it, in
// steps cut alike on both backends (three rows a step here, in (received_at, seq) order:
// seq 9 and 10 share a millisecond and fall in two steps), and keeps a pending one.
BOOST_AUTO_TEST_CASE(old_bodies_behind_newer_ones_go_in_the_same_late_steps) {
  test::TwinStores t;
  t.inbox(1, "m1", "webhook", 100, "a.b", "{}", R"({"n":1})");   // old: the walk takes it
  t.inbox(2, "m2", "webhook", 900, "a.b", "{}", R"({"n":2})");   // new: the walk stops here
  for (int64_t seq = 3; seq <= 8; ++seq) {
    t.inbox(seq, "m" + std::to_string(seq), "webhook", 200 + seq, "a.b", "{}", R"({"late":1})");
  }
  t.inbox(9, "m9", "webhook", 300, "a.b", "{}", R"({"late":2})");
  t.inbox(10, "m10", "webhook", 300, "a.b", "{}", R"({"late":3})");
  t.inbox(11, "m11", "webhook", 950, "a.b", "{}", "{}");          // new
  t.inbox(12, "m12", "webhook", 150, "a.b", "{}", R"({"p":1})");  // old but pending
  t.exec("UPDATE processor_state SET applied_seq = 11");
  auto lite = twin_must(store::open_sqlite_body_retention(t.lite));
  auto pg = twin_must(store::open_postgres_body_retention(t.pg));
  BOOST_TEST(pgre_describe(twin_must(lite->remove_bodies(600, 10, 1))) == "1/7/done");
  BOOST_TEST(pgre_describe(twin_must(pg->remove_bodies(600, 10, 1))) == "1/7/done");
  std::vector<std::string> lite_steps, pg_steps;
  for (store::LateCursor lite_from, pg_from;;) {
    const auto lite_step = twin_must(lite->remove_late_bodies(600, lite_from, 3, 2));
    const auto pg_step = twin_must(pg->remove_late_bodies(600, pg_from, 3, 2));
    const auto next = [](const store::LateSweep& step) {
      return " next " + std::to_string(step.next.received_at_ms) + "/" + std::to_string(step.next.seq);
    };
    lite_steps.push_back(pgre_describe(lite_step.removed) + next(lite_step));
    pg_steps.push_back(pgre_describe(pg_step.removed) + next(pg_step));
    BOOST_REQUIRE(lite_steps.size() < 20u);
    if (lite_step.done || pg_step.done) {
      BOOST_TEST(lite_step.done == pg_step.done);
      break;
    }
    lite_from = lite_step.next;
    pg_from = pg_step.next;
  }
  BOOST_TEST(lite_steps == pg_steps, boost::test_tools::per_element());
  t.same_rows("SELECT seq, body_sha256, body_bytes, removed_at_ms FROM removed_bodies ORDER BY seq", 4);
  const auto removed = t.same_rows("SELECT seq FROM removed_bodies ORDER BY seq", 1);
  BOOST_TEST(removed == (std::vector<std::string>{"1", "3", "4", "5", "6", "7", "8", "9", "10"}),
             boost::test_tools::per_element());
}

// `purge-user` on SQLite leaves a placeholder at the newest seq, recorded as a removed body
// of no bytes, above bodies still there (sqlite_erasure.cpp, keep_seq_taken); `migrate`
// copies it to PostgreSQL. Both walks start after the last removed body that had bytes and
// pass over what is recorded: the bodies below it go, each once.
BOOST_AUTO_TEST_CASE(bodies_below_an_erasures_placeholder_are_removed_on_both_backends) {
  test::TwinStores t;
  for (int64_t seq = 1; seq <= 10; ++seq) {
    t.inbox(seq, "m" + std::to_string(seq), "webhook", 100 + seq, "a.b", "{}", R"({"n":1})");
  }
  t.inbox(11, " erased:11", "webhook", 111, "a.b", "{}", "");
  t.exec("INSERT INTO removed_bodies (seq, body_sha256, body_bytes, removed_at_ms) VALUES (11, '" +
         sha256_hex(std::string_view()) + "', 0, 1)");
  t.inbox(12, "m12", "webhook", 112, "a.b", "{}", R"({"n":2})");
  t.exec("UPDATE processor_state SET applied_seq = 12");
  auto lite = twin_must(store::open_sqlite_body_retention(t.lite));
  auto pg = twin_must(store::open_postgres_body_retention(t.pg));
  for (int round = 0; round < 6; ++round) {
    const auto lite_removed = twin_must(lite->remove_bodies(1000, 4, 2));
    const auto pg_removed = twin_must(pg->remove_bodies(1000, 4, 2));
    BOOST_TEST(pgre_describe(lite_removed) == pgre_describe(pg_removed));
  }
  t.same_rows("SELECT seq, body_bytes FROM removed_bodies ORDER BY seq", 2);
  BOOST_TEST(twin_must(t.pg.query_int("SELECT count(*) FROM removed_bodies")).value_or(0) == 12);
  BOOST_TEST(twin_must(t.pg.query_int("SELECT count(*) FROM inbox WHERE length(body) > 0")).value_or(-1) == 0);
  BOOST_TEST(twin_must(t.lite.query_int("SELECT count(*) FROM inbox WHERE length(body) > 0")).value_or(-1) == 0);
}

BOOST_AUTO_TEST_CASE(instances_removing_bodies_together_remove_each_once) {
  test::TwinStores t;
  for (int64_t seq = 1; seq <= 50; ++seq) t.inbox(seq, "m" + std::to_string(seq), "webhook", seq, "a.b", "{}", "{}");
  t.exec("UPDATE processor_state SET applied_seq = 50");
  pg::Connection other_db = t.pg_connection();
  auto mine = twin_must(store::open_postgres_body_retention(t.pg));
  auto other = twin_must(store::open_postgres_body_retention(other_db));
  // While one instance's batch is open, the other removes nothing (and fails nothing).
  auto txn = twin_must(pg::Transaction::begin(other_db));
  BOOST_REQUIRE(other_db.query("SELECT pg_advisory_xact_lock($1)", pg::Params().add(store::kBodyRetentionLock)));
  BOOST_TEST(pgre_describe(twin_must(mine->remove_bodies(1000, 10, 1))) == "0/0/done");
  twin_must(txn.commit());
  int64_t removed = 0;
  for (int i = 0; i < 20; ++i) {
    removed += twin_must(mine->remove_bodies(1000, 7, 1)).deliveries;
    removed += twin_must(other->remove_bodies(1000, 7, 1)).deliveries;
  }
  BOOST_TEST(removed == 50);
}

// A delivery whose envelope names another user (user-c) than its data (user-a): its outcome
// records the envelope's, the rows it wrote and their feed rows the data's. Erasing user-a
// takes the delivery too, on both backends: `rebuild` would derive the rows again from it.
BOOST_AUTO_TEST_CASE(a_delivery_whose_data_names_the_user_goes_with_the_rows_it_wrote) {
  test::TwinStores t;
  pgre_fill(t);
  t.inbox(900, "mixed", "webhook", 900, "daily.data.sleep.created", "{}",
          R"({"event_type":"daily.data.sleep.created","user_id":"user-c","data":{"id":"s-x","user_id":"user-a"}})");
  t.exec("INSERT INTO delivery_outcomes (seq, status, family, user_id) VALUES (900, 'processed', 'summary', 'user-c')");
  t.exec("INSERT INTO changes (change_id, seq, table_name, row_key, op, row_count, user_id) "
         "VALUES (900, 900, 'summaries', 'sleep/s-x', 'insert', 1, 'user-a')");
  auto lite = twin_must(store::open_sqlite_erasure(t.lite_path));
  auto pg = twin_must(store::open_postgres_erasure({t.pg_uri, ""}));
  const auto lite_erased = twin_must(lite->erase("user-a", 1));
  const auto pg_erased = twin_must(pg->erase("user-a", 1));
  BOOST_TEST(lite_erased.total_rows() == pg_erased.total_rows());
  // (SQLite keeps the newest seq taken with a placeholder of no body.)
  t.same_rows("SELECT count(*) FROM inbox WHERE message_id = 'mixed'", 1);
  BOOST_TEST(twin_must(t.pg.query_int("SELECT count(*) FROM inbox WHERE message_id = 'mixed'")).value_or(-1) == 0);
  t.same_rows("SELECT count(*) FROM delivery_outcomes WHERE seq = 900 AND status <> 'ignored'", 1);
}

BOOST_AUTO_TEST_CASE(purge_user_counts_and_erases_the_same_rows) {
  test::TwinStores t;
  pgre_fill(t);
  pgre_same_tables(t);
  auto lite = twin_must(store::open_sqlite_erasure(t.lite_path));
  auto pg = twin_must(store::open_postgres_erasure({t.pg_uri, ""}));
  const auto lite_count = twin_must(lite->count("user-a"));
  const auto pg_count = twin_must(pg->count("user-a"));
  BOOST_TEST(pgre_describe(lite_count) == pgre_describe(pg_count));
  BOOST_TEST(pg_count.tables.size() == store::schema::erased_tables().size());
  BOOST_TEST(pg_count.total_rows() == kPgreRowsOfA, pgre_describe(pg_count));
  // The orphan summaries name nobody: counted as rows no erasure can attribute.
  BOOST_TEST(pgre_describe_unattributed(pg_count) == "summaries=2 ");
  BOOST_TEST(pgre_describe_unattributed(pg_count) == pgre_describe_unattributed(lite_count));
  pgre_same_tables(t);  // a dry run changes nothing

  const auto lite_erased = twin_must(lite->erase("user-a", 123456));
  const auto pg_erased = twin_must(pg->erase("user-a", 123456));
  BOOST_TEST(pgre_describe(lite_erased) == pgre_describe(pg_erased));
  BOOST_TEST(pgre_describe(pg_erased) == pgre_describe(pg_count));
  BOOST_TEST(!pg_erased.space.empty());
  pgre_same_tables(t);
  t.same_rows("SELECT user_id, erased_at_ms, row_counts FROM erasures", 3);
  BOOST_TEST(twin_must(pg->count("user-a")).total_rows() == 0);
  BOOST_TEST(twin_must(pg->count("user-b")).total_rows() == pg_count.total_rows());
}

// Spec §11 on both backends, with what `serve` writes: two users' deliveries of every
// family applied, every body removed by retention, then A erased. Both stores keep the same
// rows, and neither keeps a row of A in any table (changes, outbox, removed_bodies and
// lab_parsing_jobs included), while B's rows are all still there.
BOOST_AUTO_TEST_CASE(purge_user_after_retention_leaves_no_row_of_that_user_on_either_backend) {
  test::TwinStores t;
  pgre_two_users_on_both(t);
  pgre_remove_every_body(t);
  const auto lite_a = [&](const std::string& table) { return test::count(t.lite, table + " WHERE user_id = 'user-a'"); };
  BOOST_REQUIRE_EQUAL(twin_must(t.pg.query_int("SELECT count(*) FROM inbox WHERE length(body) > 0")).value_or(-1), 0);
  BOOST_TEST(test::compare_derived_tables(t.lite, t.pg) > 100u);
  t.same_rows("SELECT seq, status, family, error, user_id FROM delivery_outcomes ORDER BY seq", 5);
  t.same_rows("SELECT seq, body_sha256, body_bytes, user_id FROM removed_bodies ORDER BY seq", 4);
  for (const char* table : {"lab_parsing_jobs", "removed_bodies", "changes", "delivery_outcomes", "jobs"}) {
    BOOST_TEST(lite_a(table) > 0, "no row of A in " << table);
  }
  auto lite = twin_must(store::open_sqlite_erasure(t.lite_path));
  const int64_t b_rows = twin_must(lite->count("user-b")).total_rows();

  auto pg = twin_must(store::open_postgres_erasure({t.pg_uri, ""}));
  const auto lite_erased = twin_must(lite->erase("user-a", 1));
  const auto pg_erased = twin_must(pg->erase("user-a", 1));
  BOOST_TEST(pgre_describe(lite_erased) == pgre_describe(pg_erased));
  BOOST_TEST(lite_erased.unattributed.empty(), pgre_describe_unattributed(lite_erased));
  BOOST_TEST(pg_erased.unattributed.empty(), pgre_describe_unattributed(pg_erased));
  BOOST_TEST(test::compare_derived_tables(t.lite, t.pg) > 50u);
  t.same_rows("SELECT seq, message_id FROM inbox ORDER BY seq", 2);
  t.same_rows("SELECT seq, user_id FROM removed_bodies ORDER BY seq", 2);
  t.same_rows("SELECT seq, user_id FROM outbox ORDER BY seq", 2);

  // No row of A anywhere: every table of the PostgreSQL store, read as text.
  auto tables = twin_must(t.pg.query("SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() "
                                     "AND tablename NOT IN ('erasures', 'schema_migrations') ORDER BY 1"));
  BOOST_TEST(tables.size() > 20);
  for (int r = 0; r < tables.size(); ++r) {
    const std::string table(tables.text(r, 0));
    const auto left = twin_must(t.pg.query_int("SELECT count(*) FROM " + table + " AS r WHERE r::text LIKE '%user-a%' "
                                               "OR r::text LIKE '%ida-%'"));
    BOOST_TEST(left.value_or(-1) == 0, "rows of A left in " << table);
  }
  BOOST_TEST(twin_must(t.pg.query_int("SELECT count(*) FROM inbox WHERE message_id LIKE 'msg-A-%' "
                                      "OR message_id LIKE 'fetch:A:%'")).value_or(-1) == 0);
  // B's rows are all still there, on both.
  BOOST_TEST(twin_must(lite->count("user-b")).total_rows() == b_rows);
  BOOST_TEST(twin_must(pg->count("user-b")).total_rows() == b_rows);
  BOOST_TEST(twin_must(t.pg.query_int("SELECT count(*) FROM inbox WHERE message_id LIKE 'msg-B-%' "
                                      "OR message_id LIKE 'fetch:B:%'")).value_or(-1) ==
             static_cast<int64_t>(std::size(test::kUserWebhookExamples) + std::size(test::kUserFetchedExamples) +
                                  test::kTwoUsersAlmostJson));
}

// The console's search by user after retention removed every body, on both backends: it
// lists every one of A's deliveries, those an erasure of A would remove, and no other
// user's, though no body names anyone any more (it found only the deliveries that kept
// their body). Its users are found as erasure finds them (store/delivery_users.h): a
// delivery whose envelope names another user by the rows it wrote for A, one not applied
// yet by its body.
BOOST_AUTO_TEST_CASE(the_search_by_user_lists_their_deliveries_after_retention_removed_the_bodies) {
  test::TwinStores t;
  pgre_two_users_on_both(t);
  pgre_remove_every_body(t);
  BOOST_REQUIRE_EQUAL(twin_must(t.pg.query_int("SELECT count(*) FROM inbox WHERE length(body) > 0")).value_or(-1), 0);
  // Envelope of C, data of A: C's by its outcome, A's by the rows it wrote.
  t.inbox(5001, "mixed", "webhook", test::kTwoUsersBaseMs + 5001, "daily.data.sleep.created", "{}", "");
  t.exec("INSERT INTO delivery_outcomes (seq, status, family, user_id) "
         "VALUES (5001, 'processed', 'summary', 'user-c')");
  t.exec("INSERT INTO removed_bodies (seq, body_sha256, body_bytes, removed_at_ms, user_id) "
         "VALUES (5001, 'ab', 10, 5, 'user-c')");
  t.exec("INSERT INTO changes (change_id, seq, table_name, row_key, op, row_count, user_id) "
         "VALUES (90001, 5001, 'summaries', 'sleep/s-x', 'insert', 1, 'user-a')");
  // Not applied yet: its body says whose it is (the id spelt with a JSON escape).
  t.inbox(5002, "pending-A", "webhook", test::kTwoUsersBaseMs + 5002, "daily.data.body.created", "{}",
          R"({"event_type":"daily.data.body.created","user_id":"user-\u0061","data":{}})");

  const auto seqs_of = [&](const std::string& where) {
    std::vector<int64_t> seqs;
    for (const auto& row : test::text_rows(t.lite, "SELECT seq FROM inbox WHERE " + where + " ORDER BY seq DESC", 1)) {
      seqs.push_back(std::stoll(row));
    }
    return seqs;
  };
  const auto of_a = seqs_of("message_id LIKE 'msg-A-%' OR message_id LIKE 'fetch:A:%' "
                            "OR message_id IN ('mixed', 'pending-A')");
  const auto of_b = seqs_of("message_id LIKE 'msg-B-%' OR message_id LIKE 'fetch:B:%'");
  BOOST_REQUIRE_EQUAL(of_a.size(), std::size(test::kUserWebhookExamples) + std::size(test::kUserFetchedExamples) +
                                       test::kTwoUsersAlmostJson + 2);
  // Exactly the deliveries an erasure of A removes.
  auto erasure = twin_must(store::open_sqlite_erasure(t.lite_path));
  const auto counted = twin_must(erasure->count("user-a"));
  for (const auto& table : counted.tables) {
    if (table.table == "inbox") BOOST_TEST(table.rows == static_cast<int64_t>(of_a.size()));
  }
  std::vector<int64_t> of_both = of_a;
  of_both.insert(of_both.end(), of_b.begin(), of_b.end());
  std::sort(of_both.rbegin(), of_both.rend());

  for (const std::string& location : {t.lite_path, t.pg_uri}) {
    BOOST_TEST_CONTEXT(location) {
      BOOST_TEST(pgre_search(location, {"user-a"}) == of_a, boost::test_tools::per_element());
      BOOST_TEST(pgre_search(location, {"user-b"}) == of_b, boost::test_tools::per_element());
      BOOST_TEST(pgre_search(location, {"user-a", "user-b"}) == of_both, boost::test_tools::per_element());
      BOOST_TEST(pgre_search(location, {"user-c"}) == std::vector<int64_t>{5001}, boost::test_tools::per_element());
      BOOST_TEST(pgre_search(location, {"nobody"}).empty());
    }
  }
}

// The user-columns migration (SQLite 009, PostgreSQL 003) on populated stores of the
// version before: the same columns filled with the same users on both, what nothing names
// left empty and counted alike.
BOOST_AUTO_TEST_CASE(the_user_columns_migration_fills_both_backends_alike) {
  test::TwinStores t;
  pgre_two_users_on_both(t);
  // Retention removed the first 39 bodies; of A's lab parsing job nothing else names A.
  twin_must(twin_must(store::open_sqlite_body_retention(t.lite))->remove_bodies(INT64_MAX, 39, 1));
  twin_must(twin_must(store::open_postgres_body_retention(t.pg))->remove_bodies(INT64_MAX, 39, 1));
  const auto job_seq = t.same_rows("SELECT seq FROM lab_parsing_jobs WHERE id LIKE 'ida-%'", 1);
  BOOST_REQUIRE_EQUAL(job_seq.size(), 1u);
  t.exec("DELETE FROM changes WHERE seq = " + job_seq[0]);
  const auto filled = [&] {
    t.same_rows("SELECT seq, user_id FROM delivery_outcomes ORDER BY seq", 2);
    t.same_rows("SELECT seq, user_id FROM removed_bodies ORDER BY seq", 2);
    t.same_rows("SELECT change_id, user_id FROM changes ORDER BY change_id", 2);
    t.same_rows("SELECT job_id, user_id FROM jobs ORDER BY job_id", 2);
    pgre_same_sorted(t, "SELECT id, user_id FROM lab_parsing_jobs", 2);
    pgre_same_sorted(t, "SELECT workout_id, user_id FROM workout_streams", 2);
    pgre_same_sorted(t, "SELECT seq, user_id FROM outbox", 2);
  };
  filled();  // as written today
  test::strip_user_columns(t.lite);
  pgre_strip_user_columns(t.pg);

  twin_must(store::migrate(t.lite));
  twin_must(store::migrate(t.pg));
  filled();
  BOOST_TEST(twin_must(t.pg.query_int("SELECT max(version) FROM schema_migrations")).value_or(0) ==
             store::postgres_schema_version());
  BOOST_TEST(twin_must(t.pg.query_int("SELECT count(*) FROM lab_parsing_jobs WHERE id LIKE 'ida-%' AND user_id IS NULL"))
                 .value_or(-1) == 1);
  BOOST_TEST(twin_must(t.pg.query_int("SELECT count(*) FROM delivery_outcomes WHERE user_id = 'user-a'"))
                 .value_or(0) > 10);
  pgre_same_sorted(t, "SELECT table_name, unattributed FROM unattributed_rows", 2);
  BOOST_TEST(twin_must(t.pg.query_int("SELECT unattributed FROM unattributed_rows WHERE table_name = "
                                      "'lab_parsing_jobs'")).value_or(0) >= 1);
}

BOOST_AUTO_TEST_CASE(purge_user_is_refused_while_an_instance_applies_the_inbox) {
  test::TwinStores t;
  pgre_fill(t);
  pg::Connection leader = t.pg_connection();
  BOOST_REQUIRE(leader.query("SELECT pg_advisory_lock($1)", pg::Params().add(store::kProcessingLock)));
  auto pg = twin_must(store::open_postgres_erasure({t.pg_uri, ""}));
  auto erased = pg->erase("user-a", 1);
  BOOST_REQUIRE(!erased);
  BOOST_TEST((erased.error_kind() == ErrorKind::in_use));
  BOOST_TEST(twin_must(pg->count("user-a")).total_rows() == kPgreRowsOfA);  // nothing erased; a dry run still works
  auto free = pg->check_free();  // what `purge-user --deregister` asks before calling the service
  BOOST_REQUIRE(!free);
  BOOST_TEST((free.error_kind() == ErrorKind::in_use));
  BOOST_REQUIRE(leader.query("SELECT pg_advisory_unlock($1)", pg::Params().add(store::kProcessingLock)));
  BOOST_TEST(pg->check_free().ok());

  // A `serve` standing by still removes bodies: the erasure waits for its batch (here held
  // past the busy timeout: busy, nothing erased), so that no record of a body of the user's
  // is written after the erasure deleted them.
  {
    auto standby_batch = twin_must(pg::Transaction::begin(leader));
    BOOST_REQUIRE(leader.query("SELECT pg_advisory_xact_lock($1)", pg::Params().add(store::kBodyRetentionLock)));
    auto waiting = twin_must(store::open_postgres_erasure({t.pg_uri, ""}, 100));
    erased = waiting->erase("user-a", 1);
    BOOST_REQUIRE(!erased);
    BOOST_TEST((erased.error_kind() == ErrorKind::busy), erased.error());
  }
  BOOST_TEST(twin_must(pg->count("user-a")).total_rows() == kPgreRowsOfA);

  // A row lock held past the busy timeout: busy, nothing erased.
  auto quick = twin_must(store::open_postgres_erasure({t.pg_uri, ""}, 100));
  auto txn = twin_must(pg::Transaction::begin(leader));
  BOOST_REQUIRE(leader.exec("UPDATE users SET last_seen_ms = 2 WHERE user_id = 'user-a'"));
  erased = quick->erase("user-a", 1);
  BOOST_REQUIRE(!erased);
  BOOST_TEST((erased.error_kind() == ErrorKind::busy), erased.error());
  twin_must(txn.commit());
  BOOST_TEST(twin_must(t.pg.query_int("SELECT count(*) FROM erasures")).value_or(-1) == 0);
  BOOST_TEST(twin_must(quick->erase("user-a", 1)).total_rows() == kPgreRowsOfA);
}

BOOST_AUTO_TEST_CASE(every_table_with_a_user_column_is_covered_by_the_erasure) {
  test::TwinStores t;
  auto tables = twin_must(t.pg.query(
      "SELECT DISTINCT table_name::text FROM information_schema.columns WHERE table_schema = current_schema() "
      "AND column_name LIKE '%user_id%' AND table_name::text IN (SELECT tablename FROM pg_tables "
      "WHERE schemaname = current_schema()) ORDER BY 1"));
  BOOST_TEST(tables.size() > 10);
  for (int r = 0; r < tables.size(); ++r) {
    const std::string table(tables.text(r, 0));
    if (table == "erasures") continue;  // the record keeps the id by design
    const auto erased = store::schema::erased_tables();
    const bool covered =
        std::any_of(erased.begin(), erased.end(), [&](const auto* described) { return described->name == table; });
    BOOST_TEST(covered, "not erased: " << table);
  }
}

BOOST_AUTO_TEST_SUITE_END()
