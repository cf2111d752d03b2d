// The forwarding outbox on PostgreSQL (store/postgres/outbox/): the writer makes the same
// entries as SQLite's from the same inbox and change-feed rows (user, order key, event
// globs, bodies that are not JSON skipped without failing the commit, JSON that is not
// UTF-8 and JSON with escapes jsonb refuses forwarded as SQLite does), the sender's and
// `forward`'s operations leave the same rows (marks of each key's first entry and how they
// move, pinned POSTs, dropped ranges and the entries made again from them, ranges merged),
// and entries written in an ingest transaction that rolls back leave nothing.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

#include "store/postgres/jobs/pg_job_admin.h"
#include "store/postgres/outbox/pg_outbox.h"
#include "store/postgres/outbox/pg_outbox_writer.h"
#include "store/schema/dialect.h"
#include "store/schema/glob_regex.h"
#include "store/outbox.h"
#include "store/sqlite/outbox/sqlite_outbox.h"
#include "tests/derived/store_dump.h"
#include "tests/postgres/twin_stores.h"

BOOST_AUTO_TEST_SUITE(pg_outbox_test)

using namespace hh;
using test::twin_must;

namespace {

// Every outbox column but the times the store takes from its clock.
const std::string kPgoEntries =
    "SELECT outbox_id, destination, kind, seq, event_type, table_name, row_key, op, row_count, from_ms, to_ms, "
    "user_id, order_key, state, attempts, post_id, head, last_status, last_error FROM outbox ORDER BY outbox_id";
constexpr int kPgoEntryColumns = 19;

std::vector<store::ForwardRule> pgo_rules() {
  return {store::ForwardRule{.destination = "backend", .mode = store::ForwardMode::changes, .events = {}},
          store::ForwardRule{.destination = "raw-sleep", .mode = store::ForwardMode::deliveries,
                             .events = {"daily.data.sleep.*", "lab[st]est.*", "x?y", "a.b(c)+"}},
          store::ForwardRule{.destination = "raw-all", .mode = store::ForwardMode::deliveries, .events = {}},
          store::ForwardRule{.destination = "lab-changes", .mode = store::ForwardMode::changes,
                             .events = {"labtest.*"}}};
}

// Deliveries of every shape the writer meets (the bodies' user ids in either place).
void pgo_deliveries(test::TwinStores& t) {
  t.inbox(1, "m1", "webhook", 1, "daily.data.sleep.created", "{}",
          R"({"event_type":"daily.data.sleep.created","user_id":"u1","data":{"id":"s1"}})");
  t.inbox(2, "m2", "webhook", 2, "labtest.result.critical.created", "{}",
          R"({"event_type":"labtest.result.critical.created","data":{"user_id":"u2"}})");
  t.inbox(3, "m3", "webhook", 3, "daily.data.sleep.updated", "{}", "not json");
  t.inbox(4, "m4", "webhook", 4, "daily.data.sleep.updated", "{}", std::string_view("{\"a\":\"\xff\xfe\"}", 10));
  t.inbox(5, "m5", "fetch", 5, "fetch.summaries.sleep", "{\"user_id\":\"u1\"}", R"({"sleep":[]})");
  t.inbox(6, "m6", "webhook", 6, std::nullopt, "{}", R"({"user_id":"u3"})");
  t.inbox(7, "m7", "webhook", 7, "x?y", "{}", R"({"user_id":42})");
  t.inbox(8, "m8", "webhook", 8, "a.b(c)+", "{}", R"({"user_id":"u4"})");
  t.inbox(9, "m9", "webhook", 9, "a.bc", "{}", R"({"user_id":"u4"})");
  t.inbox(10, "m10", "webhook", 10, "provider.Connection.Created", "{}", "[]");
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_writer_makes_the_same_entries_as_sqlite) {
  test::TwinStores t;
  pgo_deliveries(t);
  // Change-feed rows of every key format change_owners reads, caused by those deliveries.
  t.exec("INSERT INTO summaries (resource, id, user_id, provider, source_type, seq, data) "
         "VALUES ('sleep', 's1', 'u1', 'oura', 'ring', 1, '{}')");
  t.exec("INSERT INTO lab_results (order_id, user_id, seq, data) VALUES ('o1', 'u2', 2, '{}')");
  t.exec("INSERT INTO changes (change_id, seq, table_name, row_key, op, row_count, from_ms, to_ms) VALUES "
         "(1, 1, 'summaries', 'sleep/s1', 'insert', 1, NULL, NULL), "
         "(2, 1, 'samples', 'u1/heartrate/oura/ring', 'insert', 3, 10, 20), "
         "(3, 2, 'lab_results', 'o1', 'update', 1, NULL, NULL), "
         "(4, 2, 'users', 'u2', 'insert', 1, NULL, NULL), "
         "(5, 5, 'backfills', 'u1/sleep/oura/0/86400000', 'replace', 1, NULL, NULL), "
         "(6, 6, 'connections', 'u3/garmin', 'insert', 1, NULL, NULL)");
  auto rules = pgo_rules();

  // SQLite's writer makes entries per range of deliveries, each mode's in its order;
  // PostgreSQL's writer those of a commit's deliveries, and a step's newest n changes.
  const auto make_lite = [&](store::ForwardMode mode, int64_t first, int64_t last) {
    for (const auto& rule : rules) {
      if (rule.mode == mode) test::make_outbox_entries(t.lite, rule, first, last);
    }
  };
  auto pg = twin_must(store::PgOutboxWriter::create(t.pg, rules));
  BOOST_TEST(pg.active());
  make_lite(store::ForwardMode::deliveries, 1, 6);
  const std::vector<int64_t> first_commit{1, 2, 3, 4, 5, 6};
  twin_must(pg.deliveries(first_commit));
  make_lite(store::ForwardMode::deliveries, 7, 10);
  const std::vector<int64_t> second_commit{10, 7, 9, 8};
  twin_must(pg.deliveries(second_commit));
  make_lite(store::ForwardMode::changes, 2, 6);  // change ids 3-6
  twin_must(pg.changes(4));
  make_lite(store::ForwardMode::changes, 1, 6);  // all six
  twin_must(pg.changes(6));
  const auto entries = t.same_rows(kPgoEntries, kPgoEntryColumns);
  BOOST_TEST(entries.size() > 20u);
  BOOST_TEST(entries.at(0) ==
             "1|raw-sleep|delivery|1|daily.data.sleep.created|deliveries|m1|insert|1|NULL|NULL|u1|u1/daily.data.sleep|"
             "pending|0|NULL|NULL|NULL|NULL");

  // The clock columns: Unix ms now, the same for both columns of an entry.
  auto times = t.pg.query("SELECT min(created_at), bool_and(created_at = next_attempt_at) FROM outbox");
  BOOST_TEST(times->integer(0, 0) > 1'700'000'000'000);
  BOOST_TEST(times->boolean(0, 1));

  auto none = twin_must(store::PgOutboxWriter::create(t.pg, {}));
  BOOST_TEST(!none.active());
  twin_must(none.deliveries(first_commit));
}

// JSON escapes jsonb refuses but SQLite's json_valid takes (\u0000, a lone high or low
// surrogate): such a body is JSON text, forwarded on both (PostgreSQL made no entry for it
// until migration 015), with its user read as SQLite reads it. An escaped backslash before
// u0000 is text, a surrogate pair a character; a bad escape is no JSON on either.
BOOST_AUTO_TEST_CASE(escapes_jsonb_refuses_are_json_on_both) {
  test::TwinStores t;
  const std::vector<std::string_view> bodies{
      R"({"user_id":"u1","note":"a\u0000b"})",
      R"({"user_id":"u2","note":"\ud800"})",
      R"({"data":{"user_id":"u3"},"note":"x\uDC00"})",
      R"({"user_id":"u4","note":"\\u0000"})",
      R"({"user_id":"u5","note":"\ud83d\ude00"})",
      R"({"user_id":"\ud83d\ude00","note":"\\\u0000"})",
      R"({"user_id":"u7","note":"\ud800\ud800\udc00\udc00"})",
      R"({"user_id":"u8","note":"\ud800\\udc00"})",
      R"({"user_id":"u9","note":"\u00"})",
      R"({"user_id":"u10","note":"\u0000)"};
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const auto seq = static_cast<int64_t>(i + 1);
    t.inbox(seq, "m" + std::to_string(seq), "webhook", seq, "daily.data.sleep.created", "{}", bodies[i]);
    seqs.push_back(seq);
  }
  const store::ForwardRule rule{.destination = "raw-all", .mode = store::ForwardMode::deliveries, .events = {}};
  test::make_outbox_entries(t.lite, rule, 1, static_cast<int64_t>(bodies.size()));
  auto pg = twin_must(store::PgOutboxWriter::create(t.pg, {rule}));
  twin_must(pg.deliveries(seqs));
  t.same_rows(kPgoEntries, kPgoEntryColumns);
  const auto made = t.same_rows("SELECT seq, user_id FROM outbox ORDER BY seq", 2);
  const std::vector<std::string> expected{"1|u1", "2|u2", "3|u3", "4|u4", "5|u5", "6|\xF0\x9F\x98\x80", "7|u7", "8|u8"};
  BOOST_TEST(made == expected, boost::test_tools::per_element());
}

