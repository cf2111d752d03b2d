// The follow-up job queue and its administration on PostgreSQL (store/postgres/jobs/):
// the same operations through the SQLite and the PostgreSQL implementation leave the same
// rows and claim the same jobs; and what only several instances sharing a store need:
// concurrent claims never share a job, an expired lease is taken over with an attempt
// counted, a live one is left to its instance.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>

#include "store/jobs/job_admin.h"
#include "store/postgres/jobs/pg_job_admin.h"
#include "store/postgres/jobs/pg_job_queue.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "store/sqlite/jobs/job_store.h"
#include "tests/postgres/twin_stores.h"

BOOST_AUTO_TEST_SUITE(pg_jobs_test)

using namespace hh;
using test::twin_must;

namespace {

constexpr int64_t kPgjLease = 1000;
// Long enough that no lease passes during a scripted run (SQLite has no leases).
constexpr int64_t kPgjTwinLease = 1'000'000;

// Both queues over twin stores.
struct TwinQueues {
  test::TwinStores t;
  store::JobStore lite = twin_must(store::JobStore::create(t.lite));
  std::unique_ptr<store::JobQueue> pg = twin_must(store::open_postgres_job_queue(t.pg, kPgjTwinLease));

  // As store/sqlite/derived/follow_up_jobs.cpp queues a job (SQL valid on both).
  void queue(std::string_view kind, std::string_view key, int64_t due, int64_t trigger, std::string_view payload) {
    std::string quoted;
    for (const char c : payload) {
      quoted += c;
      if (c == '\'') quoted += '\'';
    }
    t.exec("INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, "
           "updated_at) VALUES ('" + std::string(kind) + "', '" + std::string(key) + "', 'queued', 0, " +
           std::to_string(due) + ", " + std::to_string(trigger) + ", '" + quoted + "', " + std::to_string(due) + ", " +
           std::to_string(due) + ") ON CONFLICT (kind, job_key) DO UPDATE SET state = 'queued', attempts = 0, "
           "last_error = NULL, next_attempt_at = excluded.next_attempt_at, trigger_seq = excluded.trigger_seq, "
           "payload = excluded.payload, updated_at = excluded.updated_at "
           "WHERE excluded.trigger_seq > jobs.trigger_seq");
  }
  void stream(std::string_view workout, int64_t due = 1000, int64_t trigger = 1) {
    queue("workout_stream", workout, due, trigger,
          "{\"workout_id\":\"" + std::string(workout) + "\",\"user_id\":\"u\",\"provider\":\"garmin\"}");
  }
  // Every job row, the same on both (lease_until is PostgreSQL's own and not compared).
  std::vector<std::string> jobs() {
    return t.same_rows("SELECT job_id, kind, job_key, state, attempts, next_attempt_at, last_error, trigger_seq, "
                       "payload, created_at, updated_at FROM jobs ORDER BY job_id", 11);
  }
};

std::string pgj_describe(const store::ClaimedJob& j) {
  return std::to_string(j.job_id) + "|" + j.kind + "|" + j.job_key + "|" + std::to_string(j.attempts) + "|" +
         std::to_string(j.trigger_seq) + "|" + (j.payload_valid ? "valid" : "invalid") + "|" + j.workout_id + "|" +
         j.user_id + "|" + j.provider + "|" + j.resource + "|" + j.start + "|" + j.end + "|" + std::to_string(j.page) +
         "|" + j.cursor.value_or("NULL") + "|" + (j.next_start_ms ? std::to_string(*j.next_start_ms) : "NULL") + "|" +
         j.team_id;
}

std::vector<std::string> pgj_describe(const std::vector<store::ClaimedJob>& jobs) {
  std::vector<std::string> out;
  for (const auto& j : jobs) out.push_back(pgj_describe(j));
  return out;
}

// Claims on both; checks that they claimed the same; returns them (PostgreSQL's).
std::vector<store::ClaimedJob> pgj_claim(TwinQueues& q, int64_t now, size_t limit, std::vector<int64_t> busy = {}) {
  auto lite = twin_must(q.lite.claim_due(now, limit, busy));
  auto pg = twin_must(q.pg->claim_due(now, limit, busy));
  BOOST_TEST(pgj_describe(lite) == pgj_describe(pg));
  return pg;
}

const store::ClaimedJob& pgj_by_key(const std::vector<store::ClaimedJob>& jobs, std::string_view key) {
  auto found = std::find_if(jobs.begin(), jobs.end(), [&](const auto& j) { return j.job_key == key; });
  BOOST_REQUIRE(found != jobs.end());
  return *found;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_same_operations_claim_the_same_jobs_and_leave_the_same_rows) {
  TwinQueues q;
  q.t.exec("INSERT INTO users (user_id, client_user_id, team_id, first_seen_ms, last_seen_ms, seq) "
           "VALUES ('u', 'c', 'team-of-u', 1, 1, 1)");
  q.stream("w-later", 5000);
  q.stream("w-first", 1000);
  q.stream("w-second", 2000);
  q.queue("workout_stream", "bad", 0, 1, "not json");
  q.queue("backfill", "bf", 500, 4,
          R"({"user_id":"u2", "resource":"heartrate","provider":"oura","start":"2024-01-01T00:00:00Z",)"
          R"("end":"2024-01-02T00:00:00Z","note":"kept","team_id":"t2","page":2.0,"next_start_ms":17})");
  q.queue("backfill", "bf-array", 600, 4, R"([1, 2])");
  q.jobs();

  // The limit, busy ids, the payload's fields, the team from the payload or from `users`.
  auto first = pgj_claim(q, 3000, 2, {5});
  BOOST_REQUIRE_EQUAL(first.size(), 2u);
  BOOST_TEST(!pgj_by_key(first, "bad").payload_valid);
  BOOST_TEST(pgj_by_key(first, "bf-array").payload_valid);
  auto rest = pgj_claim(q, 5000, 10);
  BOOST_TEST(rest.size() == 4u);
  BOOST_TEST(pgj_by_key(rest, "w-first").team_id == "team-of-u");
  BOOST_TEST(pgj_claim(q, 5000, 10).empty());
  q.jobs();

  // Progress of a stream and of a backfill (payload keys set as json_set does), done.
  const auto& backfill = pgj_by_key(rest, "bf");
  BOOST_TEST(backfill.team_id == "t2");
  BOOST_TEST(backfill.page == 2);
  store::JobProgress progress{.page = 3, .cursor = "c\"1", .next_start_ms = std::nullopt, .complete = false};
  BOOST_TEST(twin_must(q.lite.record_progress_in_transaction(backfill, progress, 3100)));
  BOOST_TEST(twin_must(q.pg->record_progress_in_transaction(backfill, progress, 3100)));
  progress = {.page = 4, .cursor = std::nullopt, .next_start_ms = 99, .complete = true};
  BOOST_TEST(twin_must(q.lite.record_progress_in_transaction(backfill, progress, 3200)));
  BOOST_TEST(twin_must(q.pg->record_progress_in_transaction(backfill, progress, 3200)));
  const auto& stream = pgj_by_key(rest, "w-first");
  progress = {.page = 1, .cursor = std::nullopt, .next_start_ms = std::nullopt, .complete = false};
  BOOST_TEST(twin_must(q.lite.record_progress_in_transaction(stream, progress, 3300)));
  BOOST_TEST(twin_must(q.pg->record_progress_in_transaction(stream, progress, 3300)));
  q.jobs();

  // A failure, a release, a job re-triggered while running (its updates are refused).
  const store::RetryDecision decision{.dead = false, .attempts = 1, .next_attempt_at_ms = 8000};
  BOOST_TEST(twin_must(q.lite.record_failure(stream, decision, "HTTP 503", 3400)));
  BOOST_TEST(twin_must(q.pg->record_failure(stream, decision, "HTTP 503", 3400)));
  const auto& second = pgj_by_key(rest, "w-second");
  BOOST_TEST(twin_must(q.lite.release(second, 3500)));
  BOOST_TEST(twin_must(q.pg->release(second, 3500)));
  const auto& array = pgj_by_key(first, "bf-array");
  BOOST_TEST(twin_must(q.lite.release(array, 3500)));
  BOOST_TEST(twin_must(q.pg->release(array, 3500)));
  const auto& later = pgj_by_key(rest, "w-later");
  q.stream("w-later", 6000, 2);
  BOOST_TEST(!twin_must(q.lite.record_failure(later, decision, "HTTP 500", 3600)));
  BOOST_TEST(!twin_must(q.pg->record_failure(later, decision, "HTTP 500", 3600)));
  BOOST_TEST(!twin_must(q.lite.release(later, 3600)));
  BOOST_TEST(!twin_must(q.pg->release(later, 3600)));
  const store::RetryDecision final_failure{.dead = true, .attempts = 1, .next_attempt_at_ms = 3700};
  const auto& bad = pgj_by_key(first, "bad");
  BOOST_TEST(twin_must(q.lite.record_failure(bad, final_failure, "payload is not JSON", 3700)));
  BOOST_TEST(twin_must(q.pg->record_failure(bad, final_failure, "payload is not JSON", 3700)));
  auto claimed = pgj_claim(q, 9000, 10);
  BOOST_TEST(claimed.size() == 4u);  // w-first (attempt 1), w-second, bf-array, w-later (new trigger)
  q.jobs();

  // Left running: SQLite at its next start, PostgreSQL once the lease has passed.
  BOOST_TEST(twin_must(q.lite.requeue_interrupted(9000 + kPgjTwinLease + 1, 2)) ==
             twin_must(q.pg->requeue_interrupted(9000 + kPgjTwinLease + 1, 2)));
  const auto rows = q.jobs();
  BOOST_TEST(std::count_if(rows.begin(), rows.end(), [](const std::string& r) { return r.find("|dead|") != r.npos; }) ==
             2);  // the bad one, and w-first's second failed attempt
}

BOOST_AUTO_TEST_CASE(job_admin_gives_the_same_answers_and_rows) {
  TwinQueues q;
  q.stream("dead");
  q.queue("backfill", "k", 0, 1, R"({"user_id":"u", "resource":"heartrate","page":3,"cursor":"x","next_start_ms":5})");
  q.stream("running");
  q.stream("queued");
  q.t.exec("UPDATE jobs SET state = 'dead', attempts = 8, last_error = 'HTTP 404' WHERE job_key = 'dead'");
  q.t.exec("UPDATE jobs SET state = 'done' WHERE job_key = 'k'");
  q.t.exec("UPDATE jobs SET state = 'running' WHERE job_key = 'running'");
  q.t.inbox(41, "m41", "webhook", 1, "daily.data.sleep.created", "{}", "{}");
  auto lite = twin_must(store::open_sqlite_job_admin(q.t.lite_path));
  auto pg = twin_must(store::open_postgres_job_admin({q.t.pg_uri, ""}));

  auto describe = [](const std::vector<store::JobRow>& rows) {
    std::vector<std::string> out;
    for (const auto& r : rows) {
      out.push_back(std::to_string(r.job_id) + "|" + r.kind + "|" + r.job_key + "|" + r.state + "|" +
                    std::to_string(r.attempts) + "|" + std::to_string(r.next_attempt_at) + "|" +
                    r.last_error.value_or("NULL") + "|" + std::to_string(r.trigger_seq) + "|" + r.payload + "|" +
                    std::to_string(r.created_at) + "|" + std::to_string(r.updated_at));
    }
    return out;
  };
  BOOST_TEST(describe(twin_must(lite->list(std::nullopt))) == describe(twin_must(pg->list(std::nullopt))));
  const std::optional<std::string> dead("dead");
  BOOST_TEST(describe(twin_must(lite->list(dead))) == describe(twin_must(pg->list(dead))));
  BOOST_TEST(!twin_must(pg->find(999)));
  BOOST_TEST(twin_must(pg->find(2)).value().job_key == "k");
  for (const int64_t id : {3, 999, 2, 4}) {
    BOOST_TEST(static_cast<int>(twin_must(lite->requeue(id, 7000))) ==
               static_cast<int>(twin_must(pg->requeue(id, 7000))));
  }
  BOOST_TEST(twin_must(lite->requeue_dead(7500)) == twin_must(pg->requeue_dead(7500)));
  const auto rows = q.jobs();
  BOOST_TEST(rows.at(1).find(R"({"user_id":"u","resource":"heartrate","page":3})") != std::string::npos, rows.at(1));

  // Backfills: new, pending, and a done one queued again; the trigger is the newest delivery.
  q.t.exec("UPDATE jobs SET state = 'done' WHERE job_key = 'dead'");
  std::vector<store::BackfillWindow> windows(3);
  windows[0] = {.user_id = "u", .resource = "heartrate", .provider = "oura", .start_ms = 0, .end_ms = 86'400'000,
                .team_id = ""};
  windows[1] = windows[0];
  windows[2] = {.user_id = "v", .resource = "sleep", .provider = "garmin", .start_ms = 0, .end_ms = 86'400'000,
                .team_id = ""};
  auto lite_queued = twin_must(lite->queue_backfills(windows, 8000));
  auto pg_queued = twin_must(pg->queue_backfills(windows, 8000));
  BOOST_REQUIRE_EQUAL(lite_queued.size(), pg_queued.size());
  for (size_t i = 0; i < lite_queued.size(); ++i) {
    BOOST_TEST(lite_queued[i].job_id == pg_queued[i].job_id);
    BOOST_TEST(lite_queued[i].job_key == pg_queued[i].job_key);
    BOOST_TEST(static_cast<int>(lite_queued[i].outcome) == static_cast<int>(pg_queued[i].outcome));
    BOOST_TEST(lite_queued[i].previous_state == pg_queued[i].previous_state);
  }
  auto again = twin_must(pg->queue_backfills(windows, 8100));
  BOOST_TEST(static_cast<int>(again[0].outcome) == static_cast<int>(store::QueuedBackfill::Outcome::pending));
  twin_must(lite->queue_backfills(windows, 8100));
  q.jobs();
}

BOOST_AUTO_TEST_CASE(instances_claiming_together_never_get_the_same_job) {
  test::TwinStores t;
  constexpr int kJobs = 300;
  BOOST_REQUIRE(t.pg.exec("INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, "
                          "created_at, updated_at) SELECT 'workout_stream', 'w' || i, 'queued', 0, i, 1, "
                          "'{\"workout_id\":\"w' || i || '\"}', 0, 0 FROM generate_series(1, " +
                          std::to_string(kJobs) + ") AS i").ok());
  std::mutex mutex;
  std::vector<int64_t> all;
  std::vector<std::string> errors;
  std::vector<std::thread> instances;
  for (int i = 0; i < 3; ++i) {
    instances.emplace_back([&] {
      auto db = store::connect_migrated({t.pg_uri, ""});
      if (!db) return void(errors.push_back(db.error()));
      auto queue = store::open_postgres_job_queue(*db, 60'000);
      if (!queue) return void(errors.push_back(queue.error()));
      for (int empty = 0; empty < 3;) {
        auto claimed = (*queue)->claim_due(1'000'000, 7, {});
        std::lock_guard lock(mutex);
        if (!claimed) return void(errors.push_back(claimed.error()));
        if (claimed->empty()) ++empty;
        for (const auto& job : *claimed) all.push_back(job.job_id);
      }
    });
  }
  for (auto& instance : instances) instance.join();
  BOOST_TEST(errors.empty());
  std::sort(all.begin(), all.end());
  BOOST_TEST(all.size() == static_cast<size_t>(kJobs));
  BOOST_TEST((std::adjacent_find(all.begin(), all.end()) == all.end()));  // none twice
  BOOST_TEST(t.pg.query_int("SELECT count(*) FROM jobs WHERE state = 'running'")->value_or(0) == kJobs);
}

BOOST_AUTO_TEST_CASE(an_expired_lease_is_taken_over_with_an_attempt_counted) {
  test::TwinStores t;
  pg::Connection other_db = t.pg_connection();
  auto mine = twin_must(store::open_postgres_job_queue(t.pg, kPgjLease));
  auto other = twin_must(store::open_postgres_job_queue(other_db, kPgjLease));
  BOOST_REQUIRE(t.pg.exec("INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, "
                          "created_at, updated_at) VALUES ('backfill', 'b', 'queued', 0, 0, 1, '{\"page\":0}', 0, 0)")
                    .ok());
  const auto job = twin_must(mine->claim_due(1000, 10, {})).at(0);
  const store::JobProgress page1{.page = 1, .cursor = "c", .next_start_ms = std::nullopt, .complete = false};
  BOOST_TEST(twin_must(mine->record_progress_in_transaction(job, page1, 1500)));  // lease until 2500

  BOOST_TEST(twin_must(other->claim_due(2400, 10, {})).empty());  // still live
  BOOST_TEST(twin_must(other->requeue_interrupted(2400, 8)) == 0);
  auto taken = twin_must(other->claim_due(2600, 10, {}));
  BOOST_REQUIRE_EQUAL(taken.size(), 1u);
  BOOST_TEST(taken[0].attempts == 1);
  BOOST_TEST(taken[0].page == 1);
  BOOST_TEST(taken[0].cursor.value_or("") == "c");
  auto error = t.pg.query("SELECT last_error FROM jobs");
  BOOST_TEST(error->text(0, 0).starts_with("interrupted"));

  // The first owner wakes up: its updates are refused, the new owner's are not.
  const store::JobProgress page2{.page = 2, .cursor = "d", .next_start_ms = std::nullopt, .complete = false};
  BOOST_TEST(!twin_must(mine->record_progress_in_transaction(job, page2, 2700)));
  BOOST_TEST(!twin_must(mine->release(job, 2700)));
  BOOST_TEST(twin_must(other->record_progress_in_transaction(taken[0], page2, 2700)));
  BOOST_TEST(t.pg.query_int("SELECT attempts FROM jobs")->value_or(-1) == 0);  // progress resets it

  // A job that keeps losing its instance dies when its attempts are used up.
  BOOST_TEST(twin_must(mine->requeue_interrupted(0, 2)) == 0);  // (sets max_attempts: nothing expired at 0)
  BOOST_TEST(twin_must(mine->claim_due(10'000, 10, {})).size() == 1u);  // taken over again: attempt 1
  BOOST_TEST(twin_must(other->requeue_interrupted(20'000, 2)) == 1);     // attempt 2 of 2
  BOOST_TEST(t.pg.query("SELECT state FROM jobs")->text(0, 0) == "dead");
}

BOOST_AUTO_TEST_CASE(start_up_requeues_expired_leases_only) {
  test::TwinStores t;
  pg::Connection other_db = t.pg_connection();
  auto live = twin_must(store::open_postgres_job_queue(t.pg, kPgjLease));
  auto starting = twin_must(store::open_postgres_job_queue(other_db, kPgjLease));
  BOOST_REQUIRE(t.pg.exec("INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, "
                          "created_at, updated_at) VALUES ('workout_stream', 'a', 'queued', 0, 0, 1, '{}', 0, 0), "
                          "('workout_stream', 'b', 'queued', 0, 5000, 1, '{}', 0, 0)").ok());
  BOOST_REQUIRE_EQUAL(twin_must(live->claim_due(1000, 10, {})).size(), 1u);   // a: lease until 2000
  BOOST_REQUIRE_EQUAL(twin_must(live->claim_due(5000, 10, {})).size(), 2u);   // a again (expired), b: until 6000
  BOOST_TEST(twin_must(starting->requeue_interrupted(5500, 8)) == 0);         // both live
  BOOST_TEST(t.pg.query_int("SELECT count(*) FROM jobs WHERE state = 'running'")->value_or(0) == 2);
  BOOST_TEST(twin_must(starting->requeue_interrupted(6001, 8)) == 2);
  BOOST_TEST(t.pg.query_int("SELECT sum(attempts) FROM jobs")->value_or(0) == 3);  // a twice, b once
}

BOOST_AUTO_TEST_SUITE_END()
