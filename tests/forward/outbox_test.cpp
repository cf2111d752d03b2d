// The outbox as the store writes it (store/outbox.h, spec §10): entries in the same
// transaction as what they describe, one per change-feed row for `changes` destinations
// and one per stored webhook delivery for `deliveries` destinations, filtered by the
// destination's event globs, with the order key of the user and resource; and what the
// sender and `healthhook forward` do to them.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <regex>
#include <set>
#include <thread>

#include "forward/outbox_budget.h"
#include "processor/processor.h"
#include "store/open_store.h"
#include "store/sqlite/database.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/outbox/sqlite_outbox.h"
#include "tests/support/bytes_read.h"
#include "tests/support/database_probe.h"
#include "tests/support/examples.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(outbox_test)

using namespace hh;

namespace {

constexpr const char* kSleepUser = "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2";
constexpr const char* kSleepId = "5b1c8d0a-6f1e-4a43-9d3c-2f6c2b9e7a11";
constexpr const char* kHeartrateUser = "e9e072e8-0b39-4e5a-a3b2-9a1c0f6b2d44";

store::NewDelivery example_delivery(const std::string& message_id, const std::string& file) {
  store::NewDelivery d;
  d.message_id = message_id;
  d.received_at_ms = 1'700'000'000'000;
  d.headers_json = "{}";
  d.body = test::example_file(file);
  std::smatch m;
  static const std::regex event_type(R"re("event_type"\s*:\s*"([^"]+)")re");
  if (std::regex_search(d.body, m, event_type)) d.event_type = m[1].str();
  return d;
}

std::vector<store::ForwardRule> both_modes() {
  return {store::ForwardRule{.destination = "backend", .mode = store::ForwardMode::changes, .events = {}},
          store::ForwardRule{.destination = "raw-sleep",
                             .mode = store::ForwardMode::deliveries,
                             .events = {"daily.data.sleep.*", "labtest.*"}}};
}

struct OpenedStore {
  std::unique_ptr<store::Store> store;
  std::unique_ptr<store::Inbox> inbox;
};

OpenedStore open_with(const std::string& path, std::vector<store::ForwardRule> rules) {
  store::StoreOptions options;
  options.forward_rules = std::move(rules);
  options.forwarding_configured = !options.forward_rules.empty();  // as `serve` opens it
  auto store = store::open_store(path, options);
  BOOST_REQUIRE_MESSAGE(store, store.error());
  auto inbox = (*store)->open_inbox();
  BOOST_REQUIRE_MESSAGE(inbox, inbox.error());
  return {std::move(*store), std::move(*inbox)};
}

std::vector<store::Appended> append(store::Inbox& inbox, const std::vector<store::NewDelivery>& deliveries) {
  std::vector<const store::NewDelivery*> batch;
  for (const auto& d : deliveries) batch.push_back(&d);
  auto appended = inbox.append(batch);
  BOOST_REQUIRE_MESSAGE(appended, appended.error());
  return *appended;
}

void process(store::Store& store) {
  auto processing = store.open_processing();
  BOOST_REQUIRE_MESSAGE(processing, processing.error());
  auto processor = processor::Processor::create(std::move(*processing));
  BOOST_REQUIRE_MESSAGE(processor, processor.error());
  auto done = (*processor)->run_until_caught_up(nullptr);
  BOOST_REQUIRE_MESSAGE(done, done.error());
}

std::vector<store::OutboxEntry> entries_of(store::Outbox& outbox, const std::string& destination) {
  store::OutboxSelection selection;
  selection.destination = destination;
  auto listed = outbox.list(selection);
  BOOST_REQUIRE_MESSAGE(listed, listed.error());
  return *listed;
}

std::unique_ptr<store::Outbox> open_outbox(const std::string& path) {
  auto outbox = store::open_outbox(path);
  BOOST_REQUIRE_MESSAGE(outbox, outbox.error());
  return std::move(*outbox);
}

}  // namespace

BOOST_AUTO_TEST_CASE(changes_become_entries_with_their_user_and_resource) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto opened = open_with(path, both_modes());
  append(*opened.inbox, {example_delivery("m1", "summary-sleep.json"), example_delivery("m2", "timeseries-heartrate.json"),
                         example_delivery("m3", "connection-created.json")});
  // Nothing for `changes` before the processor applied them.
  auto outbox = open_outbox(path);
  BOOST_TEST(entries_of(*outbox, "backend").empty());
  process(*opened.store);

  // One entry per change-feed row, in the feed's order, copying it.
  const auto entries = entries_of(*outbox, "backend");
  BOOST_REQUIRE_EQUAL(static_cast<int64_t>(entries.size()), test::query_int(path, "SELECT count(*) FROM changes"));
  std::map<std::string, const store::OutboxEntry*> by_table;
  for (const auto& e : entries) {
    BOOST_TEST(e.kind == "change");
    BOOST_TEST(e.state == "pending");
    BOOST_TEST(e.attempts == 0);
    by_table[e.table_name + " " + std::to_string(e.seq)] = &e;
  }
  const store::OutboxEntry* sleep = by_table.at("summaries 1");
  BOOST_TEST(sleep->row_key.starts_with("sleep/"));
  BOOST_TEST((sleep->event_type == std::optional<std::string>("daily.data.sleep.created")));
  BOOST_TEST((sleep->user_id == std::optional<std::string>(kSleepUser)));
  BOOST_TEST((sleep->order_key == std::optional<std::string>(std::string(kSleepUser) + "/sleep")));
  const store::OutboxEntry* samples = by_table.at("samples 2");
  BOOST_TEST((samples->order_key == std::optional<std::string>(std::string(kHeartrateUser) + "/heartrate")));
  BOOST_TEST(samples->row_count == 3);
  BOOST_TEST(samples->from_ms.has_value());
  BOOST_TEST(samples->to_ms.has_value());
  const store::OutboxEntry* connection = by_table.at("connections 3");
  BOOST_TEST(connection->order_key.value_or("").ends_with("/connections"));
  BOOST_TEST((by_table.at("users 1")->order_key == std::optional<std::string>(std::string(kSleepUser) + "/users")));

  // Applying again (a rebuild's reset) is not this store's forwarding: nothing is added
  // twice by the same step, and ids grow.
  for (size_t i = 1; i < entries.size(); ++i) BOOST_TEST(entries[i].outbox_id > entries[i - 1].outbox_id);
}

BOOST_AUTO_TEST_CASE(a_long_step_gets_an_entry_for_every_change) {
  // Hundreds of changes in one step: the change feed writes them in several inserts during
  // the step, and each of them becomes an entry.
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto opened = open_with(path, both_modes());
  std::vector<store::NewDelivery> many;
  for (int i = 0; i < 150; ++i) {
    store::NewDelivery d = example_delivery("m" + std::to_string(i), "summary-sleep.json");
    for (const auto& [from, to] : {std::pair<std::string, std::string>{kSleepUser, "user-" + std::to_string(i)},
                                   std::pair<std::string, std::string>{kSleepId, "sleep-" + std::to_string(i)}}) {
      for (size_t at = d.body.find(from); at != std::string::npos; at = d.body.find(from, at + to.size())) {
        d.body.replace(at, from.size(), to);
      }
    }
    many.push_back(std::move(d));
  }
  append(*opened.inbox, many);
  process(*opened.store);
  BOOST_TEST(test::query_int(path, "SELECT count(*) FROM changes") >= 300);
  BOOST_TEST(test::query_int(path, "SELECT count(*) FROM outbox WHERE kind = 'change'") ==
             test::query_int(path, "SELECT count(*) FROM changes"));
  BOOST_TEST(test::query_int(path, "SELECT count(DISTINCT order_key) FROM outbox WHERE kind = 'change'") == 300);
}

BOOST_AUTO_TEST_CASE(deliveries_become_entries_at_ingest_filtered_by_event_globs) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto opened = open_with(path, both_modes());
  append(*opened.inbox, {example_delivery("m1", "summary-sleep.json"), example_delivery("m2", "timeseries-heartrate.json"),
                         example_delivery("m3", "lab-order.json")});
  // A redelivery is a duplicate: not stored again, not forwarded again.
  const auto again = append(*opened.inbox, {example_delivery("m1", "summary-sleep.json")});
  BOOST_TEST((again[0].status == store::AppendStatus::duplicate));

