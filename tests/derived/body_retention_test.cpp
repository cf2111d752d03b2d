// `[retention] body_days` (spec §11): bodies of applied deliveries older than the retention
// go, in batches, with a hash kept; pending and newer deliveries keep theirs; the space goes
// back to the file system; dedup, capture, replay and rebuild go on working on what is left.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "common/sha256.h"
#include "common/timestamp.h"
#include "processor/body_retention_work.h"
#include "store/sqlite/sqlite_body_retention.h"
#include "tests/derived/corpus.h"
#include "tests/derived/store_dump.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(body_retention_test)

namespace {

using namespace hh;
using hh::test::random_secret;
using hh::test::TempDir;

constexpr int64_t kDayMs = 86'400'000;
constexpr int64_t kRetentionNowMs = 1'790'000'000'000;  // 2026-09-21

// Deliveries received `age_days` before kRetentionNowMs, a millisecond apart.
std::vector<store::NewDelivery> received_days_ago(std::vector<store::NewDelivery> deliveries, int64_t age_days) {
  int64_t at = kRetentionNowMs - age_days * kDayMs;
  for (auto& d : deliveries) d.received_at_ms = at++;
  return deliveries;
}

// Runs the work as the writer thread would until it has nothing left for now.
int retention_run(processor::BodyRetentionWork& work) {
  int calls = 1;
  while (work.run_once(0)) BOOST_REQUIRE(++calls < 10'000);
  return calls;
}

std::string retention_read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::map<int64_t, std::string> bodies_by_seq(sqlite::Connection& db) {
  std::map<int64_t, std::string> bodies;
  auto select = db.prepare("SELECT seq, body FROM inbox");
  BOOST_REQUIRE(select);
  BOOST_REQUIRE(select->for_each_row([&](const sqlite::Statement& row) {
    bodies[row.column_int(0)] = std::string(row.column_blob(1));
  }));
  return bodies;
}

}  // namespace

BOOST_AUTO_TEST_CASE(old_applied_bodies_go_with_their_hash_and_the_rest_stays) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  // Every family, and enough large bodies (~10 KiB of samples) for the file to shrink.
  auto mix = test::make_corpus(600, 21);
  for (int i = 0; i < 100; ++i) {
    mix.push_back(test::heartrate_delivery("big-" + std::to_string(i), kRetentionNowMs - 45 * kDayMs + i * 3'600'000, 120, 60));
  }
  const auto old_ones = received_days_ago(std::move(mix), 40);
  std::vector<store::NewDelivery> recent;
  for (int i = 0; i < 5; ++i) recent.push_back(test::sleep_delivery("recent-" + std::to_string(i), "s" + std::to_string(i), 70 + i));
  recent = received_days_ago(recent, 1);
  test::append_deliveries(db, old_ones);
  test::append_deliveries(db, recent);
  test::apply_inbox(db);
  // Old, but not applied yet: the processor still needs its body.
  test::append_deliveries(db, received_days_ago({test::sleep_delivery("late", "s-late", 50)}, 40));
  const int64_t pending_seq = std::stoll(test::value(db, "SELECT max(seq) FROM inbox"));
  const auto before = bodies_by_seq(db);
  const auto outcomes_before = test::rows(db, "SELECT seq, status, family, error FROM deliveries ORDER BY seq");
  const std::string pages_before = test::value(db, "PRAGMA page_count");

  int64_t now = kRetentionNowMs;
  auto retention = store::open_sqlite_body_retention(db);
  BOOST_REQUIRE_MESSAGE(retention, retention.error());
  processor::BodyRetentionWork work(std::move(*retention), 30, [&now] { return now; });
  // 700 bodies take several batches, then the space goes back.
  BOOST_TEST(retention_run(work) > 3);