// The outbox's event globs are translated as the read side's are (store/schema/glob_regex.h:
// one translation of GLOB for PostgreSQL): a set left open matches nothing, as in SQLite,
// where the outbox once had a translator of its own that matched it as a literal '['.
BOOST_AUTO_TEST_CASE(globs_become_anchored_regular_expressions) {
  BOOST_TEST(store::schema::glob_to_regex("daily.data.*") == "^daily\\.data\\..*$");
  BOOST_TEST(store::schema::glob_to_regex("a?[bc][^d]") == "^a.[bc][^d]$");
  BOOST_TEST(store::schema::glob_to_regex("[]x]") == "^[\\]x]$");
  BOOST_TEST(store::schema::glob_to_regex("(a)+{1}|$") == "^\\(a\\)\\+\\{1\\}\\|\\$$");
  BOOST_TEST(store::schema::glob_to_regex("[ab") == "a^");
  // [[forward]] events as written, the shell's `[!h]` included (it was "! or h" in both).
  const std::vector<std::string> events{"daily.data.[!h]*"};
  BOOST_TEST(store::schema::globs_condition(events, "event_type", store::schema::Dialect::postgres) ==
             "(event_type ~ '^daily\\.data\\.[^h].*$')");
  BOOST_TEST(store::schema::globs_condition(events, "event_type", store::schema::Dialect::sqlite) ==
             "(event_type GLOB 'daily.data.[^h]*')");
}