  auto outbox = open_outbox(path);
  const auto entries = entries_of(*outbox, "raw-sleep");
  BOOST_REQUIRE_EQUAL(entries.size(), 2u);  // the heartrate delivery matches no glob
  BOOST_TEST(entries[0].kind == "delivery");
  BOOST_TEST(entries[0].row_key == "m1");  // the message id: the forwarded webhook-id
  BOOST_TEST(entries[0].seq == 1);
  BOOST_TEST((entries[0].order_key == std::optional<std::string>(std::string(kSleepUser) + "/daily.data.sleep")));
  BOOST_TEST(entries[1].row_key == "m3");
  BOOST_TEST(entries[1].order_key.value_or("").ends_with("/labtest.order"));
  // A body that looks like JSON but is not UTF-8 (stored invalid) is no JSON a backend could
  // take: no entry (attack, stop 76: SQLite's json_valid() took it).
  store::NewDelivery not_utf8 = example_delivery("m4", "summary-sleep.json");
  not_utf8.body.insert(not_utf8.body.rfind('}'), ",\"note\":\"\xff\xfe\"");
  // Nor one with a NUL byte after the object (json_valid() stops reading there).
  store::NewDelivery after_nul = example_delivery("m5", "summary-sleep.json");
  after_nul.body += std::string("\0 not json {{{", 15);
  append(*opened.inbox, {not_utf8, after_nul});
  BOOST_TEST(entries_of(*outbox, "raw-sleep").size() == 2u);
  // Without rules the store writes no entries (rebuild, offline replay).
  auto plain = open_with(dir.file("plain.db"), {});
  append(*plain.inbox, {example_delivery("m1", "summary-sleep.json")});
  process(*plain.store);
  BOOST_TEST(test::query_int(dir.file("plain.db"), "SELECT count(*) FROM outbox") == 0);
}

// Decision 057: while a destination's sender is behind, it makes the entries itself, from
// the change feed and the inbox (take_over(), catch_up()), and the writer makes none; once
// it has caught up it hands the making back. Every change and every matching delivery has
// exactly one entry, in order, whoever made it.
BOOST_AUTO_TEST_CASE(the_sender_takes_the_making_over_and_hands_it_back_without_a_gap_or_a_repeat) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto opened = open_with(path, both_modes());
  auto outbox = open_outbox(path);
  int next = 0;
  const auto deliver = [&](int count) {  // sleep summaries of new users, applied
    std::vector<store::NewDelivery> batch;
    for (int i = 0; i < count; ++i, ++next) {
      store::NewDelivery d = example_delivery("m" + std::to_string(next), "summary-sleep.json");
      const std::string user = "0a0a0a0a-0000-4000-8000-" + std::to_string(100000000000 + next);
      for (size_t at = d.body.find(kSleepUser); at != std::string::npos; at = d.body.find(kSleepUser, at)) {
        d.body.replace(at, std::string_view(kSleepUser).size(), user);
      }
      batch.push_back(std::move(d));
    }
    append(*opened.inbox, batch);
    process(*opened.store);
  };
  const auto entries = [&] { return test::query_int(path, "SELECT count(*) FROM outbox"); };
  deliver(3);
  const int64_t by_writer = entries();
  BOOST_TEST(by_writer == 3 * 3);  // per delivery: its summary and its user, and the delivery

  for (const auto& rule : both_modes()) BOOST_REQUIRE(outbox->take_over(rule));
  deliver(5);
  BOOST_TEST(entries() == by_writer);  // the writer made none
  for (const auto& rule : both_modes()) {
    const int64_t per_delivery = rule.mode == store::ForwardMode::changes ? 2 : 1;
    for (int64_t left = 5; left > 0;) {
      auto made = outbox->catch_up(rule, 2, false);  // two deliveries at a time
      BOOST_REQUIRE_MESSAGE(made, made.error());
      BOOST_TEST(!made->by_writer);
      BOOST_TEST(made->entries == per_delivery * std::min<int64_t>(left, 2));
      left -= std::min<int64_t>(left, 2);
      BOOST_REQUIRE_EQUAL(made->more, left > 0);
    }
  }
  BOOST_TEST(entries() == 8 * 3);
  deliver(2);
  BOOST_TEST(entries() == 8 * 3);  // still the sender's
  for (const auto& rule : both_modes()) {
    auto made = outbox->catch_up(rule, 100, true);  // caught up: handed back
    BOOST_REQUIRE_MESSAGE(made, made.error());
    BOOST_TEST(made->by_writer);
    BOOST_TEST(!made->more);
    made = outbox->catch_up(rule, 100, true);
    BOOST_REQUIRE(made);
    BOOST_TEST((made->by_writer && made->entries == 0));
  }
  BOOST_TEST(entries() == 10 * 3);
  deliver(4);
  BOOST_TEST(entries() == 14 * 3);  // the writer's again

  // One entry per change, in the feed's order; one per delivery, in the inbox's.
  BOOST_TEST(test::query_text(path, "SELECT group_concat(seq || ' ' || table_name || ' ' || row_key, ',') FROM "
                                    "(SELECT * FROM outbox WHERE destination = 'backend' ORDER BY outbox_id)") ==
             test::query_text(path, "SELECT group_concat(seq || ' ' || table_name || ' ' || row_key, ',') FROM "
                                    "(SELECT * FROM changes ORDER BY change_id)"));
  BOOST_TEST(test::query_text(path, "SELECT group_concat(row_key, ',') FROM "
                                    "(SELECT * FROM outbox WHERE destination = 'raw-sleep' ORDER BY outbox_id)") ==
             test::query_text(path, "SELECT group_concat(message_id, ',') FROM (SELECT * FROM inbox ORDER BY seq)"));
}