  const int64_t old_count = static_cast<int64_t>(old_ones.size());
  BOOST_TEST(test::count(db, "removed_bodies") == old_count);
  BOOST_TEST(work.stats().bodies_removed.load() == static_cast<uint64_t>(old_count));
  const auto after = bodies_by_seq(db);
  for (const auto& [seq, body] : before) {
    BOOST_TEST_CONTEXT("seq " << seq) {
      const bool old = seq <= old_count;  // appended first: seqs 1…700
      const std::string where = " WHERE seq = " + std::to_string(seq);
      if (old) {
        BOOST_TEST(after.at(seq).empty());
        BOOST_TEST(test::value(db, "SELECT headers FROM inbox" + where) == "'{}'");
        BOOST_TEST(test::value(db, "SELECT body_sha256 FROM removed_bodies" + where) == "'" + sha256_hex(body) + "'");
        BOOST_TEST(test::value(db, "SELECT body_bytes FROM removed_bodies" + where) == std::to_string(body.size()));
        BOOST_TEST(test::value(db, "SELECT removed_at_ms FROM removed_bodies" + where) == std::to_string(now));
      } else {
        BOOST_TEST(after.at(seq) == body);  // recent ones and the pending one
        BOOST_TEST(test::count(db, "removed_bodies" + where) == 0);
      }
    }
  }
  // The rows themselves stay: message ids (dedup), received_at, outcomes.
  BOOST_TEST(test::count(db, "inbox") == static_cast<int64_t>(before.size()));
  BOOST_TEST(test::rows(db, "SELECT seq, status, family, error FROM deliveries ORDER BY seq") == outcomes_before,
             boost::test_tools::per_element());
  // A new database vacuums incrementally: the file is smaller and has no free pages left.
  BOOST_TEST(std::stoll(test::value(db, "PRAGMA page_count")) < std::stoll(pages_before));
  BOOST_TEST(test::value(db, "PRAGMA freelist_count") == "0");

  // Nothing due until the next look; then 30 days on, the recent ones are old too, and the
  // pending one still keeps its body.
  BOOST_TEST(!work.run_once(0));
  now += 30 * kDayMs;
  retention_run(work);
  BOOST_TEST(test::count(db, "removed_bodies") == old_count + static_cast<int64_t>(recent.size()));
  BOOST_TEST(test::count(db, "removed_bodies WHERE seq = " + std::to_string(pending_seq)) == 0);

  // The processor passes over removed bodies (a rebuild reaches them): outcomes unchanged.
  BOOST_REQUIRE(db.exec("UPDATE processor_state SET applied_seq = 0"));
  test::apply_inbox(db);
  auto outcomes_after = test::rows(db, "SELECT seq, status, family, error FROM deliveries ORDER BY seq");
  BOOST_REQUIRE(outcomes_after.size() == outcomes_before.size());
  outcomes_after.back() = outcomes_before.back();  // the pending one: applied now
  BOOST_TEST(outcomes_after == outcomes_before, boost::test_tools::per_element());
}

// Deliveries received long ago but stored after recent ones (an offline replay of an old
// capture into a database in use, a clock set back): the seq walk stops at the first recent
// one, and the late sweep removes them anyway, in the same round; the recent ones and a
// pending late one keep theirs. The sweep found nothing of them before it existed.
BOOST_AUTO_TEST_CASE(old_bodies_stored_after_newer_ones_go_too) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  std::vector<store::NewDelivery> recent, late;
  for (int i = 0; i < 5; ++i) recent.push_back(test::sleep_delivery("recent-" + std::to_string(i), "r" + std::to_string(i), 70 + i));
  for (int i = 0; i < 40; ++i) late.push_back(test::sleep_delivery("late-" + std::to_string(i), "l" + std::to_string(i), 50 + i % 30));
  test::append_deliveries(db, received_days_ago(recent, 1));
  test::append_deliveries(db, received_days_ago(late, 40));
  std::vector<store::NewDelivery> newest;  // more recent ones after them
  for (int i = 0; i < 5; ++i) newest.push_back(test::sleep_delivery("newest-" + std::to_string(i), "n" + std::to_string(i), 80 + i));
  test::append_deliveries(db, received_days_ago(newest, 0));
  test::apply_inbox(db);
  test::append_deliveries(db, received_days_ago({test::sleep_delivery("pending", "p", 50)}, 40));
  int64_t now = kRetentionNowMs;
  auto retention = store::open_sqlite_body_retention(db);
  BOOST_REQUIRE_MESSAGE(retention, retention.error());
  processor::BodyRetentionWork work(std::move(*retention), 30, [&now] { return now; });
  retention_run(work);
  BOOST_TEST(work.stats().bodies_removed.load() == 40u);
  BOOST_TEST(test::count(db, "removed_bodies") == 40);
  BOOST_TEST(test::count(db, "removed_bodies WHERE seq BETWEEN 6 AND 45") == 40);
  BOOST_TEST(test::count(db, "inbox WHERE length(body) > 0 AND (seq <= 5 OR seq > 45)") == 11);  // and the pending one

  // A minute later the walk looks again but the sweep waits for its hour; once applied, the
  // pending one goes at the next sweep.
  test::apply_inbox(db);
  now += processor::BodyRetentionWork::kCheckEveryMs;
  retention_run(work);
  BOOST_TEST(test::count(db, "removed_bodies") == 40);
  now += processor::BodyRetentionWork::kLateSweepEveryMs;
  retention_run(work);
  BOOST_TEST(test::count(db, "removed_bodies") == 41);
  // The late removals did not move the walk past the recent ones: once they are old, the
  // walk takes them (it had stopped at the first; a first version of the sweep skipped them).
  now += 30 * kDayMs;
  retention_run(work);
  BOOST_TEST(test::count(db, "removed_bodies WHERE seq <= 5") == 5);
  BOOST_TEST(test::count(db, "removed_bodies") == 51);
}