BOOST_AUTO_TEST_CASE(entries_of_a_commit_that_rolls_back_are_gone_with_it) {
  test::TwinStores t;
  auto writer = twin_must(store::PgOutboxWriter::create(t.pg, pgo_rules()));
  {
    auto txn = twin_must(pg::Transaction::begin(t.pg));
    auto seq = twin_must(t.pg.query(
        "INSERT INTO inbox (message_id, received_at, event_type, headers, body) VALUES "
        "('m1', 1, 'daily.data.sleep.created', '{}', convert_to('{\"user_id\":\"u\"}', 'UTF8')), "
        "('m2', 2, 'daily.data.sleep.created', '{}', '\\xff'::bytea) RETURNING seq"));
    const std::vector<int64_t> seqs{seq.integer(0, 0), seq.integer(1, 0)};
    twin_must(writer.deliveries(seqs));  // the body that is not UTF-8 fails nothing
    BOOST_TEST(t.pg.query_int("SELECT count(*) FROM outbox")->value_or(0) == 2);  // m1 for both delivery rules
  }  // rolled back
  BOOST_TEST(t.pg.query_int("SELECT count(*) FROM outbox")->value_or(-1) == 0);
  BOOST_TEST(t.pg.query_int("SELECT count(*) FROM inbox")->value_or(-1) == 0);

  // And a commit keeps them.
  auto txn = twin_must(pg::Transaction::begin(t.pg));
  auto seq = twin_must(t.pg.query("INSERT INTO inbox (message_id, received_at, event_type, headers, body) VALUES "
                                  "('m3', 3, 'daily.data.sleep.created', '{}', '\\x7b7d'::bytea) RETURNING seq"));
  const std::vector<int64_t> seqs{seq.integer(0, 0)};
  twin_must(writer.deliveries(seqs));
  twin_must(txn.commit());
  BOOST_TEST(t.pg.query_int("SELECT count(*) FROM outbox")->value_or(0) == 2);
}