// Decision 057, under attack: deliveries waiting for the sender, far behind, while
// [retention] body_days removes their bodies. Each still gets its entry, with its user, so
// that it fails for good with the reason when it is sent (docs/forwarding.md), instead of
// vanishing unseen; the sender's figures count what waits meanwhile.
BOOST_AUTO_TEST_CASE(a_delivery_whose_body_retention_removed_meanwhile_still_gets_its_entry) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto opened = open_with(path, both_modes());
  auto outbox = open_outbox(path);
  const store::ForwardRule raw = both_modes().at(1);
  BOOST_REQUIRE(outbox->take_over(raw));
  append(*opened.inbox, {example_delivery("m1", "summary-sleep.json"), example_delivery("m2", "summary-sleep.json")});
  process(*opened.store);
  auto figures = outbox->figures();
  BOOST_REQUIRE(figures);
  const auto raw_figures = std::find_if(figures->begin(), figures->end(), [](const auto& f) { return f.destination == "raw-sleep"; });
  BOOST_REQUIRE(raw_figures != figures->end());
  BOOST_TEST(raw_figures->unmade_deliveries == 2);
  BOOST_TEST(raw_figures->pending == 0);
  auto retention = opened.store->open_body_retention();
  BOOST_REQUIRE_MESSAGE(retention, retention.error());
  auto removed = (*retention)->remove_bodies(INT64_MAX, 1, 1'800'000'000'000);
  BOOST_REQUIRE_MESSAGE(removed, removed.error());
  BOOST_REQUIRE_EQUAL(test::query_int(path, "SELECT count(*) FROM removed_bodies"), 1);

  auto made = outbox->catch_up(raw, 100, false);
  BOOST_REQUIRE_MESSAGE(made, made.error());
  BOOST_TEST(made->entries == 2);
  const auto entries = entries_of(*outbox, "raw-sleep");
  BOOST_REQUIRE_EQUAL(entries.size(), 2u);
  for (const auto& e : entries) BOOST_TEST((e.user_id == std::optional<std::string>(kSleepUser)), e.row_key);
}

// Decision 057, under attack: what the store took while no `serve` forwarded to a
// destination (an offline replay, a rebuild, a time the destination was not configured)
// gets no entries when `serve` starts with it again, as before positions were kept: the
// writer's position starts at the newest delivery, not where it was left.
BOOST_AUTO_TEST_CASE(what_was_stored_while_nothing_forwarded_gets_no_entries_later) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  {
    auto serving = open_with(path, both_modes());
    append(*serving.inbox, {example_delivery("m1", "summary-sleep.json")});
    process(*serving.store);
  }
  {
    auto offline = open_with(path, {});
    append(*offline.inbox, {example_delivery("m2", "summary-sleep.json"), example_delivery("m3", "lab-order.json")});
    process(*offline.store);
  }
  auto serving = open_with(path, both_modes());
  append(*serving.inbox, {example_delivery("m4", "lab-order.json")});
  process(*serving.store);
  BOOST_TEST(test::query_text(path, "SELECT group_concat(row_key, ',') FROM (SELECT row_key FROM outbox WHERE "
                                    "destination = 'raw-sleep' ORDER BY outbox_id)") == "m1,m4");
  BOOST_TEST(test::query_text(path, "SELECT group_concat(seq, ',') FROM (SELECT DISTINCT seq FROM outbox WHERE "
                                    "destination = 'backend' ORDER BY seq)") ==
             "1,4");
}

// Decision 084, found by a black-box pass: what an offline `replay --database` stores is
// never forwarded. Its deliveries come after a sender-made position's backlog, and the
// sender, making the backlog, made theirs too (a writer-made position moves past them when
// `serve` starts). So the offline replay opens the store only while the writer makes every
// destination's entries, and says why otherwise; another command is not refused.
BOOST_AUTO_TEST_CASE(an_offline_replay_is_refused_while_a_sender_makes_the_entries) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  {
    auto serving = open_with(path, both_modes());
    append(*serving.inbox, {example_delivery("m1", "summary-sleep.json")});
    process(*serving.store);
  }
  store::StoreOptions offline;
  offline.refuse_while_sender_makes_entries = true;
  {
    auto opened = store::open_store(path, offline);  // the writer makes them: nothing to refuse
    BOOST_REQUIRE_MESSAGE(opened, opened.error());
  }
  auto outbox = open_outbox(path);
  BOOST_REQUIRE(outbox->take_over(both_modes().at(1)));
  BOOST_REQUIRE_EQUAL(test::query_int(path, "SELECT count(*) FROM forward_positions WHERE writer_makes = 0"), 1);
  auto refused = store::open_store(path, offline);
  BOOST_REQUIRE(!refused);
  BOOST_TEST(refused.error().find("an offline replay never does") != std::string::npos, refused.error());
  auto other = store::open_store(path, store::StoreOptions{});
  BOOST_REQUIRE_MESSAGE(other, other.error());
}

// Decision 057, under attack (round 2): a rebuild interrupted half-way leaves applied_seq
// behind what was forwarded; `serve` applies those deliveries again, and must not make their
// entries again (a rebuild adds no entries). A destination no longer configured loses its
// position: nothing waits for it any more (migrate would otherwise be refused for ever).
BOOST_AUTO_TEST_CASE(an_interrupted_rebuild_repeats_no_entry_and_a_removed_destination_leaves_nothing) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  {
    auto serving = open_with(path, both_modes());
    append(*serving.inbox, {example_delivery("m1", "summary-sleep.json"), example_delivery("m2", "lab-order.json"),
                            example_delivery("m3", "summary-sleep.json")});
    process(*serving.store);
  }
  const int64_t made = test::query_int(path, "SELECT count(*) FROM outbox");
  BOOST_REQUIRE(made > 0);
  {
    auto db = store::open_for_writing(path, {});
    BOOST_REQUIRE_MESSAGE(db, db.error());
    BOOST_REQUIRE(db->exec("UPDATE processor_state SET applied_seq = 1"));  // as an interrupted rebuild leaves it
    BOOST_REQUIRE(db->exec("INSERT INTO forward_positions (destination, mode, after_seq, writer_makes) VALUES "
                           "('gone', 'changes', 0, 0), ('backend', 'deliveries', 0, 0)"));
  }
  auto serving = open_with(path, both_modes());
  process(*serving.store);
  BOOST_TEST(test::query_int(path, "SELECT applied_seq FROM processor_state") == 3);
  BOOST_TEST(test::query_int(path, "SELECT count(*) FROM outbox") == made);
  BOOST_TEST(test::query_text(path, "SELECT group_concat(destination || ' ' || mode, ',') FROM (SELECT * FROM "
                                    "forward_positions ORDER BY destination)") == "backend changes,raw-sleep deliveries");
}