// Steps of the late sweep go on after the last row they read, by (received_at, seq): late
// rows that share one millisecond (a capture's lines signed in one second are stored at
// one time) are all found, however many more than a step (the first version stepped over
// the rest of that millisecond).
BOOST_AUTO_TEST_CASE(late_rows_of_one_millisecond_are_all_found_step_by_step) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  test::append_deliveries(db, received_days_ago({test::sleep_delivery("recent", "r", 70)}, 1));
  std::vector<store::NewDelivery> same_time;
  for (int i = 0; i < 7; ++i) {
    auto d = test::sleep_delivery("late-" + std::to_string(i), "l" + std::to_string(i), 50 + i);
    d.received_at_ms = kRetentionNowMs - 40 * kDayMs;  // one millisecond for all
    same_time.push_back(std::move(d));
  }
  test::append_deliveries(db, same_time);
  test::apply_inbox(db);
  auto retention = store::open_sqlite_body_retention(db);
  BOOST_REQUIRE_MESSAGE(retention, retention.error());
  const int64_t cutoff = kRetentionNowMs - 30 * kDayMs;
  auto walked = (*retention)->remove_bodies(cutoff, 10, 1);  // the walk stops at seq 1
  BOOST_REQUIRE_MESSAGE(walked, walked.error());
  BOOST_TEST(walked->deliveries == 0);
  std::vector<int64_t> removed_per_step;
  store::LateCursor after;
  for (;;) {
    auto step = (*retention)->remove_late_bodies(cutoff, after, 3, 1);
    BOOST_REQUIRE_MESSAGE(step, step.error());
    removed_per_step.push_back(step->removed.deliveries);
    BOOST_REQUIRE(removed_per_step.size() < 10u);
    if (step->done) break;
    after = step->next;
  }
  BOOST_TEST(removed_per_step == (std::vector<int64_t>{3, 3, 1}), boost::test_tools::per_element());
  BOOST_TEST(test::count(db, "removed_bodies") == 7);
  BOOST_TEST(test::count(db, "removed_bodies WHERE seq = 1") == 0);
}