BOOST_AUTO_TEST_CASE(the_sender_and_forward_leave_the_same_rows) {
  test::TwinStores t;
  pgo_deliveries(t);
  const auto rules = pgo_rules();
  auto pg_writer = twin_must(store::PgOutboxWriter::create(t.pg, rules));
  for (const auto& rule : rules) {
    if (rule.mode == store::ForwardMode::deliveries) test::make_outbox_entries(t.lite, rule, 1, 10);
  }
  const std::vector<int64_t> seqs{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  twin_must(pg_writer.deliveries(seqs));
  t.same_rows(kPgoEntries, kPgoEntryColumns);

  auto lite = twin_must(store::open_sqlite_outbox(t.lite_path, store::OutboxUse::sender));
  auto pg = twin_must(store::open_postgres_outbox({t.pg_uri, ""}, store::OutboxUse::sender));
  for (store::Outbox* outbox : {lite.get(), pg.get()}) {
    const std::vector<int64_t> sent{1, 3}, later{2, 4, 5}, dead{6};
    twin_must(outbox->classify("raw-all", true, 100));
    twin_must(outbox->classify("raw-sleep", true, 100));
    twin_must(outbox->sent(sent));
    const store::PostPin pin{2, later, {}};
    twin_must(outbox->pin(std::span(&pin, 1)));
    twin_must(outbox->retry_later(later, 5000, 503, "HTTP 503"));
    twin_must(outbox->retry_later(later, 6000, std::nullopt, "timeout"));
    twin_must(outbox->dead(dead, 400, "HTTP 400"));
    twin_must(outbox->sent({}));
  }
  t.same_rows(kPgoEntries, kPgoEntryColumns);

  auto describe = [](const std::vector<store::OutboxEntry>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) {
      out.push_back(std::to_string(e.outbox_id) + "|" + e.destination + "|" + e.kind + "|" + e.row_key + "|" +
                    e.user_id.value_or("NULL") + "|" + e.order_key.value_or("NULL") + "|" + e.state + "|" +
                    std::to_string(e.attempts) + "|" + std::to_string(e.post_id.value_or(-1)) + "|" +
                    std::to_string(e.head ? int{*e.head} : -1) + "|" +
                    std::to_string(e.last_status.value_or(-1)) + "|" + e.last_error.value_or("NULL") + "|" +
                    e.event_type.value_or("NULL") + "|" + std::to_string(e.seq));
    }
    return out;
  };
  store::OutboxSelection all;
  BOOST_TEST(describe(twin_must(lite->list(all))) == describe(twin_must(pg->list(all))));
  store::OutboxSelection some{.outbox_id = std::nullopt, .destination = "raw-all", .state = "pending", .after_id = 2,
                              .limit = 3, .seq = std::nullopt};
  BOOST_TEST(describe(twin_must(lite->list(some))) == describe(twin_must(pg->list(some))));
  BOOST_TEST(twin_must(pg->list(some)).size() == 3u);
  BOOST_TEST(describe({twin_must(lite->find(4)).value()}) == describe({twin_must(pg->find(4)).value()}));
  BOOST_TEST(!twin_must(pg->find(1)));

  auto figures = [](const std::vector<store::OutboxFigures>& all_figures) {
    std::vector<std::string> out;
    for (const auto& f : all_figures) {
      out.push_back(f.destination + "|" + std::to_string(f.pending) + "|" + std::to_string(f.dead) + "|" +
                    std::to_string(f.dropped) + "|" + std::to_string(f.dropped_ranges) + "|" +
                    (f.oldest_pending_created_at_ms ? "some" : "none"));
    }
    return out;
  };
  BOOST_TEST(figures(twin_must(lite->figures())) == figures(twin_must(pg->figures())));

  const store::ForwardRule raw_all{.destination = "raw-all", .mode = store::ForwardMode::deliveries, .events = {}};
  const auto lite_dropped = twin_must(lite->drop_oldest(raw_all, 2, std::vector<int64_t>{7}, 7000));
  const auto pg_dropped = twin_must(pg->drop_oldest(raw_all, 2, std::vector<int64_t>{7}, 7000));
  BOOST_TEST(lite_dropped.entries == pg_dropped.entries);
  BOOST_TEST(lite_dropped.ranges == pg_dropped.ranges);
  BOOST_TEST(lite_dropped.entries > 0);
  store::OutboxSelection dead_ones{.outbox_id = std::nullopt, .destination = std::nullopt, .state = "dead",
                                   .after_id = 0, .limit = 1000, .seq = std::nullopt};
  BOOST_TEST(twin_must(lite->requeue(dead_ones, 9000)) == twin_must(pg->requeue(dead_ones, 9000)));
  store::OutboxSelection one{.outbox_id = 4, .destination = std::nullopt, .state = std::nullopt, .after_id = 0,
                             .limit = 1, .seq = std::nullopt};
  BOOST_TEST(twin_must(lite->requeue(one, 9100)) == twin_must(pg->requeue(one, 9100)));
  t.same_rows(kPgoEntries, kPgoEntryColumns);
  t.same_rows("SELECT outbox_id, created_at, next_attempt_at FROM outbox WHERE created_at < 1000000 ORDER BY 1", 3);
  t.same_rows("SELECT destination, first_seq, last_seq, entries, dropped_at FROM outbox_dropped ORDER BY 1, 2", 5);
  BOOST_TEST(figures(twin_must(lite->figures())) == figures(twin_must(pg->figures())));

  // The dropped entries made again (new ids: compared by what they are).
  const auto lite_made = twin_must(lite->requeue_dropped(raw_all));
  const auto pg_made = twin_must(pg->requeue_dropped(raw_all));
  BOOST_TEST(lite_made.recreated == pg_made.recreated);
  BOOST_TEST(lite_made.dropped == pg_made.dropped);
  BOOST_TEST(lite_made.recreated > 0);
  t.same_rows("SELECT destination, kind, seq, row_key, user_id, order_key, state, attempts, post_id, head "
              "FROM outbox ORDER BY destination, seq, row_key, outbox_id", 10);
  BOOST_TEST(t.pg.query_int("SELECT count(*) FROM outbox_dropped")->value_or(-1) == 0);

  // Two requeues at once (two console tabs, the command line): while one has taken the
  // ranges and not committed, the other waits for it and then finds none; it does not make
  // the same entries a second time.
  BOOST_REQUIRE(twin_must(pg->drop_oldest(raw_all, 2, {}, 9500)).entries > 0);
  pg::Connection first = t.pg_connection();
  auto taking = twin_must(pg::Transaction::begin(first));
  BOOST_REQUIRE(first.exec("DELETE FROM outbox_dropped WHERE destination = 'raw-all'"));
  Result<store::RecreatedDropped> second = fail("not run");
  std::thread other([&] { second = pg->requeue_dropped(raw_all); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it reads while the first holds them
  twin_must(taking.commit());
  other.join();
  BOOST_REQUIRE_MESSAGE(second, second.error());
  BOOST_TEST(second->ranges == 0);
  BOOST_TEST(second->recreated == 0);
}

BOOST_AUTO_TEST_CASE(marks_pins_and_plans_the_same_on_both) {
  test::TwinStores t;
  // Three keys; k's entries 1, 2, 4, 6, 7; j's 3; m's 5.
  t.exec("INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, order_key, created_at, "
         "next_attempt_at) VALUES (1, 'd', 'change', 1, 't', 'r1', 'insert', 'k', 0, 0), "
         "(2, 'd', 'change', 2, 't', 'r2', 'insert', 'k', 0, 0), (3, 'd', 'change', 3, 't', 'r3', 'insert', 'j', 0, 0), "
         "(4, 'd', 'change', 4, 't', 'r4', 'insert', 'k', 0, 0), (5, 'd', 'change', 5, 't', 'r5', 'insert', 'm', 0, 9), "
         "(6, 'd', 'change', 6, 't', 'r6', 'insert', 'k', 0, 0), (7, 'd', 'change', 7, 't', 'r7', 'insert', 'k', 0, 0)");
  auto lite = twin_must(store::open_sqlite_outbox(t.lite_path, store::OutboxUse::sender));
  auto pg = twin_must(store::open_postgres_outbox({t.pg_uri, ""}, store::OutboxUse::sender));
  auto ids = [](const std::vector<store::OutboxEntry>& entries) {
    std::vector<int64_t> out;
    for (const auto& e : entries) out.push_back(e.outbox_id);
    return out;
  };
  for (store::Outbox* outbox : {lite.get(), pg.get()}) {
    BOOST_TEST(twin_must(outbox->classify("d", true, 3)) == 3);  // a few at a time
    BOOST_TEST(twin_must(outbox->classify("d", true, 100)) == 4);
    BOOST_TEST(twin_must(outbox->classify("d", true, 100)) == 0);
    BOOST_TEST(ids(twin_must(outbox->due_heads("d", 5, 10))) == (std::vector<int64_t>{1, 3}));
    BOOST_TEST(ids(twin_must(outbox->due_heads("d", 9, 10))) == (std::vector<int64_t>{1, 3, 5}));
    BOOST_TEST(ids(twin_must(outbox->key_entries("d", "k", 3))) == (std::vector<int64_t>{1, 2, 4}));
    const store::PostPin pin{1, {1, 2, 3}, {}};
    twin_must(outbox->pin(std::span(&pin, 1)));
    BOOST_TEST(ids(twin_must(outbox->post_entries(1))) == (std::vector<int64_t>{1, 2, 3}));
    twin_must(outbox->sent(std::vector<int64_t>{1, 2, 3}));  // k's next is 4; j has none left
    twin_must(outbox->dead(std::vector<int64_t>{4}, 400, "HTTP 400"));  // k's next is 6
    twin_must(outbox->demote(7));  // not k's first: stays unmarked, 6 stays marked
  }
  t.same_rows(kPgoEntries, kPgoEntryColumns);
  BOOST_TEST(t.pg.query_int("SELECT outbox_id FROM outbox WHERE head = 1 AND order_key = 'k'")->value_or(-1) == 6);
}

// A failed POST split the same on both, in one transaction with when its parts are due:
// the first key's entries pinned to the new POST with what they carried, the others out of
// any POST with what they carried (an id names one content for ever, in whatever POST it
// goes out next), each part due at its time with the attempt's status and error, none
// charged.
BOOST_AUTO_TEST_CASE(a_split_pins_frees_and_times_both_parts_the_same_on_both) {
  test::TwinStores t;
  t.exec("INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, order_key, attempts, "
         "created_at, next_attempt_at, post_id, content, content_bytes) VALUES "
         "(1, 'd', 'change', 1, 't', 'r1', 'insert', 'k', 2, 0, 0, 1, NULL, NULL), "
         "(2, 'd', 'change', 2, 't', 'r2', 'insert', 'j', 0, 0, 0, 1, 'old 2', 5), "
         "(3, 'd', 'change', 3, 't', 'r3', 'insert', 'k', 0, 0, 0, 1, NULL, NULL)");
  auto lite = twin_must(store::open_sqlite_outbox(t.lite_path, store::OutboxUse::sender));
  auto pg = twin_must(store::open_postgres_outbox({t.pg_uri, ""}, store::OutboxUse::sender));
  store::PostSplit split;
  split.kept = store::PostPin{-1, {1, 3}, {"change 1", "change 3"}};
  split.kept_due_at_ms = 5000;
  split.leaving = {2};
  split.leaving_due_at_ms = 7000;
  split.status = 503;
  split.error = "HTTP 503";
  for (store::Outbox* outbox : {lite.get(), pg.get()}) twin_must(outbox->split(split));
  const auto rows = t.same_rows("SELECT outbox_id, post_id, attempts, next_attempt_at, last_status, last_error, "
                                "content, content_bytes FROM outbox ORDER BY outbox_id", 8);
  BOOST_TEST(rows == (std::vector<std::string>{"1|-1|2|5000|503|HTTP 503|change 1|8",
                                               "2|NULL|0|7000|503|HTTP 503|old 2|5",
                                               "3|-1|0|5000|503|HTTP 503|change 3|8"}));
}

// The budget's record of drops merged the same on both: all but the newest keep − 1 ranges
// (by first_seq) become one spanning them, with their counts and the last drop's time.
BOOST_AUTO_TEST_CASE(dropped_ranges_are_merged_the_same_on_both) {
  test::TwinStores t;
  t.exec("INSERT INTO outbox_dropped (destination, first_seq, last_seq, entries, dropped_at) VALUES "
         "('d', 10, 12, 3, 100), ('d', 1, 2, 2, 300), ('d', 20, 20, 1, 200), ('d', 30, 31, 2, 50), "
         "('d', 40, 40, 1, 60), ('other', 5, 6, 2, 70)");
  auto lite = twin_must(store::open_sqlite_outbox(t.lite_path, store::OutboxUse::sender));
  auto pg = twin_must(store::open_postgres_outbox({t.pg_uri, ""}, store::OutboxUse::sender));
  for (store::Outbox* outbox : {lite.get(), pg.get()}) {
    BOOST_TEST(twin_must(outbox->merge_dropped("d", 3)) == 2);  // 1–2, 10–12, 20 → 1–20; 30–31 and 40 stay
    BOOST_TEST(twin_must(outbox->merge_dropped("d", 3)) == 0);  // nothing more to merge
    BOOST_TEST(twin_must(outbox->merge_dropped("nobody", 1)) == 0);
  }
  t.same_rows("SELECT destination, first_seq, last_seq, entries, dropped_at FROM outbox_dropped ORDER BY 1, 2", 5);
  BOOST_TEST(t.pg.query_int("SELECT count(*) FROM outbox_dropped WHERE destination = 'd' AND first_seq = 1 "
                            "AND last_seq = 20 AND entries = 6 AND dropped_at = 300")->value_or(-1) == 1);
  BOOST_TEST(t.pg.query_int("SELECT count(*) FROM outbox_dropped")->value_or(-1) == 4);
  for (store::Outbox* outbox : {lite.get(), pg.get()}) BOOST_TEST(twin_must(outbox->merge_dropped("d", 1)) == 2);
  t.same_rows("SELECT destination, first_seq, last_seq, entries, dropped_at FROM outbox_dropped ORDER BY 1, 2", 5);
  BOOST_TEST(t.pg.query_int("SELECT count(*) FROM outbox_dropped WHERE destination = 'd' AND first_seq = 1 "
                            "AND last_seq = 40 AND entries = 9")->value_or(-1) == 1);
}

BOOST_AUTO_TEST_CASE(instances_forward_one_at_a_time_and_another_takes_over) {
  test::TwinStores t;
  pgo_deliveries(t);
  auto writer = twin_must(store::PgOutboxWriter::create(t.pg, pgo_rules()));
  const std::vector<int64_t> seqs{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  twin_must(writer.deliveries(seqs));
  store::OutboxSelection pending;
  pending.state = "pending";
  auto first = twin_must(store::open_postgres_outbox({t.pg_uri, ""}, store::OutboxUse::sender));
  auto second = twin_must(store::open_postgres_outbox({t.pg_uri, ""}, store::OutboxUse::sender));
  // What a sender looks at: the entries it marks, then the due heads.
  auto looks_at = [](store::Outbox& outbox) {
    const int64_t marked = twin_must(outbox.classify("raw-all", false, 1000));
    return marked + static_cast<int64_t>(twin_must(outbox.due_heads("raw-all", INT64_MAX, 1000)).size());
  };
  const int64_t all = looks_at(*first);
  BOOST_TEST(all > 0);
  BOOST_TEST(looks_at(*second) == 0);  // the first instance forwards
  const store::ForwardRule raw_all{.destination = "raw-all", .mode = store::ForwardMode::deliveries, .events = {}};
  BOOST_TEST(twin_must(second->drop_oldest(raw_all, 100, {}, 1)).entries == 0);  // nor does it drop
  auto admin = twin_must(store::open_postgres_outbox({t.pg_uri, ""}, store::OutboxUse::admin));
  BOOST_TEST(!twin_must(admin->list(pending)).empty());  // `healthhook forward list` sees all
  first.reset();  // that instance stops: its session and lock go (as soon as the server ends the session)
  int64_t taken_over = 0;
  for (int attempt = 0; attempt < 100 && taken_over == 0; ++attempt) {
    taken_over = looks_at(*second);
    if (taken_over == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_TEST(taken_over > 0);
}

BOOST_AUTO_TEST_CASE(an_outbox_needs_an_existing_store) {
  auto fresh = test::PostgresCluster::shared().fresh_database();
  auto outbox = store::open_postgres_outbox({fresh, ""}, store::OutboxUse::admin);
  BOOST_REQUIRE(!outbox);
  BOOST_TEST(outbox.error().find("schema_migrations") != std::string::npos, outbox.error());
}

// A requeue of a large dead backlog goes in steps, each its own transaction (so the writer
// never waits behind all of it), and counts each entry once, also one pinned to a POST
// that straddles two steps (re-queued with the first step, selected again by the next).
BOOST_AUTO_TEST_CASE(a_large_requeue_goes_in_steps_and_counts_each_entry_once) {
  test::TwinStores t;
  constexpr int64_t kEntries = 3 * store::Outbox::kRequeueStep + 100;
  // Dead entries; every three in a row share a POST (post_id = the first's id), so POSTs
  // cross the steps' boundaries.
  t.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " + std::to_string(kEntries) +
         ") INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, user_id, order_key, "
         "state, attempts, created_at, next_attempt_at, post_id, last_status, last_error) "
         "SELECT i, 'd', 'change', i, 'summaries', 'k' || i, 'insert', 'u', 'u/sleep', 'dead', 50, 1, 1, "
         "i - ((i - 1) % 3), 400, 'HTTP 400' FROM n");
  auto lite = twin_must(store::open_sqlite_outbox(t.lite_path, store::OutboxUse::admin));
  auto pg = twin_must(store::open_postgres_outbox({t.pg_uri, ""}, store::OutboxUse::admin));
  auto observer = t.pg_connection();
  const auto xid = [&] { return twin_must(observer.query_int("SELECT txid_current()")).value_or(0); };
  const store::OutboxSelection every{.outbox_id = std::nullopt, .destination = "d", .state = std::nullopt,
                                     .after_id = 0, .limit = 1, .seq = std::nullopt};
  const int64_t before = xid();
  BOOST_TEST(twin_must(pg->requeue(every, 9000)) == kEntries);
  // One write transaction per step, and the observer's own two: each takes a transaction id.
  BOOST_TEST(xid() - before >= 4 + 1);
  BOOST_TEST(twin_must(lite->requeue(every, 9000)) == kEntries);
  t.same_rows("SELECT state, attempts, created_at, next_attempt_at, count(*) FROM outbox "
              "GROUP BY state, attempts, created_at, next_attempt_at", 5);
  BOOST_TEST(twin_must(t.pg.query_int("SELECT count(*) FROM outbox WHERE state = 'pending' AND attempts = 0 "
                                      "AND head IS NULL AND created_at = 9000"))
                 .value_or(0) == kEntries);
}

BOOST_AUTO_TEST_SUITE_END()