// Decision 057, under attack: purge-user keeps an erased newest delivery's seq taken with a
// placeholder recorded as a removed body of 0 bytes. The sender, catching up, makes no
// entry for it (it is no delivery of the service's), while a body retention removed still
// gets one.
BOOST_AUTO_TEST_CASE(an_erased_deliverys_placeholder_gets_no_entry) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto opened = open_with(path, both_modes());
  auto outbox = open_outbox(path);
  const store::ForwardRule all{.destination = "all", .mode = store::ForwardMode::deliveries, .events = {}};
  auto with_all = open_with(path, {all});  // positions for "all" too
  BOOST_REQUIRE(outbox->take_over(all));
  append(*opened.inbox, {example_delivery("m1", "summary-sleep.json"), example_delivery("m2", "summary-sleep.json")});
  process(*opened.store);
  auto erasure = store::open_erasure(path, 1000);
  BOOST_REQUIRE_MESSAGE(erasure, erasure.error());
  auto erased = (*erasure)->erase(kSleepUser, 6000);
  BOOST_REQUIRE_MESSAGE(erased, erased.error());
  BOOST_REQUIRE_EQUAL(test::query_int(path, "SELECT count(*) FROM inbox WHERE message_id LIKE ' erased:%'"), 1);
  auto made = outbox->catch_up(all, 100, false);
  BOOST_REQUIRE_MESSAGE(made, made.error());
  BOOST_TEST(made->entries == 0);
  BOOST_TEST(test::query_int(path, "SELECT count(*) FROM outbox WHERE destination = 'all'") == 0);
}

BOOST_AUTO_TEST_CASE(sender_outcomes_and_requeue_keep_a_post_whole) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto opened = open_with(path, both_modes());
  append(*opened.inbox, {example_delivery("m1", "summary-sleep.json"), example_delivery("m2", "timeseries-heartrate.json"),
                         example_delivery("m3", "connection-created.json")});
  process(*opened.store);
  auto outbox = open_outbox(path);
  auto entries = entries_of(*outbox, "backend");
  BOOST_REQUIRE_GE(entries.size(), 5u);
  const int64_t a = entries[0].outbox_id, b = entries[1].outbox_id, c = entries[2].outbox_id;

  // a and b go out as one POST (pinned to it first), fail, and wait for their retry.
  const store::PostPin pin{a, {a, b}, {}};
  BOOST_REQUIRE(outbox->pin(std::span(&pin, 1)));
  BOOST_REQUIRE(outbox->retry_later(std::vector<int64_t>{a, b}, 12345, 503, "HTTP 503: busy"));
  BOOST_REQUIRE(outbox->dead(std::vector<int64_t>{c}, 410, "HTTP 410: gone"));
  auto first = outbox->find(a);
  BOOST_REQUIRE(first && *first);
  BOOST_TEST((*first)->attempts == 1);
  BOOST_TEST((*first)->next_attempt_at_ms == 12345);
  BOOST_TEST(((*first)->post_id == std::optional<int64_t>(a)));
  BOOST_TEST(((*first)->last_status == std::optional<int64_t>(503)));
  BOOST_TEST(((*first)->last_error == std::optional<std::string>("HTTP 503: busy")));
  auto post = outbox->post_entries(a);
  BOOST_REQUIRE(post);
  BOOST_TEST(post->size() == 2u);

  // Sent entries are gone; ids are never handed out again (AUTOINCREMENT).
  const int64_t newest = entries.back().outbox_id;
  std::vector<int64_t> rest;
  for (size_t i = 3; i < entries.size(); ++i) rest.push_back(entries[i].outbox_id);
  BOOST_REQUIRE(outbox->sent(rest));
  append(*opened.inbox, {example_delivery("m4", "summary-workouts.json")});
  process(*opened.store);
  entries = entries_of(*outbox, "backend");
  BOOST_TEST(entries.back().outbox_id > newest);

  auto figures = outbox->figures();
  BOOST_REQUIRE(figures);
  const auto backend = std::find_if(figures->begin(), figures->end(), [](const auto& f) { return f.destination == "backend"; });
  BOOST_REQUIRE(backend != figures->end());
  BOOST_TEST(backend->dead == 1);
  BOOST_TEST(backend->pending == static_cast<int64_t>(entries.size()) - 1);

  // requeue of one entry takes its whole POST: a POST goes out again with the same
  // entries, under its id, or not at all.
  store::OutboxSelection just_b;
  just_b.outbox_id = b;
  auto requeued = outbox->requeue(just_b, 700);
  BOOST_REQUIRE(requeued);
  BOOST_TEST(*requeued == 2);
  for (const int64_t id : {a, b}) {
    auto e = outbox->find(id);
    BOOST_TEST((*e)->attempts == 0);
    BOOST_TEST(((*e)->post_id == std::optional<int64_t>(a)));
    BOOST_TEST(!(*e)->head.has_value());  // the sender marks it again
  }
  // requeue --dead: pending, due now, attempts 0.
  store::OutboxSelection dead;
  dead.state = "dead";
  requeued = outbox->requeue(dead, 777);
  BOOST_REQUIRE(requeued);
  BOOST_TEST(*requeued == 1);
  auto back = outbox->find(c);
  BOOST_TEST((*back)->state == "pending");
  BOOST_TEST((*back)->attempts == 0);
  BOOST_TEST((*back)->next_attempt_at_ms == 777);
  BOOST_TEST((*back)->created_at_ms == 777);  // max_age counts from the requeue
}