// As a user runs it: `serve` with [retention] on a database with old and new deliveries,
// then a duplicate, capture, replay of that capture, and rebuild.
BOOST_AUTO_TEST_CASE(serve_removes_old_bodies_and_dedup_capture_replay_and_rebuild_go_on) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const auto now_ms = unix_now_ms();
  std::vector<store::NewDelivery> old_ones, recent;
  for (int i = 0; i < 20; ++i) {
    auto d = test::sleep_delivery("old-" + std::to_string(i), "old-summary-" + std::to_string(i), 60 + i);
    d.received_at_ms = now_ms - 40 * kDayMs + i;
    old_ones.push_back(std::move(d));
  }
  for (int i = 0; i < 3; ++i) {
    auto d = test::sleep_delivery("new-" + std::to_string(i), "new-summary-" + std::to_string(i), 80 + i);
    d.received_at_ms = now_ms - kDayMs + i;
    recent.push_back(std::move(d));
  }
  {
    auto db = test::open_store(path);
    test::append_deliveries(db, old_ones);
    test::append_deliveries(db, recent);
  }
  test::ServerProcess server(dir, "[retention]\nbody_days = 30\n");
  BOOST_REQUIRE(server.wait_for_log("\"event\":\"bodies_removed\"", std::chrono::seconds(30)));
  BOOST_TEST(server.wait_for_log("\"deliveries\":20", std::chrono::seconds(1)));
  {
    test::HttpClient metrics_client(server.port());
    const auto metrics = metrics_client.get("/metrics");
    BOOST_TEST(metrics.body.find("healthhook_bodies_removed_total 20\n") != std::string::npos, metrics.body);
  }
  {
    auto db = test::open_store(path);
    BOOST_TEST(test::count(db, "removed_bodies") == 20);
    BOOST_TEST(test::count(db, "removed_bodies WHERE seq > 20") == 0);
    BOOST_TEST(test::count(db, "deliveries WHERE seq <= 20 AND status = 'processed'") == 20);
  }
  // Still a duplicate: the message id outlives the body.
  test::HttpClient client(server.port());
  auto again = client.post_webhook(server.secret(), "old-3", "{\"event_type\":\"daily.data.sleep.updated\"}");
  BOOST_TEST(again.status == 200);
  BOOST_TEST(again.body.find("\"duplicate\"") != std::string::npos, again.body);
  BOOST_TEST(server.stop() == 0);

  // capture marks the rows without a body; replaying it skips them without failing.
  const std::string capture = dir.file("capture.jsonl");
  auto captured = test::run_healthhook({"capture", "--database", path, "--output", capture});
  BOOST_TEST_REQUIRE(captured.exit_code == 0, captured.stderr_text);
  const std::string lines = retention_read(capture);
  size_t marked = 0;
  for (size_t at = lines.find("\"body_removed\":{\"removed_at_ms\":"); at != std::string::npos;
       at = lines.find("\"body_removed\":{\"removed_at_ms\":", at + 1)) {
    ++marked;
  }
  BOOST_TEST(marked == 20u);
  BOOST_TEST(lines.find("\"id\":\"new-0\"") != std::string::npos);
  auto replayed = test::run_healthhook({"replay", capture, "--database", dir.file("copy.db")});
  BOOST_TEST(replayed.exit_code == 0, replayed.stderr_text);
  BOOST_TEST(replayed.stdout_text.find("\"lines\":23,\"stored\":3,") != std::string::npos, replayed.stdout_text);
  BOOST_TEST(replayed.stdout_text.find("\"failed\":0,\"bodies_removed\":20") != std::string::npos,
             replayed.stdout_text);

  // rebuild would drop the summaries retention kept (it emptied them, exit 0, quietly in
  // the summary line): it refuses, saying how many and what, before it changes anything.
  auto refused = test::run_healthhook({"rebuild", "--database", path});
  BOOST_TEST(refused.exit_code == 1, refused.stderr_text);
  BOOST_TEST(std::count(refused.stderr_text.begin(), refused.stderr_text.end(), '\n') == 1, refused.stderr_text);
  BOOST_TEST(refused.stderr_text.find("healthhook rebuild: 20 deliveries whose body retention removed (seq 1-20) "
                                      "wrote rows that a rebuild cannot re-derive and would drop (21 changes in "
                                      "the feed, 21 rows); nothing was changed (--drop-expired rebuilds without "
                                      "them)") != std::string::npos,
             refused.stderr_text);
  BOOST_TEST(refused.stdout_text.empty(), refused.stdout_text);
  {
    auto db = test::open_store(path);
    BOOST_TEST(test::count(db, "summaries") == 23);
    BOOST_TEST(test::count(db, "changes") == 24);  // a summary each, and the provider
  }

  // --drop-expired: rebuild says which deliveries it could not re-derive; their summaries
  // are gone, the others are back, outcomes unchanged.
  auto rebuilt = test::run_healthhook({"rebuild", "--drop-expired", "--database", path});
  BOOST_TEST(rebuilt.exit_code == 0, rebuilt.stderr_text);
  const std::string which = "20 deliveries without a body (removed by retention or an erasure: seq 1-20)";
  BOOST_TEST(rebuilt.stderr_text.find("rebuild: warning: " + which) != std::string::npos, rebuilt.stderr_text);
  BOOST_TEST(rebuilt.stdout_text.find("rebuild: not re-derived: " + which) != std::string::npos,
             rebuilt.stdout_text);
  auto db = test::open_store(path);
  BOOST_TEST(test::count(db, "summaries") == 3);
  BOOST_TEST(test::count(db, "summaries WHERE id LIKE 'old-%'") == 0);
  BOOST_TEST(test::count(db, "deliveries WHERE status = 'processed'") == 23);

  // Nothing of theirs left to lose: the next rebuild needs no flag.
  auto rebuilt_again = test::run_healthhook({"rebuild", "--database", path});
  BOOST_TEST(rebuilt_again.exit_code == 0, rebuilt_again.stderr_text);
  BOOST_TEST(rebuilt_again.stdout_text.find("rebuild: not re-derived: " + which) != std::string::npos,
             rebuilt_again.stdout_text);
  BOOST_TEST(test::count(db, "summaries") == 3);
}

BOOST_AUTO_TEST_CASE(body_days_is_checked) {
  TempDir dir;
  dir.write("secret", random_secret() + "\n");
  const std::string config = dir.write("bad.toml", "signing_secret_files = [\"secret\"]\n[retention]\nbody_days = -1\n");
  auto checked = test::run_healthhook({"check-config", "--config", config});
  BOOST_TEST(checked.exit_code == 2);
  BOOST_TEST(checked.stderr_text.find("retention.body_days: must be between 0 and 36500, got -1") != std::string::npos,
             checked.stderr_text);
}

BOOST_AUTO_TEST_SUITE_END()
