// What the sender decides (forward/post_scheduler.h), on a real outbox, answer by answer:
// a POST is pinned before it goes out and retried with exactly its entries under its id
// (a single entry too), each entry counts its own attempts, the oldest entry's age decides
// when the POST ends, and a backend that cannot be reached pauses the destination.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <map>
#include <set>

#include "forward/post_scheduler.h"
#include "store/sqlite/database.h"
#include "store/sqlite/outbox/sqlite_outbox.h"
#include "tests/support/database_probe.h"
#include "tests/support/logged_by.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(post_scheduler_test)

using namespace hh;

namespace {

constexpr int64_t kStart = 1'700'000'000'000;

config::ForwardSettings scheduler_settings(int64_t batch) {
  config::ForwardSettings s;
  s.name = "backend";
  s.batch = batch;
  s.max_attempts = 4;
  s.max_age_s = 3600;
  s.backoff_initial_ms = 100;
  s.backoff_max_s = 1;
  return s;
}

struct Scheduled {
  test::TempDir dir;
  std::string path = dir.file("healthhook.db");
  sqlite::Connection writer = open_writer(path);
  std::unique_ptr<store::Outbox> outbox = open_sender(path);
  forward::DestinationMetrics metrics{"backend"};

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

  void add(int64_t id, const std::string& key, int64_t created_at, int64_t attempts = 0) {
    auto stmt = writer.prepare(
        "INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, order_key, attempts, "
        "created_at, next_attempt_at, user_id) VALUES (?1, 'backend', 'change', ?1, 'summaries', 'sleep/' || ?1, "
        "'insert', ?2, ?3, ?4, ?4, substr(?2, 1, instr(?2, '/') - 1))");  // the key's user
    BOOST_REQUIRE(stmt);
    stmt->bind(1, id).bind(2, std::string_view(key)).bind(3, attempts).bind(4, created_at);
    BOOST_REQUIRE(stmt->run());
  }

  // Deliveries first_seq..last_seq in the inbox, each a sleep of `user`, received at kStart.
  void deliver(int64_t first_seq, int64_t last_seq, const std::string& user) {
    BOOST_REQUIRE(writer.exec("BEGIN"));
    for (int64_t seq = first_seq; seq <= last_seq; ++seq) {
      auto stored = writer.exec("INSERT INTO inbox (seq, message_id, origin, received_at, event_type, headers, body) "
                                "VALUES (" + std::to_string(seq) + ", 'm" + std::to_string(seq) + "', 'webhook', " +
                                std::to_string(kStart) + ", 'daily.data.sleep.created', '{}', CAST('{\"user_id\":\"" +
                                user + "\"}' AS BLOB))");
      BOOST_REQUIRE_MESSAGE(stored, stored.error());
    }
    BOOST_REQUIRE(writer.exec("COMMIT"));
  }

  // The sender had taken the making of entries over before a restart: the whole inbox
  // waits for it.
  void taken_over_before_a_restart() {
    BOOST_REQUIRE(writer.exec("INSERT INTO forward_positions (destination, mode, after_seq, writer_makes) VALUES "
                              "('backend', 'deliveries', 0, 0)"));
  }

  store::OutboxEntry entry(int64_t id) {
    auto found = outbox->find(id);
    BOOST_REQUIRE(found && *found);
    return **found;
  }
};

std::vector<int64_t> ids_of(const forward::OutgoingPost& post) { return post.ids; }

forward::PostOutcome answered(unsigned status) {
  forward::PostOutcome outcome;
  outcome.status = status;
  if (status >= 300) outcome.error = "HTTP " + std::to_string(status);
  return outcome;
}

forward::PostOutcome timed_out() {
  forward::PostOutcome outcome;
  outcome.failure = "timeout";
  outcome.error = "no answer within timeout_ms";
  return outcome;
}

}  // namespace

// The sender takes the making of entries over at 16,384 waiting, or at a quarter of what a
// smaller max_outbox_mib holds (256 bytes an entry): a long outage on a small budget waits
// in the inbox instead of filling the budget and dropping entries.
BOOST_AUTO_TEST_CASE(the_entries_made_ahead_are_a_quarter_of_a_small_budget) {
  config::ForwardSettings settings;
  const auto made_ahead = [&](int64_t mib) {
    settings.max_outbox_mib = mib;
    return forward::PostScheduler::made_ahead_for(settings);
  };
  BOOST_TEST(made_ahead(1) == 1024);
  BOOST_TEST(made_ahead(4) == 4096);
  BOOST_TEST(made_ahead(16) == forward::PostScheduler::kMadeAhead);
  BOOST_TEST(made_ahead(1024) == forward::PostScheduler::kMadeAhead);  // the default budget
}