BOOST_AUTO_TEST_CASE(a_keys_next_entry_becomes_its_head_whoever_takes_the_first) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto writer = store::open_for_writing(path, {});
  BOOST_REQUIRE(writer);
  // Six entries of key k, one of key j.
  BOOST_REQUIRE(writer->exec(
      "INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, order_key, created_at, "
      "next_attempt_at) VALUES (1, 'd', 'change', 1, 't', 'r1', 'insert', 'k', 0, 0), "
      "(2, 'd', 'change', 2, 't', 'r2', 'insert', 'k', 0, 0), (3, 'd', 'change', 3, 't', 'r3', 'insert', 'j', 0, 0), "
      "(4, 'd', 'change', 4, 't', 'r4', 'insert', 'k', 0, 0), (5, 'd', 'change', 5, 't', 'r5', 'insert', 'k', 0, 0), "
      "(6, 'd', 'change', 6, 't', 'r6', 'insert', 'k', 0, 0), (7, 'd', 'change', 7, 't', 'r7', 'insert', 'k', 0, 0)"));
  auto outbox = store::open_sqlite_outbox(path, store::OutboxUse::sender);
  BOOST_REQUIRE(outbox);
  auto marked = (*outbox)->classify("d", true, 100);
  BOOST_REQUIRE(marked);
  BOOST_TEST(*marked == 7);
  const std::string heads = "SELECT group_concat(outbox_id) FROM (SELECT outbox_id FROM outbox WHERE head = 1 ORDER BY 1)";
  auto heads_now = [&] {
    auto stmt = writer->prepare(heads);
    BOOST_REQUIRE(stmt);
    std::string out;
    BOOST_REQUIRE(stmt->first_row([&](const sqlite::Statement& row) { out = std::string(row.column_text(0)); }));
    return out;
  };
  BOOST_TEST(heads_now() == "1,3");
  // Sent: the next one (two at once: the first one left).
  BOOST_REQUIRE((*outbox)->sent(std::vector<int64_t>{1, 2}));
  BOOST_TEST(heads_now() == "3,4");
  // Dead.
  BOOST_REQUIRE((*outbox)->dead(std::vector<int64_t>{4}, 400, "HTTP 400"));
  BOOST_TEST(heads_now() == "3,5");
  // Deleted by anyone else (an erasure).
  BOOST_REQUIRE(writer->exec("DELETE FROM outbox WHERE outbox_id = 5"));
  BOOST_TEST(heads_now() == "3,6");
  // Only the sender's marks are read: without `ordered` every entry is a head.
  BOOST_REQUIRE(writer->exec("UPDATE outbox SET head = NULL WHERE state = 'pending'"));
  BOOST_REQUIRE((*outbox)->classify("d", false, 100));
  BOOST_TEST(heads_now() == "3,6,7");
}

// 30,000 pending entries of `destination` and 100 keys, from delivery first_seq + 1 on, each
// row ~300 bytes: ~9 MB of table. Marked: the first of each key its head, the rest not heads
// (a sender has looked); else unmarked.
void fill_backlog(const std::string& path, const std::string& destination, int64_t first_seq, bool marked) {
  auto writer = store::open_for_writing(path, {});
  BOOST_REQUIRE_MESSAGE(writer, writer.error());
  BOOST_REQUIRE(writer->exec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000) "
      "INSERT INTO outbox (destination, kind, seq, table_name, row_key, op, order_key, created_at, next_attempt_at, "
      "last_error, head) SELECT '" + destination + "', 'change', " + std::to_string(first_seq) +
      " + i, 'sleep', 'r' || i, 'insert', 'u/' || (i % 100), 0, 0, printf('%.250c', 'x'), " +
      (marked ? "i <= 100" : "NULL") + " FROM n"));
}

// A look of the sender (classify() ten times a second) over a backlog of entries it has
// already marked must read a few index pages, not the table row of every pending entry:
// SQLite's planner took the index that matches destination and state, then read each
// row's `head` from the table (180,000 pending entries: most of a core, found by profiling
// ingest with forwarding to a slow backend).
BOOST_AUTO_TEST_CASE(a_look_over_a_backlog_reads_what_it_finds_not_the_backlog) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  fill_backlog(path, "d", 0, true);
  auto outbox = store::open_sqlite_outbox(path, store::OutboxUse::sender);
  BOOST_REQUIRE_MESSAGE(outbox, outbox.error());
  const int64_t read = test::bytes_read_by([&] {
    auto marked = (*outbox)->classify("d", true, 4096);
    BOOST_REQUIRE_MESSAGE(marked, marked.error());
    BOOST_TEST(*marked == 0);
  });
  BOOST_TEST_MESSAGE("one look read " << read << " bytes");
  BOOST_TEST(read < 1'000'000);  // the whole table is ~9 MB
}

// `forward requeue ID` finds its entry by the primary key: the selection's other terms
// made it a walk of the whole outbox from the first id (a no-context review).
BOOST_AUTO_TEST_CASE(a_requeue_of_one_entry_reads_that_entry_not_the_outbox) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  fill_backlog(path, "d", 0, true);
  auto outbox = store::open_sqlite_outbox(path, store::OutboxUse::admin);
  BOOST_REQUIRE_MESSAGE(outbox, outbox.error());
  const store::OutboxSelection one{.outbox_id = 15000, .destination = std::nullopt, .state = std::nullopt,
                                   .after_id = 0, .limit = 1, .seq = std::nullopt};
  const int64_t read = test::bytes_read_by([&] {
    auto requeued = (*outbox)->requeue(one, 700);
    BOOST_REQUIRE_MESSAGE(requeued, requeued.error());
    BOOST_TEST(*requeued == 1);
  });
  BOOST_TEST_MESSAGE("a requeue of one entry read " << read << " bytes");
  BOOST_TEST(read < 1'000'000);  // the whole table is ~9 MB
  auto entry = (*outbox)->find(15000);
  BOOST_REQUIRE(entry.ok() && entry->has_value());
  BOOST_TEST((*entry)->created_at_ms == 700);
}

// Two requeues of the dead entries at once (the command and the console): the second read
// them while they were dead, then waited for the write lock while the first re-queued them
// and the sender marked the head and pinned its POST. The second must leave them alone, not
// reset that head under its POST in flight (a key whose head is deleted unmarked is never
// sent again; a no-context review).
BOOST_AUTO_TEST_CASE(a_requeue_leaves_alone_what_another_requeue_sent_out_meanwhile) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto writer = store::open_for_writing(path, {});
  BOOST_REQUIRE_MESSAGE(writer, writer.error());
  BOOST_REQUIRE(writer->exec(
      "INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, order_key, state, attempts, "
      "created_at, next_attempt_at, last_error) VALUES "
      "(1, 'd', 'change', 1, 'sleep', 'a', 'insert', 'u/sleep', 'dead', 50, 0, 0, 'HTTP 400'), "
      "(2, 'd', 'change', 2, 'sleep', 'b', 'insert', 'u/sleep', 'dead', 50, 0, 0, 'HTTP 400')"));
  auto outbox = store::open_sqlite_outbox(path, store::OutboxUse::admin);
  BOOST_REQUIRE_MESSAGE(outbox, outbox.error());
  BOOST_REQUIRE(writer->exec("BEGIN IMMEDIATE"));  // the first requeue and the sender, below
  Result<int64_t> second = int64_t{-1};
  const store::OutboxSelection dead{.outbox_id = std::nullopt, .destination = "d", .state = "dead", .after_id = 0,
                                    .limit = 1000, .seq = std::nullopt};
  std::thread racing([&] { second = (*outbox)->requeue(dead, 900); });
  // Ordering only (a weaker test if the thread is slower, never a false failure): it has
  // read the dead entries and waits for the write lock by then.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  BOOST_REQUIRE(writer->exec("UPDATE outbox SET state = 'pending', attempts = 0, created_at = 800, head = "
                             "CASE outbox_id WHEN 1 THEN 1 ELSE 0 END, post_id = 1 WHERE outbox_id = 1"));
  BOOST_REQUIRE(writer->exec("UPDATE outbox SET state = 'pending', attempts = 0, created_at = 800, head = 0 "
                             "WHERE outbox_id = 2"));
  BOOST_REQUIRE(writer->exec("COMMIT"));
  racing.join();
  BOOST_REQUIRE_MESSAGE(second, second.error());
  BOOST_TEST(*second == 0);
  auto head = (*outbox)->find(1);
  BOOST_REQUIRE(head.ok() && head->has_value());
  BOOST_TEST(((*head)->head && *(*head)->head));  // still marked: its POST may be out
  BOOST_TEST((*head)->created_at_ms == 800);
}

// A step of a drop over the budget reads the entries it drops: it held the write lock while
// SQLite read every pending entry of the destination through outbox_keys and sorted them
// all (a review of the store's query plans), and a walk of the primary key instead would
// read every older entry of the other destinations (a paused one's backlog: a no-context
// review of that walk). Here another destination holds 30,000 older entries.
BOOST_AUTO_TEST_CASE(a_drop_step_reads_the_entries_it_drops_not_the_backlogs) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  fill_backlog(path, "paused", 0, false);
  fill_backlog(path, "d", 30000, true);  // after them
  auto outbox = store::open_sqlite_outbox(path, store::OutboxUse::sender);
  BOOST_REQUIRE_MESSAGE(outbox, outbox.error());
  const store::ForwardRule rule{.destination = "d", .mode = store::ForwardMode::changes, .events = {}};
  const int64_t read = test::bytes_read_by([&] {
    auto dropped = (*outbox)->drop_oldest(rule, 1000, {}, 0);
    BOOST_REQUIRE_MESSAGE(dropped, dropped.error());
    BOOST_TEST(dropped->entries == 1000);
  });
  BOOST_TEST_MESSAGE("one drop step read " << read << " bytes");
  BOOST_TEST(read < 3'000'000);  // each destination's entries are ~9 MB
  auto left = (*outbox)->figures();
  BOOST_REQUIRE(left);
  for (const auto& f : *left) BOOST_TEST(f.pending == 30000 - (f.destination == "d" ? 1000 : 0));
}

BOOST_AUTO_TEST_CASE(the_budget_drops_the_oldest_as_seq_ranges_that_requeue_makes_again) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const store::ForwardRule raw{.destination = "raw", .mode = store::ForwardMode::deliveries, .events = {}};
  auto opened = open_with(path, {raw});
  std::vector<store::NewDelivery> deliveries;
  for (int i = 1; i <= 7; ++i) deliveries.push_back(example_delivery("m" + std::to_string(i), "summary-sleep.json"));
  append(*opened.inbox, deliveries);
  auto outbox = open_outbox(path);
  auto entries = entries_of(*outbox, "raw");
  BOOST_REQUIRE_EQUAL(entries.size(), 7u);
  // m3 was sent; m6 is in flight; m4 and m5 went out together as one POST.
  BOOST_REQUIRE(outbox->sent(std::vector<int64_t>{entries[2].outbox_id}));
  const store::PostPin pin{entries[3].outbox_id, {entries[3].outbox_id, entries[4].outbox_id}, {}};
  BOOST_REQUIRE(outbox->pin(std::span(&pin, 1)));
  // The four oldest: m1, m2, m4 (and m5, its POST), not m6 (in flight).
  const std::vector<int64_t> in_flight{entries[5].outbox_id};
  auto dropped = outbox->drop_oldest(raw, 3, in_flight, 5000);
  BOOST_REQUIRE_MESSAGE(dropped, dropped.error());
  BOOST_TEST(dropped->entries == 4);
  BOOST_TEST(dropped->ranges == 2);  // m3 lies between m2 and m4, and was sent
  auto ranges = outbox->dropped(std::string("raw"));
  BOOST_REQUIRE(ranges);
  BOOST_REQUIRE_EQUAL(ranges->size(), 2u);
  BOOST_TEST(((*ranges)[0].first_seq == 1 && (*ranges)[0].last_seq == 2 && (*ranges)[0].entries == 2));
  BOOST_TEST(((*ranges)[1].first_seq == 4 && (*ranges)[1].last_seq == 5 && (*ranges)[1].entries == 2));
  BOOST_TEST((*ranges)[1].dropped_at_ms == 5000);
  auto figures = outbox->figures();
  BOOST_REQUIRE(figures);
  BOOST_TEST(figures->at(0).pending == 2);  // m6, m7
  BOOST_TEST(figures->at(0).dropped == 4);
  BOOST_TEST(figures->at(0).dropped_ranges == 2);
  // The next drop joins the last range when nothing could lie between.
  dropped = outbox->drop_oldest(raw, 1, {}, 6000);
  BOOST_REQUIRE(dropped);
  ranges = outbox->dropped(std::string("raw"));
  BOOST_REQUIRE_EQUAL(ranges->size(), 2u);
  BOOST_TEST(((*ranges)[1].first_seq == 4 && (*ranges)[1].last_seq == 6 && (*ranges)[1].entries == 3));

  // Retention removed m2's body: it cannot be made again, and says so.
  auto writer = store::open_for_writing(path, {});
  BOOST_REQUIRE(writer);
  BOOST_REQUIRE(writer->exec("UPDATE inbox SET body = x'' WHERE seq = 2"));
  BOOST_REQUIRE(writer->exec("INSERT INTO removed_bodies (seq, body_sha256, body_bytes, removed_at_ms) "
                             "VALUES (2, 'x', 1, 1)"));
  auto made = outbox->requeue_dropped(raw);
  BOOST_REQUIRE_MESSAGE(made, made.error());
  BOOST_TEST(made->ranges == 2);
  BOOST_TEST(made->dropped == 5);
  BOOST_TEST(made->recreated == 4);  // m1, m4, m5, m6: not m3 (sent), not m2 (no body)
  BOOST_TEST(made->not_recreated == 1);
  BOOST_TEST(outbox->dropped(std::string("raw"))->empty());
  std::set<std::string> keys;
  for (const auto& e : entries_of(*outbox, "raw")) keys.insert(e.row_key);
  BOOST_TEST((keys == std::set<std::string>{"m1", "m4", "m5", "m6", "m7"}));
}