BOOST_AUTO_TEST_CASE(a_post_that_went_out_alone_is_retried_alone_under_its_id) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
  s.add(1, "a/sleep", kStart);
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  const forward::OutgoingPost first = look.posts.front();
  BOOST_TEST(first.webhook_id == "hhf_1");
  BOOST_TEST((s.entry(1).post_id == std::optional<int64_t>(1)));  // pinned before it went out
  // The backend applied it, but its answer never came; meanwhile a's next two arrive.
  scheduler.finished(first, timed_out(), kStart + 1000);
  s.add(2, "a/sleep", kStart + 500);
  s.add(3, "a/sleep", kStart + 600);
  look = scheduler.next_posts(kStart + 60'000, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST(look.posts.front().webhook_id == "hhf_1");
  BOOST_TEST(ids_of(look.posts.front()) == std::vector<int64_t>{1});
  scheduler.finished(look.posts.front(), answered(200), kStart + 61'000);
  // Then a's next ones, together, under a new id.
  look = scheduler.next_posts(kStart + 62'000, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST(look.posts.front().webhook_id == "hhf_2");
  BOOST_TEST((ids_of(look.posts.front()) == std::vector<int64_t>{2, 3}));
  BOOST_TEST(!s.outbox->find(1).value().has_value());  // deleted at this look
}

// A POST pinned before a crash cut its only attempt short has no content kept: after the
// restart its rows are read again (the documented exception), and then kept at its first
// failure like any other's. It read them again at every attempt: the same id carried the
// rows as they were at each retry.
BOOST_AUTO_TEST_CASE(a_post_cut_short_by_a_crash_keeps_what_its_next_attempt_carried) {
  Scheduled s;
  int version = 0;
  const auto renderer = [&version](std::span<const store::OutboxEntry* const> entries)
      -> Result<std::vector<std::string>> {
    ++version;
    return std::vector<std::string>(entries.size(), "rows as of read " + std::to_string(version));
  };
  s.add(1, "a/sleep", kStart);
  s.add(2, "a/sleep", kStart);
  {
    forward::PostScheduler before_the_crash(scheduler_settings(10), *s.outbox, s.metrics, 1);
    before_the_crash.render_contents_with(renderer);
    auto look = before_the_crash.next_posts(kStart, 1);
    BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
    BOOST_TEST(look.posts.front().webhook_id == "hhf_1");
  }  // killed with the POST in flight: pinned, its content not kept
  BOOST_TEST(!s.entry(1).content.has_value());
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 2);
  scheduler.render_contents_with(renderer);
  auto look = scheduler.next_posts(kStart + 10'000, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  const forward::OutgoingPost after_restart = look.posts.front();
  BOOST_TEST(after_restart.webhook_id == "hhf_1");
  BOOST_TEST((after_restart.entries.front().content == std::optional<std::string>("rows as of read 2")));
  scheduler.finished(after_restart, answered(500), kStart + 11'000);
  for (int attempt = 0; attempt < 2; ++attempt) {
    look = scheduler.next_posts(kStart + 60'000 * (attempt + 1), 1);
    BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
    BOOST_TEST(look.posts.front().webhook_id == "hhf_1");
    for (const auto& entry : look.posts.front().entries) {
      BOOST_TEST((entry.content == std::optional<std::string>("rows as of read 2")));
    }
    scheduler.finished(look.posts.front(), answered(500), kStart + 60'000 * (attempt + 1) + 1000);
  }
  BOOST_TEST(version == 2);
}

// A POST that carried two users' changes and failed is not sent again: its first user's
// changes form a POST of their own under an id never used ("hhf_1.1": an id names one
// content for ever), and the other user's go out in a POST of their own, which gets through
// while the backend goes on refusing the first (spec §10: a due entry is never held back by
// other users'). They stayed pinned beside the refused user's for as long as that POST lived.
BOOST_AUTO_TEST_CASE(a_failed_post_of_two_users_goes_on_with_its_first_and_frees_the_other) {
  Scheduled s;
  const auto renderer = [](std::span<const store::OutboxEntry* const> entries) -> Result<std::vector<std::string>> {
    std::vector<std::string> contents;
    for (const auto* e : entries) contents.push_back("change " + std::to_string(e->outbox_id));
    return contents;
  };
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
  scheduler.render_contents_with(renderer);
  s.add(1, "a/sleep", kStart);
  s.add(2, "b/sleep", kStart);
  s.add(3, "a/sleep", kStart);
  s.add(4, "b/sleep", kStart);
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST((ids_of(look.posts.front()) == std::vector<int64_t>{1, 2, 3, 4}));
  scheduler.finished(look.posts.front(), answered(500), kStart + 100);  // the backend refuses a's
  for (const int64_t id : {1, 3}) {
    BOOST_TEST((s.entry(id).post_id == std::optional<int64_t>(-1)));
    BOOST_TEST((s.entry(id).content == std::optional<std::string>("change " + std::to_string(id))));
  }
  for (const int64_t id : {2, 4}) {
    BOOST_TEST(!s.entry(id).post_id.has_value());
    // Out of the POST with what they carried: each id names one content for ever.
    BOOST_TEST((s.entry(id).content == std::optional<std::string>("change " + std::to_string(id))));
    // Not charged: the failure may have been a's (with several failing users in a POST, a
    // healthy one paid an attempt per split and died of them).
    BOOST_TEST(s.entry(id).attempts == 0);
  }
  look = scheduler.next_posts(kStart + 60'000, 2);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 2u);
  std::map<std::string, std::vector<int64_t>> posts;
  for (const auto& post : look.posts) posts[post.webhook_id] = post.ids;
  BOOST_TEST(!posts.contains("hhf_1"));  // never again, now that it would carry less
  BOOST_TEST((posts["hhf_1.1"] == std::vector<int64_t>{1, 3}));
  BOOST_TEST((posts["hhf_2"] == std::vector<int64_t>{2, 4}));
  for (const auto& post : look.posts) {
    for (const auto& e : post.entries) {  // what each carried, kept, in either POST
      BOOST_TEST((e.content == std::optional<std::string>("change " + std::to_string(e.outbox_id))));
    }
    scheduler.finished(post, answered(post.webhook_id == "hhf_1.1" ? 500 : 200), kStart + 61'000);
  }
  // One user and resource: retried whole under its id, never split again.
  look = scheduler.next_posts(kStart + 120'000, 2);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST(look.posts.front().webhook_id == "hhf_1.1");
  BOOST_TEST((ids_of(look.posts.front()) == std::vector<int64_t>{1, 3}));
  BOOST_TEST(!s.outbox->find(2).value().has_value());  // b's were delivered and deleted
  BOOST_TEST(!s.outbox->find(4).value().has_value());
}

// A change that left a split POST carries what it carried there into whatever POST it
// joins, beside changes read now, and through a second split too: the backend deduplicates
// on each change's own id, and that id names one content for ever. The leaving changes
// were read again from the rows as changed since: a black-box pass saw hhf_2392 go out in
// a multi-user POST with its summary's row at seq 880, then, after the split, in three
// POSTs with the row of its later change (seq 898) under its own id.
BOOST_AUTO_TEST_CASE(a_change_that_left_a_split_post_carries_what_it_carried_into_any_post) {
  Scheduled s;
  int rows_version = 1;  // the rows as they are now: each update makes a new version
  const auto renderer = [&rows_version](std::span<const store::OutboxEntry* const> entries)
      -> Result<std::vector<std::string>> {
    std::vector<std::string> contents;
    for (const auto* e : entries) {
      contents.push_back("change " + std::to_string(e->outbox_id) + " of rows v" + std::to_string(rows_version));
    }
    return contents;
  };
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
  scheduler.render_contents_with(renderer);
  // Every content each change id went out with; one that carries none is read when its
  // POST is sent (DestinationSender::body_of()), from the rows as they are then.
  std::map<int64_t, std::set<std::string>> carried;
  const auto send = [&](const forward::OutgoingPost& post) {
    for (const auto& e : post.entries) {
      carried[e.outbox_id].insert(e.content.value_or("read at send from rows v" + std::to_string(rows_version)));
    }
  };
  s.add(1, "a/sleep", kStart);
  s.add(2, "b/sleep", kStart);
  s.add(3, "c/steps", kStart);
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST((ids_of(look.posts.front()) == std::vector<int64_t>{1, 2, 3}));
  send(look.posts.front());
  scheduler.finished(look.posts.front(), answered(503), kStart + 100);
  // The rows change before the re-plan: b's summary again (change 4), and a new user's.
  rows_version = 2;
  s.add(4, "b/sleep", kStart + 150);
  s.add(5, "d/sleep", kStart + 150);
  look = scheduler.next_posts(kStart + 60'000, 3);
  std::map<std::string, std::vector<int64_t>> posts;
  for (const auto& post : look.posts) posts[post.webhook_id] = post.ids;
  BOOST_TEST((posts["hhf_1.1"] == std::vector<int64_t>{1}));
  BOOST_TEST((posts["hhf_2"] == std::vector<int64_t>{2, 3, 4, 5}));  // the leaving beside changes read now
  for (const auto& post : look.posts) {
    send(post);
    scheduler.finished(post, answered(503), kStart + 60'100);  // hhf_2 is split in turn
  }
  rows_version = 3;
  look = scheduler.next_posts(kStart + 120'000, 3);
  posts.clear();
  for (const auto& post : look.posts) posts[post.webhook_id] = post.ids;
  BOOST_TEST((posts["hhf_1.1"] == std::vector<int64_t>{1}));
  BOOST_TEST((posts["hhf_2.1"] == std::vector<int64_t>{2, 4}));
  BOOST_TEST((posts["hhf_3"] == std::vector<int64_t>{3, 5}));
  for (const auto& post : look.posts) {
    send(post);
    scheduler.finished(post, answered(200), kStart + 120'100);
  }
  scheduler.flush();
  BOOST_REQUIRE_EQUAL(carried.size(), 5u);
  for (const auto& [id, contents] : carried) {
    BOOST_TEST(contents.size() == 1u, "change " << id << " went out with " << contents.size() << " contents");
  }
  // Each with the rows as they were when it first went out.
  BOOST_TEST((carried[2] == std::set<std::string>{"change 2 of rows v1"}));
  BOOST_TEST((carried[3] == std::set<std::string>{"change 3 of rows v1"}));
  BOOST_TEST((carried[4] == std::set<std::string>{"change 4 of rows v2"}));
  BOOST_TEST((carried[5] == std::set<std::string>{"change 5 of rows v2"}));
  BOOST_TEST(!s.outbox->find(3).value().has_value());  // delivered and deleted
}

// A POST of several users the backend never answered is split with its first user apart;
// that user's other resources left it with the others and were planned beside them again:
// a user that shared a POST with one the backend hangs on waited a second timeout_ms. Until
// its part is answered, the first user goes out in POSTs of its own.
BOOST_AUTO_TEST_CASE(a_user_a_timeout_split_off_goes_out_alone_until_its_part_is_answered) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
  s.add(1, "hung/sleep", kStart);
  s.add(2, "waiting/sleep", kStart);
  s.add(3, "hung/steps", kStart);
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST((ids_of(look.posts.front()) == std::vector<int64_t>{1, 2, 3}));
  scheduler.finished(look.posts.front(), timed_out(), kStart + 1000);
  const auto planned = [&](int64_t now_ms) {
    look = scheduler.next_posts(now_ms, 4);
    std::map<std::string, std::vector<int64_t>> posts;
    for (const auto& post : look.posts) posts[post.webhook_id] = post.ids;
    return posts;
  };
  auto posts = planned(kStart + 60'000);
  BOOST_TEST(posts.size() == 3u);
  BOOST_TEST((posts["hhf_1.1"] == std::vector<int64_t>{1}));
  BOOST_TEST((posts["hhf_2"] == std::vector<int64_t>{2}));  // not beside hung's steps again
  BOOST_TEST((posts["hhf_3"] == std::vector<int64_t>{3}));
  for (const auto& post : look.posts) {
    const auto outcome = post.webhook_id == "hhf_2" ? answered(200) : timed_out();
    scheduler.finished(post, outcome, kStart + 61'000);
  }
  s.add(4, "hung/heart", kStart + 62'000);
  s.add(5, "waiting/sleep", kStart + 62'000);
  posts = planned(kStart + 120'000);  // hhf_1.1 is still unanswered: hung's heart alone
  BOOST_TEST((posts["hhf_4"] == std::vector<int64_t>{4}));
  BOOST_TEST((posts["hhf_5"] == std::vector<int64_t>{5}));
  for (const auto& post : look.posts) {
    const auto outcome = post.webhook_id == "hhf_1.1" ? answered(503) : answered(200);
    scheduler.finished(post, outcome, kStart + 121'000);
  }
  // Answered: planned with the others again.
  s.add(6, "hung/heart", kStart + 122'000);
  s.add(7, "waiting/sleep", kStart + 122'000);
  posts = planned(kStart + 180'000);
  BOOST_TEST((posts["hhf_6"] == std::vector<int64_t>{6, 7}));
}

// The isolated user's first part can leave the outbox without an answer: erased with its
// user (purge-user), dropped by the budget, requeued. The user was isolated until a restart
// (attack, stop 82): now it is planned with the others again at the next look.
BOOST_AUTO_TEST_CASE(a_user_whose_split_off_part_left_the_outbox_goes_out_with_the_others_again) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
  s.add(1, "hung/sleep", kStart);
  s.add(2, "waiting/sleep", kStart);
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  scheduler.finished(look.posts.front(), timed_out(), kStart + 1000);
  BOOST_REQUIRE(s.writer.exec("DELETE FROM outbox WHERE outbox_id = 1"));  // as erasing `hung` does
  s.add(3, "hung/heart", kStart + 2000);
  s.add(4, "waiting/steps", kStart + 2000);
  look = scheduler.next_posts(kStart + 60'000, 4);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);  // hung's heart beside the others, not in a POST of its own
  std::set<int64_t> ids(look.posts.front().ids.begin(), look.posts.front().ids.end());
  BOOST_TEST((ids == std::set<int64_t>{2, 3, 4}));
}

// An entry at its last attempt kills only its own user and resource: the others sent beside
// it leave the POST and go on (an entry that had left a split before, with its attempts,
// killed every user planned with it once). It dies of an answer of its own: a failure of
// the POST it shared may have been another user's.
BOOST_AUTO_TEST_CASE(an_entry_at_its_last_attempt_kills_only_its_own_part_of_a_post) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
  s.add(1, "b/sleep", kStart, 3);  // max_attempts 4: this is its last
  s.add(2, "g/sleep", kStart);
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST((ids_of(look.posts.front()) == std::vector<int64_t>{1, 2}));
  scheduler.finished(look.posts.front(), answered(503), kStart + 100);
  for (const int64_t id : {1, 2}) {  // split, neither part charged
    BOOST_TEST(s.entry(id).state == "pending");
    BOOST_TEST((s.entry(id).last_error == std::optional<std::string>("HTTP 503")));
  }
  BOOST_TEST(s.entry(1).attempts == 3);
  BOOST_TEST(s.entry(2).attempts == 0);
  BOOST_TEST(!s.entry(2).post_id.has_value());
  look = scheduler.next_posts(kStart + 60'000, 2);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 2u);
  for (const auto& post : look.posts) {
    scheduler.finished(post, answered(post.webhook_id == "hhf_1.1" ? 503 : 200), kStart + 61'000);
  }
  BOOST_TEST(s.entry(1).state == "dead");  // its own 503, at its last attempt
  BOOST_TEST(s.entry(1).attempts == 4);
  BOOST_TEST(s.entry(1).last_error.value_or("").starts_with("gave up after 4 attempts (max_attempts)"));
  scheduler.flush();
  BOOST_TEST(!s.outbox->find(2).value().has_value());  // g's delivered
}

// With max_attempts = 1 a healthy first user of a POST the backend refused for another
// user (410) died with that POST's split: its part was charged the attempt. Neither part
// is; each is judged by its own answer.
BOOST_AUTO_TEST_CASE(a_healthy_first_user_does_not_die_of_another_users_answer) {
  Scheduled s;
  config::ForwardSettings settings = scheduler_settings(10);
  settings.max_attempts = 1;
  forward::PostScheduler scheduler(settings, *s.outbox, s.metrics, 1);
  s.add(1, "healthy/sleep", kStart);
  s.add(2, "gone/sleep", kStart);
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  scheduler.finished(look.posts.front(), answered(410), kStart + 100);  // about "gone"
  for (const int64_t id : {1, 2}) {
    BOOST_TEST(s.entry(id).state == "pending");
    BOOST_TEST(s.entry(id).attempts == 0);
  }
  look = scheduler.next_posts(kStart + 60'000, 2);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 2u);
  for (const auto& post : look.posts) {
    scheduler.finished(post, answered(post.webhook_id == "hhf_1.1" ? 200 : 410), kStart + 61'000);
  }
  scheduler.flush();
  BOOST_TEST(!s.outbox->find(1).value().has_value());  // delivered
  BOOST_TEST(s.entry(2).state == "dead");
  BOOST_TEST(s.entry(2).attempts == 1);
  BOOST_TEST(s.metrics.dead.load() == 1u);
}

// After a split the entries that leave wait the plain backoff, not the answer's
// Retry-After, which may be about the user split off (a 503 with an hour's Retry-After for
// one user held the others for the hour). But a 429 is the backend telling the client as a
// whole to slow down: then every part waits for its Retry-After.
BOOST_AUTO_TEST_CASE(a_retry_after_holds_back_only_the_first_keys_part_of_a_split) {
  // Attack on a first version that held every part back for a 429's Retry-After: a 429
  // about one user held each user planned with it for the hour, again at every split.
  for (const unsigned status : {429u, 503u}) {
    BOOST_TEST_CONTEXT("HTTP " << status) {
      Scheduled s;
      forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
      s.add(1, "a/sleep", kStart);
      s.add(2, "b/sleep", kStart);
      auto look = scheduler.next_posts(kStart, 1);
      BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
      forward::PostOutcome outcome = answered(status);
      outcome.retry_after_s = 3600;
      scheduler.finished(look.posts.front(), outcome, kStart + 100);
      BOOST_TEST(s.entry(1).next_attempt_at_ms == kStart + 100 + 3'600'000);  // the first key's part
      BOOST_TEST(s.entry(2).next_attempt_at_ms <= kStart + 100 + 1000);       // backoff_max_s
    }
  }
}

// A leaving entry past max_age dies at once: its forward_dead line says the attempts the
// store holds (dead() counts the attempt that killed it), not one less.
BOOST_AUTO_TEST_CASE(a_leaving_entry_killed_by_max_age_is_logged_with_its_stored_attempts) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
  s.add(1, "a/sleep", kStart + 3'000'000);
  s.add(2, "b/sleep", kStart, 2);  // max_age (an hour) is over when the POST fails
  auto look = scheduler.next_posts(kStart + 3'000'000, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_REQUIRE((ids_of(look.posts.front()) == std::vector<int64_t>{1, 2}));
  const std::string logged =
      test::logged_by([&] { scheduler.finished(look.posts.front(), answered(503), kStart + 3'600'000); });
  BOOST_TEST(s.entry(1).state == "pending");
  BOOST_TEST(s.entry(2).state == "dead");
  BOOST_REQUIRE(s.entry(2).attempts == 3);
  BOOST_TEST(logged.find("\"event\":\"forward_dead\"") != std::string::npos, logged);
  BOOST_TEST(logged.find("\"attempts\":3") != std::string::npos, logged);
}

// A split and when its parts are due again are one transaction: a failure (or a crash)
// after the split left the entries that left it due at once, uncharged, out of any POST.
// Now a split that cannot be written whole is not made: the POST goes on whole, due later,
// charged. And not killed by a final answer (attack: a 410 for one user killed every user
// in a POST whose split could not be written).
BOOST_AUTO_TEST_CASE(a_split_that_cannot_be_written_leaves_the_post_whole_and_alive) {
  for (const unsigned status : {503u, 410u}) {
    BOOST_TEST_CONTEXT("HTTP " << status) {
      Scheduled s;
      forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
      s.add(1, "a/sleep", kStart);
      s.add(2, "b/sleep", kStart);
      auto look = scheduler.next_posts(kStart, 1);
      BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
      // The write of an unpinned entry's due time fails (as if the process died before it).
      BOOST_REQUIRE(s.writer.exec("CREATE TRIGGER due_time_lost BEFORE UPDATE OF next_attempt_at ON outbox "
                                  "WHEN OLD.post_id IS NULL BEGIN SELECT RAISE(ABORT, 'due time lost'); END"));
      scheduler.finished(look.posts.front(), answered(status), kStart + 100);
      for (const int64_t id : {1, 2}) {
        const store::OutboxEntry e = s.entry(id);
        BOOST_TEST(e.state == "pending", id << " died of an answer that may have been the other's");
        BOOST_TEST(e.next_attempt_at_ms > kStart + 100, id << " due at once");
        BOOST_TEST((e.post_id == std::optional<int64_t>(1)), id << " left its POST");  // not split
        BOOST_TEST(e.attempts == 1);  // charged, as a POST not split is
      }
    }
  }
}

// Any failure of a POST that went out splits it (decision 083), not only an answer to
// retry: a POST of several users retried whole after a timeout held every user in it back
// for the one the backend hangs on, until max_attempts killed them all; a final answer
// (410: the backend refusing one user) killed every user's entries after one attempt. A
// backend that applied the POST deduplicates the changes sent again by their own ids.
BOOST_AUTO_TEST_CASE(a_post_of_two_users_that_timed_out_or_was_refused_for_good_is_split) {
  for (const bool final_answer : {false, true}) {
    BOOST_TEST_CONTEXT((final_answer ? "410" : "timeout")) {
      Scheduled s;
      forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
      s.add(1, "a/sleep", kStart);
      s.add(2, "b/sleep", kStart);
      auto look = scheduler.next_posts(kStart, 1);
      BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
      BOOST_REQUIRE((ids_of(look.posts.front()) == std::vector<int64_t>{1, 2}));
      scheduler.finished(look.posts.front(), final_answer ? answered(410) : timed_out(), kStart + 100);
      for (const int64_t id : {1, 2}) {
        BOOST_TEST(s.entry(id).state == "pending");  // a 410 may have been either user's
        BOOST_TEST(s.entry(id).attempts == 0);  // neither part is charged: it may have been the other's
      }
      BOOST_TEST((s.entry(1).post_id == std::optional<int64_t>(-1)));
      BOOST_TEST(!s.entry(2).post_id.has_value());
      look = scheduler.next_posts(kStart + 60'000, 2);
      BOOST_REQUIRE_EQUAL(look.posts.size(), 2u);
      std::map<std::string, std::vector<int64_t>> posts;
      for (const auto& post : look.posts) posts[post.webhook_id] = post.ids;
      BOOST_TEST(!posts.contains("hhf_1"));  // the id that went out is never sent again
      BOOST_TEST((posts["hhf_1.1"] == std::vector<int64_t>{1}));
      BOOST_TEST((posts["hhf_2"] == std::vector<int64_t>{2}));
      // One user and resource: today's rules. A final answer kills it; a timeout retries it
      // whole under its id.
      for (const auto& post : look.posts) {
        scheduler.finished(post, final_answer ? answered(410) : timed_out(), kStart + 61'000);
      }
      BOOST_TEST(s.entry(1).state == (final_answer ? "dead" : "pending"));
      BOOST_TEST(s.entry(2).state == (final_answer ? "dead" : "pending"));
      if (!final_answer) {
        look = scheduler.next_posts(kStart + 120'000, 2);
        posts.clear();
        for (const auto& post : look.posts) posts[post.webhook_id] = post.ids;
        BOOST_TEST((posts["hhf_1.1"] == std::vector<int64_t>{1}));
        BOOST_TEST((posts["hhf_2"] == std::vector<int64_t>{2}));
        BOOST_TEST(posts.size() == 2u);
      }
    }
  }
}

// A POST that never reached the backend (no connection) goes on whole under its id: it was
// never sent, and the whole destination pauses anyway.
BOOST_AUTO_TEST_CASE(a_post_of_two_users_that_could_not_connect_goes_on_whole) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 1);
  s.add(1, "a/sleep", kStart);
  s.add(2, "b/sleep", kStart);
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  forward::PostOutcome refused;
  refused.failure = "connect";
  refused.unreachable = true;
  scheduler.finished(look.posts.front(), refused, kStart + 100);
  BOOST_TEST((s.entry(1).post_id == std::optional<int64_t>(1)));
  BOOST_TEST((s.entry(2).post_id == std::optional<int64_t>(1)));
  look = scheduler.next_posts(kStart + 60'000, 2);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST(look.posts.front().webhook_id == "hhf_1");
  BOOST_TEST((ids_of(look.posts.front()) == std::vector<int64_t>{1, 2}));
}

BOOST_AUTO_TEST_CASE(each_entry_counts_its_own_attempts_and_the_most_decides) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 2);
  // b had three attempts before (say, requeued by hand from an older version); a none.
  s.add(1, "a/sleep", kStart);
  s.add(2, "b/sleep", kStart, 3);
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST((ids_of(look.posts.front()) == std::vector<int64_t>{1, 2}));
  scheduler.finished(look.posts.front(), answered(503), kStart + 100);
  // Each counts its own. The POST is split (decisions 078, 083): a, its first key, goes on
  // and b leaves it, neither charged (the 503 may have been the other's), b alone...
  BOOST_TEST(s.entry(1).attempts == 0);
  BOOST_TEST(s.entry(2).attempts == 3);
  BOOST_TEST(s.entry(1).state == "pending");
  BOOST_TEST(s.entry(2).state == "pending");
  BOOST_TEST(!s.entry(2).post_id.has_value());
  // ... where an answer of its own, at its fourth attempt, kills it and nothing else.
  look = scheduler.next_posts(kStart + 30'000, 2);
  const auto b_post = std::find_if(look.posts.begin(), look.posts.end(),
                                   [](const auto& post) { return ids_of(post) == std::vector<int64_t>{2}; });
  BOOST_REQUIRE(b_post != look.posts.end());
  scheduler.finished(*b_post, answered(503), kStart + 30'100);
  BOOST_TEST(s.entry(2).state == "dead");
  BOOST_TEST(s.entry(1).state == "pending");
  BOOST_TEST(s.metrics.dead.load() == 1u);
  BOOST_REQUIRE(s.writer.exec("DELETE FROM outbox WHERE outbox_id IN (1, 2)"));  // out of the way of what follows
  // A POST of one user and resource still dies whole when one of its entries reaches it.
  s.add(3, "c/sleep", kStart, 3);
  s.add(4, "c/sleep", kStart);
  look = scheduler.next_posts(kStart + 60'000, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_REQUIRE((ids_of(look.posts.front()) == std::vector<int64_t>{3, 4}));
  scheduler.finished(look.posts.front(), answered(503), kStart + 61'000);
  BOOST_TEST(s.entry(3).state == "dead");
  BOOST_TEST(s.entry(4).state == "dead");
  // Said so that it is true for each: 4 had one attempt, not "4 attempts".
  for (const int64_t id : {3, 4}) {
    BOOST_TEST(s.entry(id).last_error.value_or("").starts_with("gave up: the POST's message hhf_3 reached max_attempts (4)"),
               s.entry(id).last_error.value_or(""));
  }
  BOOST_TEST(s.entry(4).attempts == 1);
  // A POST of one entry says its own count.
  s.add(5, "d/sleep", kStart, 3);
  look = scheduler.next_posts(kStart + 120'000, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_REQUIRE((ids_of(look.posts.front()) == std::vector<int64_t>{5}));
  scheduler.finished(look.posts.front(), answered(503), kStart + 121'000);
  BOOST_TEST(s.entry(5).last_error.value_or("").starts_with("gave up after 4 attempts (max_attempts)"));
}

BOOST_AUTO_TEST_CASE(a_post_in_flight_past_max_age_dies_if_it_fails_and_is_delivered_if_not) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(10), *s.outbox, s.metrics, 3);
  s.add(1, "a/sleep", kStart);
  s.add(2, "b/sleep", kStart + 3'000'000);  // younger
  auto look = scheduler.next_posts(kStart + 3'000'000, 2);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  // Out before max_age (an hour after the oldest), failed after it: a's is dead; b's, of
  // another user and younger, goes on.
  scheduler.finished(look.posts.front(), answered(503), kStart + 3'600'000);
  BOOST_TEST(s.entry(1).state == "dead");
  BOOST_TEST(s.entry(2).state == "pending");
  BOOST_TEST(s.entry(1).last_error.value_or("").starts_with("gave up: older than max_age"));
  BOOST_REQUIRE(s.writer.exec("DELETE FROM outbox WHERE outbox_id = 2"));  // out of the way of what follows

  // The same, delivered: a success is a success, however late.
  s.add(3, "c/sleep", kStart);
  look = scheduler.next_posts(kStart + 3'000'000, 2);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  scheduler.finished(look.posts.front(), answered(204), kStart + 7'200'000);
  scheduler.flush();
  BOOST_TEST(!s.outbox->find(3).value().has_value());
}

BOOST_AUTO_TEST_CASE(a_backend_that_cannot_be_reached_pauses_the_destination) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(1), *s.outbox, s.metrics, 4);
  s.add(1, "a/sleep", kStart);
  s.add(2, "b/sleep", kStart);
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  forward::PostOutcome refused;
  refused.failure = "connect";
  refused.unreachable = true;
  scheduler.finished(look.posts.front(), refused, kStart);
  BOOST_TEST(scheduler.paused_until_ms() > kStart);
  BOOST_TEST(scheduler.next_posts(kStart + 1, 4).posts.empty());  // b does not use up an attempt
  BOOST_TEST(s.entry(2).attempts == 0);
  look = scheduler.next_posts(scheduler.paused_until_ms() + 1000, 4);
  BOOST_TEST(look.posts.size() == 2u);
}

// The POSTs in flight when the backend went away all fail: the pause grows once per round,
// not once per POST (eight lanes failing twice paused the destination for minutes).
BOOST_AUTO_TEST_CASE(posts_failing_together_on_an_unreachable_backend_pause_it_once) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(1), *s.outbox, s.metrics, 7);
  for (int64_t i = 1; i <= 8; ++i) s.add(i, "k" + std::to_string(i) + "/sleep", kStart);
  forward::PostOutcome refused;
  refused.failure = "connect";
  refused.unreachable = true;
  int64_t now = kStart;
  for (int64_t round = 1; round <= 2; ++round) {
    auto look = scheduler.next_posts(now, 8);
    BOOST_REQUIRE_EQUAL(look.posts.size(), 8u);
    for (const auto& post : look.posts) scheduler.finished(post, refused, now);
    // backoff_initial_ms (100) doubled once per round, halved at most by the jitter.
    BOOST_TEST(scheduler.paused_until_ms() - now <= 100 << (round - 1));
    BOOST_TEST(scheduler.paused_until_ms() - now >= 50 << (round - 1));
    now += 1000;  // past the pause and each entry's own backoff
  }
}

// A Retry-After is honoured up to a day, however large: one too large to count in
// milliseconds (9223372036854775807 seconds fits an int64, its milliseconds do not) once
// overflowed into a negative wait, and the POST went out again at once, again and again
// until max_attempts.
BOOST_AUTO_TEST_CASE(a_retry_after_too_large_for_milliseconds_waits_a_day) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(1), *s.outbox, s.metrics, 6);
  const std::vector<int64_t> retry_after = {INT64_MAX, INT64_MAX / 1000 + 1, int64_t{1} << 62, 86'400 * 365, 0};
  for (size_t i = 0; i < retry_after.size(); ++i) {
    s.add(static_cast<int64_t>(i) + 1, "k" + std::to_string(i) + "/sleep", kStart);
  }
  auto look = scheduler.next_posts(kStart, retry_after.size());
  BOOST_REQUIRE_EQUAL(look.posts.size(), retry_after.size());
  for (size_t i = 0; i < retry_after.size(); ++i) {
    forward::PostOutcome outcome = answered(503);
    outcome.retry_after_s = retry_after[i];
    scheduler.finished(look.posts[i], outcome, kStart + 100);
  }
  for (size_t i = 0; i + 1 < retry_after.size(); ++i) {
    const store::OutboxEntry e = s.entry(static_cast<int64_t>(i) + 1);
    BOOST_TEST(e.state == "pending");
    BOOST_TEST(e.next_attempt_at_ms == kStart + 100 + 86'400'000, "Retry-After " << retry_after[i]);
  }
  // Retry-After: 0 (or a date already past): the backoff, not at once.
  BOOST_TEST(s.entry(static_cast<int64_t>(retry_after.size())).next_attempt_at_ms >= kStart + 100 + 50);
  // None of them is due again before its day is over.
  BOOST_TEST(scheduler.next_posts(kStart + 1000, 8).posts.size() == 1u);
}

// A backend that answers 429 with Retry-After: 0 every time (or a date that has passed)
// used to have every attempt sent at once: all of max_attempts spent within a second and
// the message dead. Each retry waits its backoff.
BOOST_AUTO_TEST_CASE(a_retry_after_of_zero_waits_the_backoff) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(1), *s.outbox, s.metrics, 8);
  s.add(1, "k/sleep", kStart);
  int64_t now = kStart;
  for (int64_t attempt = 1; attempt <= 3; ++attempt) {
    auto look = scheduler.next_posts(now, 1);
    BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
    forward::PostOutcome outcome = answered(429);
    outcome.retry_after_s = 0;
    scheduler.finished(look.posts[0], outcome, now);
    const store::OutboxEntry e = s.entry(1);
    BOOST_TEST(e.state == "pending");
    // Backoff 100 ms doubling, jitter over the upper half: at least 50 · 2^(attempt-1) ms.
    BOOST_TEST(e.next_attempt_at_ms >= now + (50 << (attempt - 1)), "attempt " << attempt);
    BOOST_TEST(scheduler.next_posts(now + 1, 1).posts.empty());
    now = e.next_attempt_at_ms;
  }
}

// Issue 45, under attack, at scale: one key refused for an hour with 30,000 entries behind
// it, and 10,000 entries of 2,000 other keys. Every other entry goes out, each key's in
// order, in about as many looks as the lanes need, none of the refused key's; and a key
// whose entries are not due costs a look nothing.
BOOST_AUTO_TEST_CASE(tens_of_thousands_behind_a_refused_key_hold_back_no_other_key) {
  Scheduled s;
  config::ForwardSettings settings = scheduler_settings(5);
  settings.max_attempts = 100;
  forward::PostScheduler scheduler(settings, *s.outbox, s.metrics, 7);
  // Ids 1–30,000: the refused key, already tried once and due in an hour (its first POST
  // pinned); then 10,000 of the others, interleaved.
  BOOST_REQUIRE(s.writer.exec("BEGIN"));
  BOOST_REQUIRE(s.writer.exec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000) "
      "INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, order_key, attempts, "
      "created_at, next_attempt_at, post_id) SELECT i, 'backend', 'change', i, 'summaries', 'sleep/' || i, 'insert', "
      "'refused/sleep', CASE WHEN i <= 5 THEN 1 ELSE 0 END, " + std::to_string(kStart) + ", " +
      std::to_string(kStart + 3'600'000) + " * (i <= 5) + " + std::to_string(kStart) +
      " * (i > 5), CASE WHEN i <= 5 THEN 1 END FROM n"));
  BOOST_REQUIRE(s.writer.exec(
      "WITH RECURSIVE n(i) AS (SELECT 30001 UNION ALL SELECT i + 1 FROM n WHERE i < 40000) "
      "INSERT INTO outbox (outbox_id, destination, kind, seq, table_name, row_key, op, order_key, created_at, "
      "next_attempt_at) SELECT i, 'backend', 'change', i, 'summaries', 'sleep/' || i, 'insert', "
      "'user-' || (i % 2000) || '/sleep', " + std::to_string(kStart) + ", " + std::to_string(kStart) + " FROM n"));
  BOOST_REQUIRE(s.writer.exec("COMMIT"));
  std::map<std::string, int64_t> last_of_key;
  size_t sent = 0, looks = 0;
  int64_t now = kStart + 1000;
  for (; looks < 2000; ++looks) {
    auto look = scheduler.next_posts(now, 8);
    BOOST_REQUIRE(!look.store_failed);
    if (look.posts.empty() && !look.more) break;
    for (const auto& post : look.posts) {
      for (const auto& e : post.entries) {
        BOOST_REQUIRE(e.order_key.has_value());
        BOOST_TEST(*e.order_key != "refused/sleep");
        auto [it, first] = last_of_key.try_emplace(*e.order_key, e.outbox_id);
        if (!first) {
          BOOST_TEST(it->second < e.outbox_id, *e.order_key << " out of order");
          it->second = e.outbox_id;
        }
        ++sent;
      }
      scheduler.finished(post, answered(200), now);
    }
    now += 100;
  }
  scheduler.flush();
  BOOST_TEST(sent == 10'000u);
  BOOST_TEST(looks <= 10'000u / (8 * 5) * 2 + 20, looks << " looks");
  BOOST_TEST(s.writer.query_int("SELECT count(*) FROM outbox").value().value_or(-1) == 30'000);
}

// Issue 45, under attack: a look whose pins cannot be written (another writer holds the
// lock past the sender's busy timeout; on PostgreSQL, a dropped connection) returns no
// POST at all. It used to return the POSTs it had planned, and the sender sent them
// unpinned: after a crash their entries could go out grouped otherwise under the same
// webhook-id, and, not in flight for the scheduler, they could be planned again at once.
BOOST_AUTO_TEST_CASE(a_post_whose_pin_could_not_be_written_does_not_go_out) {
  Scheduled s;
  forward::PostScheduler scheduler(scheduler_settings(2), *s.outbox, s.metrics, 8);
  s.add(1, "a/sleep", kStart);
  s.add(2, "b/sleep", kStart);
  BOOST_REQUIRE(scheduler.next_posts(kStart, 0).posts.empty());  // marks them, plans nothing
  BOOST_REQUIRE(s.writer.exec("BEGIN IMMEDIATE"));
  auto look = scheduler.next_posts(kStart, 1);
  BOOST_REQUIRE(s.writer.exec("COMMIT"));
  BOOST_TEST(look.store_failed);
  BOOST_TEST(look.posts.empty());
  BOOST_TEST(scheduler.in_flight() == 0u);
  BOOST_TEST(!s.entry(1).post_id.has_value());
  // The next look plans them again, pinned before they go.
  look = scheduler.next_posts(kStart + 100, 1);
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST((ids_of(look.posts.front()) == std::vector<int64_t>{1, 2}));
  BOOST_TEST((s.entry(1).post_id == std::optional<int64_t>(1)));
  BOOST_TEST((s.entry(2).post_id == std::optional<int64_t>(1)));
}

// Decision 057, under attack: the sender has taken the making of entries over, and what
// the outbox holds fills every look (a backend failing one user, ordered = false: each of
// the user's entries is due again after its backoff). Another user's deliveries must not
// wait unmade until those die: a failed POST makes the next step be made, full or not.
BOOST_AUTO_TEST_CASE(entries_held_behind_a_failing_user_do_not_keep_others_unmade) {
  Scheduled s;
  config::ForwardSettings settings = scheduler_settings(1);
  settings.mode = "deliveries";
  settings.ordered = false;
  constexpr int64_t kHeldAhead = 10;
  s.deliver(1, 12, "x");
  for (int64_t seq = 1; seq <= 12; ++seq) {
    BOOST_REQUIRE(s.writer.exec("INSERT INTO outbox (destination, kind, seq, table_name, row_key, op, user_id, "
                                "order_key, created_at, next_attempt_at) VALUES ('backend', 'delivery', " +
                                std::to_string(seq) + ", 'deliveries', 'm" + std::to_string(seq) +
                                "', 'insert', 'x', 'x/daily.data.sleep', " + std::to_string(kStart) + ", " + std::to_string(kStart) + ")"));
  }
  BOOST_REQUIRE(s.writer.exec("INSERT INTO forward_positions (destination, mode, after_seq) VALUES ('backend', "
                              "'deliveries', 12)"));
  forward::PostScheduler scheduler(settings, *s.outbox, s.metrics, 7, kHeldAhead);
  auto look = scheduler.next_posts(kStart, 1);  // 12 held: the sender takes the making over
  BOOST_REQUIRE_EQUAL(look.posts.size(), 1u);
  BOOST_TEST(test::query_int(s.path, "SELECT writer_makes FROM forward_positions") == 0);
  s.deliver(13, 15, "y");  // the writer makes none now
  scheduler.finished(look.posts.front(), answered(503), kStart + 10);
  look = scheduler.next_posts(kStart + 200, 1);  // x's entries fill the look again
  BOOST_TEST(look.posts.size() == 1u);
  BOOST_TEST(test::query_int(s.path, "SELECT count(*) FROM outbox WHERE user_id = 'y'") == 3);
}

// Decision 057, under attack (round 2): dead entries wait for an operator, not for the
// sender: however many there are, the writer keeps making the entries.
BOOST_AUTO_TEST_CASE(dead_entries_do_not_make_the_sender_take_the_making_over) {
  Scheduled s;
  config::ForwardSettings settings = scheduler_settings(1);
  constexpr int64_t kHeldAhead = 10;
  for (int64_t id = 1; id <= 12; ++id) s.add(id, "k" + std::to_string(id), kStart);
  BOOST_REQUIRE(s.writer.exec("UPDATE outbox SET state = 'dead'"));
  BOOST_REQUIRE(s.writer.exec("INSERT INTO forward_positions (destination, mode, after_seq) VALUES ('backend', "
                              "'changes', 0)"));
  forward::PostScheduler scheduler(settings, *s.outbox, s.metrics, 7, kHeldAhead);
  (void)scheduler.next_posts(kStart, 1);
  BOOST_TEST(test::query_int(s.path, "SELECT writer_makes FROM forward_positions") == 1);
  for (int64_t id = 13; id <= 24; ++id) s.add(id, "k" + std::to_string(id), kStart);  // pending
  (void)scheduler.next_posts(kStart + 1000, 0);
  BOOST_TEST(test::query_int(s.path, "SELECT writer_makes FROM forward_positions") == 0);
}

// Decision 084, found by a black-box pass (max_outbox_mib = 1, a backlog after a pause):
// with the sender making the entries and the backend answering 200, a look that cannot be
// filled (ordered: one user's entries wait behind its POST in flight) made another step
// every kRecountHeldMs, until the budget dropped entries the backend would have taken.
// Making ahead stays within twice made_ahead, whatever the looks find.
BOOST_AUTO_TEST_CASE(entries_made_ahead_stay_bounded_while_one_users_posts_go_out_in_turn) {
  Scheduled s;
  config::ForwardSettings settings = scheduler_settings(1);
  settings.mode = "deliveries";
  settings.ordered = true;
  constexpr int64_t kHeldAhead = 10;
  constexpr int64_t kDeliveries = 300;
  s.deliver(1, kDeliveries, "x");
  s.taken_over_before_a_restart();
  forward::PostScheduler scheduler(settings, *s.outbox, s.metrics, 7, kHeldAhead);
  // The sender's entries are due from when it makes them (the store's clock): looks from then on.
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch()).count() + 60'000;
  int64_t sent = 0, most_pending = 0;
  for (int round = 0; round < 10 * kDeliveries && sent < kDeliveries; ++round) {
    now += forward::PostScheduler::kRecountHeldMs;
    auto look = scheduler.next_posts(now, 8);  // room for 8, one user: one POST at a time
    const int64_t pending = test::query_int(s.path, "SELECT count(*) FROM outbox WHERE state = 'pending'");
    most_pending = std::max(most_pending, pending);
    for (const auto& post : look.posts) {
      scheduler.finished(post, answered(200), now);
      ++sent;
    }
  }
  BOOST_TEST(most_pending <= 2 * kHeldAhead);
  BOOST_TEST(sent == kDeliveries);  // and every one went out, in turn
}

// The ceiling on entries made ahead holds while the backend answers, not while a key fails:
// one user whose POSTs fail, with more than the ceiling's worth of entries, stopped every
// other user's deliveries from being made at all (attack on decision 084).
BOOST_AUTO_TEST_CASE(a_failing_user_over_the_ceiling_does_not_stop_the_others_being_made) {
  Scheduled s;
  config::ForwardSettings settings = scheduler_settings(1);
  settings.mode = "deliveries";
  settings.ordered = true;
  settings.max_attempts = 1000;  // x's entries never die: only the making can free y's
  settings.max_age_s = 1'000'000'000;
  constexpr int64_t kHeldAhead = 10;
  constexpr int64_t kFailing = 40, kOthers = 5;
  s.deliver(1, kFailing, "x");
  s.deliver(kFailing + 1, kFailing + kOthers, "y");
  s.taken_over_before_a_restart();
  forward::PostScheduler scheduler(settings, *s.outbox, s.metrics, 7, kHeldAhead);
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch()).count() + 60'000;
  int64_t others_sent = 0;
  for (int round = 0; round < 2000 && others_sent < kOthers; ++round) {
    now += forward::PostScheduler::kRecountHeldMs;
    for (const auto& post : scheduler.next_posts(now, 8).posts) {
      const bool other = std::stoll(post.webhook_id.substr(1)) > kFailing;
      scheduler.finished(post, answered(other ? 200 : 503), now);
      others_sent += other ? 1 : 0;
    }
  }
  BOOST_TEST(others_sent == kOthers);
}

BOOST_AUTO_TEST_SUITE_END()