// Issue 45, under attack: a backend that refuses one user for good while another user's
// deliveries go through. Each refused entry the budget drops is a range of its own (the
// other user's delivery between two of them was sent), and ranges count against the
// budget: they are merged, the oldest first, before they take more than a quarter of it,
// so the record stays bounded and the entries keep the rest. Nothing is lost: every
// refused entry is still waiting or counted in a range, and `forward requeue --dropped`
// makes them all again (and, of the merged ranges, what was sent between them).
BOOST_AUTO_TEST_CASE(the_record_of_drops_stays_within_its_share_of_the_budget) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const store::ForwardRule raw{.destination = "raw", .mode = store::ForwardMode::deliveries, .events = {}};
  auto opened = open_with(path, {raw});
  auto outbox = open_outbox(path);
  constexpr int64_t kBudget = 16 * 1024;  // 64 entries, or 256 ranges
  const int64_t max_ranges = forward::max_dropped_ranges(kBudget);
  BOOST_REQUIRE_EQUAL(max_ranges, 64);
  auto figures_of = [&] {
    auto all = outbox->figures();
    BOOST_REQUIRE(all);
    for (const auto& f : *all) {
      if (f.destination == "raw") return f;
    }
    return store::OutboxFigures{};
  };
  constexpr int kRounds = 400;
  int64_t merged = 0;
  for (int i = 0; i < kRounds; ++i) {
    auto refused = example_delivery("a-" + std::to_string(i), "summary-sleep.json");
    auto taken = example_delivery("b-" + std::to_string(i), "summary-workouts.json");
    append(*opened.inbox, {refused, taken});
    std::vector<int64_t> sent;
    for (const auto& e : entries_of(*outbox, "raw")) {
      if (e.row_key.starts_with("b-")) sent.push_back(e.outbox_id);
    }
    BOOST_REQUIRE(outbox->sent(sent));
    for (int steps = 0; steps < 10; ++steps) {
      auto step = forward::keep_within_budget(*outbox, raw, figures_of(), kBudget, {}, 1000 + i);
      BOOST_REQUIRE_MESSAGE(step, step.error());
      merged += step->ranges_merged;
      if (!step->more) break;
    }
    const store::OutboxFigures f = figures_of();
    // Within the budget, ranges at most their share (and the ranges of one step's drop).
    BOOST_TEST((f.pending + f.dead) * forward::kEntryBytes + f.dropped_ranges * forward::kRangeBytes <= kBudget + 64,
               "round " << i);
    BOOST_TEST(f.dropped_ranges <= max_ranges + 1, "round " << i);
  }
  BOOST_TEST(merged > 0);
  const store::OutboxFigures f = figures_of();
  // The entries were not crowded out: three quarters of the budget, less a range or two.
  BOOST_TEST(f.pending >= (kBudget - (max_ranges + 1) * forward::kRangeBytes) / forward::kEntryBytes - 1);
  BOOST_TEST(f.pending + f.dropped == kRounds);
  auto made = outbox->requeue_dropped(raw);
  BOOST_REQUIRE_MESSAGE(made, made.error());
  BOOST_TEST(made->not_recreated == 0);
  std::set<std::string> refused;
  for (const auto& e : entries_of(*outbox, "raw")) {
    if (e.row_key.starts_with("a-")) refused.insert(e.row_key);
  }
  BOOST_TEST(refused.size() == static_cast<size_t>(kRounds));
}

// What pinned POSTs keep of their changes (outbox.content: a dead POST keeps its rows to
// send the same bytes again) counts against max_outbox_mib: dead POSTs of large rows are
// dropped as the entries are, until what is kept fits.
BOOST_AUTO_TEST_CASE(the_contents_of_pinned_posts_count_against_the_budget) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const store::ForwardRule changes{.destination = "rows", .mode = store::ForwardMode::changes, .events = {}};
  {
    auto writer = store::open_for_writing(path, {});
    BOOST_REQUIRE_MESSAGE(writer, writer.error());
    BOOST_REQUIRE(writer->exec(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) "
        "INSERT INTO outbox (destination, kind, seq, table_name, row_key, op, order_key, created_at, next_attempt_at) "
        "SELECT 'rows', 'change', i, 'summaries', 'sleep/s' || i, 'upsert', 'u' || i || '/sleep', 0, 0 FROM n"));
  }
  auto outbox = open_outbox(path);
  std::vector<store::PostPin> pins;
  for (int64_t id = 1; id <= 100; ++id) pins.push_back({id, {id}, {std::string(4096, 'x')}});
  BOOST_REQUIRE(outbox->pin(pins));
  {
    auto writer = store::open_for_writing(path, {});
    BOOST_REQUIRE(writer->exec("UPDATE outbox SET state = 'dead'"));
  }
  constexpr int64_t kBudget = 128 * 1024;  // 100 entries fit (25 KiB); their 400 KiB of rows do not
  auto figures = outbox->figures();
  BOOST_REQUIRE(figures && figures->size() == 1u);
  BOOST_TEST(figures->front().content_bytes == 100 * 4096);
  for (int step = 0; step < 20; ++step) {
    figures = outbox->figures();
    BOOST_REQUIRE(figures && figures->size() == 1u);
    auto done = forward::keep_within_budget(*outbox, changes, figures->front(), kBudget, {}, 1000);
    BOOST_REQUIRE_MESSAGE(done, done.error());
    if (done->dropped.entries == 0) break;
  }
  figures = outbox->figures();
  BOOST_REQUIRE(figures && figures->size() == 1u);
  const store::OutboxFigures& f = figures->front();
  BOOST_TEST((f.pending + f.dead) * forward::kEntryBytes + f.content_bytes + f.dropped_ranges * forward::kRangeBytes <=
             kBudget);
  BOOST_TEST(f.dead > 0);  // what fits stays
  BOOST_TEST(f.dead + f.dropped == 100);
}

// A budget lowered under a large outbox is kept a step at a time, each step one short
// transaction of at most kDropsPerStep entries (the writer thread, whose commits give up
// after busy_timeout_ms, gets the lock in between), until what is left fits.
BOOST_AUTO_TEST_CASE(a_large_drop_goes_in_steps_of_one_short_transaction) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const store::ForwardRule raw{.destination = "raw", .mode = store::ForwardMode::deliveries, .events = {}};
  {
    auto writer = store::open_for_writing(path, {});
    BOOST_REQUIRE_MESSAGE(writer, writer.error());
    BOOST_REQUIRE(writer->exec(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12000) "
        "INSERT INTO outbox (destination, kind, seq, table_name, row_key, op, order_key, created_at, next_attempt_at) "
        "SELECT 'raw', 'delivery', i, 'deliveries', 'm' || i, 'insert', 'u/' || (i % 10), 0, 0 FROM n"));
  }
  auto outbox = open_outbox(path);
  constexpr int64_t kBudget = 1000 * forward::kEntryBytes;
  std::vector<int64_t> dropped;
  for (int step = 0; step < 10; ++step) {
    auto figures = outbox->figures();
    BOOST_REQUIRE(figures && figures->size() == 1u);
    auto done = forward::keep_within_budget(*outbox, raw, figures->front(), kBudget, {}, 1000);
    BOOST_REQUIRE_MESSAGE(done, done.error());
    dropped.push_back(done->dropped.entries);
    if (!done->more) break;
  }
  BOOST_TEST((dropped == std::vector<int64_t>{forward::kDropsPerStep, forward::kDropsPerStep, 12000 - 2 * 4096 - 999}));
  auto figures = outbox->figures();
  BOOST_REQUIRE(figures);
  BOOST_TEST(figures->front().pending == 999);  // and the one range (nothing lay between the drops)
  BOOST_TEST(figures->front().dropped_ranges == 1);
  BOOST_TEST(figures->front().dropped == 12000 - 999);
}

// Issue 45, under attack: `purge-user` after the budget dropped a user's entries. `forward
// requeue --dropped` makes again the other users' entries of the ranges, never the erased
// user's (their change-feed rows and their deliveries went with them), in either mode.
BOOST_AUTO_TEST_CASE(dropped_ranges_do_not_bring_back_an_erased_users_entries) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const std::string other = "0f0f0f0f-0000-4000-8000-00000000000f";
  auto opened = open_with(path, both_modes());
  auto other_sleep = example_delivery("m3", "summary-sleep.json");
  for (size_t at = other_sleep.body.find(kSleepUser); at != std::string::npos;
       at = other_sleep.body.find(kSleepUser, at)) {
    other_sleep.body.replace(at, std::string_view(kSleepUser).size(), other);
  }
  append(*opened.inbox, {example_delivery("m1", "summary-sleep.json"), example_delivery("m2", "timeseries-heartrate.json"),
                         other_sleep});
  process(*opened.store);
  auto outbox = open_outbox(path);
  const auto rules = both_modes();
  for (const auto& rule : rules) {
    auto dropped = outbox->drop_oldest(rule, 1000, {}, 5000);
    BOOST_REQUIRE_MESSAGE(dropped, dropped.error());
    BOOST_TEST(dropped->entries > 0, rule.destination);
  }
  BOOST_REQUIRE(entries_of(*outbox, "backend").empty());
  auto erasure = store::open_erasure(path, 1000);
  BOOST_REQUIRE_MESSAGE(erasure, erasure.error());
  auto erased = (*erasure)->erase(kSleepUser, 6000);
  BOOST_REQUIRE_MESSAGE(erased, erased.error());
  for (const auto& rule : rules) {
    auto made = outbox->requeue_dropped(rule);
    BOOST_REQUIRE_MESSAGE(made, made.error());
    BOOST_TEST(made->recreated > 0, rule.destination);
    BOOST_TEST(made->not_recreated > 0, rule.destination);  // the erased user's, counted
  }
  std::set<std::string> users;
  for (const char* destination : {"backend", "raw-sleep"}) {
    for (const auto& e : entries_of(*outbox, destination)) {
      users.insert(e.user_id.value_or("none"));
      BOOST_TEST(e.row_key.find(kSleepUser) == std::string::npos, e.row_key);
      BOOST_TEST(e.row_key != "m1");
    }
  }
  BOOST_TEST(!users.contains(kSleepUser));
  BOOST_TEST(users.contains(other));
  BOOST_TEST(users.contains(kHeartrateUser));
}

BOOST_AUTO_TEST_CASE(an_outbox_of_the_previous_version_is_carried_over) {
  // A database as the version before 010-outbox-posts.sql left it: a POST of two pinned
  // (batch_id), one entry that went out alone (attempts, no batch), one never sent, and
  // dropped rows.
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  {
    auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_write_create);
    BOOST_REQUIRE(db);
    BOOST_REQUIRE(db->exec("PRAGMA journal_mode = WAL"));
    const auto& all = store::migrations();
    for (size_t i = 0; i < all.size() && !all[i].name.ends_with("-outbox-posts"); ++i) {
      BOOST_REQUIRE_MESSAGE(db->exec(all[i].sql), all[i].name);
      BOOST_REQUIRE(db->exec("PRAGMA user_version = " + std::to_string(i + 1)));
    }
    BOOST_REQUIRE(db->exec(
        "INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, order_key, state, attempts, "
        "created_at, next_attempt_at, batch_id) VALUES "
        "(1, 'd', 'change', 1, 't', 'r1', 'insert', 'k', 'pending', 2, 0, 0, 1), "
        "(2, 'd', 'change', 1, 't', 'r2', 'insert', 'j', 'pending', 2, 0, 0, 1), "
        "(3, 'd', 'change', 2, 't', 'r3', 'insert', 'm', 'pending', 1, 0, 0, NULL), "
        "(4, 'd', 'change', 3, 't', 'r4', 'insert', 'm', 'pending', 0, 0, 0, NULL), "
        "(5, 'd', 'change', 4, 't', 'r5', 'insert', 'n', 'dropped', 0, 0, 0, NULL), "
        "(6, 'd', 'change', 7, 't', 'r6', 'insert', 'n', 'dropped', 0, 0, 0, NULL)"));
  }
  auto writer = store::open_for_writing(path, {});  // migrates
  BOOST_REQUIRE_MESSAGE(writer, writer.error());
  auto outbox = open_outbox(path);
  auto post_of = [&](int64_t id) { return outbox->find(id).value().value().post_id; };
  BOOST_TEST((post_of(1) == std::optional<int64_t>(1)));
  BOOST_TEST((post_of(2) == std::optional<int64_t>(1)));
  BOOST_TEST((post_of(3) == std::optional<int64_t>(3)));  // went out alone: pinned to itself
  BOOST_TEST(!post_of(4).has_value());
  BOOST_TEST(!outbox->find(5).value().has_value());
  auto ranges = outbox->dropped(std::string("d"));
  BOOST_REQUIRE(ranges);
  BOOST_REQUIRE_EQUAL(ranges->size(), 1u);
  BOOST_TEST(((*ranges)[0].first_seq == 4 && (*ranges)[0].last_seq == 7 && (*ranges)[0].entries == 2));
}

BOOST_AUTO_TEST_SUITE_END()
