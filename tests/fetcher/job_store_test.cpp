// The jobs table as a queue (store/sqlite/jobs/job_store.h, job_admin.h) on a real database
// file: claiming, conditional updates, crash recovery, and the admin operations.
#include <boost/test/unit_test.hpp>

#include "store/sqlite/database.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "store/sqlite/jobs/job_store.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(job_store_test)

using namespace hh;

namespace {

template <typename T>
T must(Result<T> result) {
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  return std::move(result.value());
}

struct Db {
  test::TempDir dir;
  sqlite::Connection db = must(store::open_for_writing(dir.file("jobs.db"), {}));
  store::JobStore jobs = must(store::JobStore::create(db));

  // As store/sqlite/derived/follow_up_jobs.cpp queues a job.
  int64_t queue(std::string_view kind, std::string_view key, int64_t due, int64_t trigger, std::string_view payload) {
    auto stmt = must(db.prepare(
        "INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, "
        "updated_at) VALUES (?1, ?2, 'queued', 0, ?3, ?4, ?5, ?3, ?3) "
        "ON CONFLICT (kind, job_key) DO UPDATE SET state = 'queued', attempts = 0, last_error = NULL, "
        "next_attempt_at = excluded.next_attempt_at, trigger_seq = excluded.trigger_seq, payload = excluded.payload, "
        "updated_at = excluded.updated_at WHERE excluded.trigger_seq > jobs.trigger_seq"));
    stmt.bind(1, kind).bind(2, key).bind(3, due).bind(4, trigger).bind(5, payload);
    BOOST_REQUIRE(stmt.run().ok());
    auto id = must(db.prepare("SELECT job_id FROM jobs WHERE kind = ?1 AND job_key = ?2"));
    id.bind(1, kind).bind(2, key);
    BOOST_REQUIRE(must(id.step()));
    return id.column_int(0);
  }
  int64_t stream(std::string_view workout, int64_t due = 1000, int64_t trigger = 1) {
    return queue("workout_stream", workout, due, trigger,
                 "{\"workout_id\":\"" + std::string(workout) + "\",\"user_id\":\"u\",\"provider\":\"garmin\"}");
  }
  store::JobRow row(int64_t id) { return must(store::find_job(db, id)).value(); }
};

std::vector<int64_t> ids(const std::vector<store::ClaimedJob>& jobs) {
  std::vector<int64_t> out;
  for (const auto& job : jobs) out.push_back(job.job_id);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(claims_only_due_queued_jobs_oldest_due_first) {
  Db t;
  const int64_t later = t.stream("w-later", 5000);
  const int64_t first = t.stream("w-first", 1000);
  const int64_t second = t.stream("w-second", 2000);
  auto claimed = must(t.jobs.claim_due(3000, 10, {}));
  BOOST_TEST(ids(claimed) == (std::vector<int64_t>{first, second}));
  BOOST_TEST(t.row(first).state == "running");
  BOOST_TEST(t.row(later).state == "queued");
  BOOST_TEST(must(t.jobs.claim_due(3000, 10, {})).empty());  // running jobs are not claimed twice
  BOOST_TEST(claimed[0].workout_id == "w-first");
  BOOST_TEST(claimed[0].user_id == "u");
  BOOST_TEST(claimed[0].provider == "garmin");
  BOOST_TEST(claimed[0].payload_valid);
  BOOST_TEST(claimed[0].page == 0);
}

BOOST_AUTO_TEST_CASE(claims_respect_the_limit_and_skip_busy_ids) {
  Db t;
  const int64_t a = t.stream("a"), b = t.stream("b"), c = t.stream("c");
  const std::vector<int64_t> busy{a};
  auto claimed = must(t.jobs.claim_due(5000, 1, busy));
  BOOST_TEST(ids(claimed) == (std::vector<int64_t>{b}));
  BOOST_TEST(t.row(a).state == "queued");
  BOOST_TEST(t.row(c).state == "queued");
}

BOOST_AUTO_TEST_CASE(a_payload_that_is_not_json_is_claimed_and_flagged) {
  Db t;
  t.queue("workout_stream", "bad", 0, 1, "not json");
  auto claimed = must(t.jobs.claim_due(10, 10, {}));
  BOOST_REQUIRE_EQUAL(claimed.size(), 1u);
  BOOST_TEST(!claimed[0].payload_valid);
}

BOOST_AUTO_TEST_CASE(jobs_left_running_are_requeued_with_an_attempt_counted) {
  Db t;
  const int64_t a = t.stream("a"), b = t.stream("b"), c = t.stream("c");
  must(t.jobs.claim_due(5000, 10, {}));
  BOOST_REQUIRE(t.db.exec("UPDATE jobs SET attempts = 4 WHERE job_id = " + std::to_string(c)).ok());
  BOOST_TEST(must(t.jobs.requeue_interrupted(9000, 5)) == 3);
  BOOST_TEST(t.row(a).state == "queued");
  BOOST_TEST(t.row(a).attempts == 1);
  BOOST_TEST(t.row(a).next_attempt_at == 9000);
  BOOST_TEST(t.row(b).last_error.value().starts_with("interrupted"));
  BOOST_TEST(t.row(c).state == "dead");  // fifth attempt of five: a job that kills the process stops
  BOOST_TEST(must(t.jobs.requeue_interrupted(9000, 5)) == 0);
}

BOOST_AUTO_TEST_CASE(progress_keeps_payload_keys_it_does_not_own) {
  Db t;
  const int64_t id = t.queue("backfill", "k", 0, 4,
                             R"({"user_id":"u","resource":"heartrate","provider":"oura","start":"2024-01-01T00:00:00Z",)"
                             R"("end":"2024-01-02T00:00:00Z","note":"kept"})");
  auto job = must(t.jobs.claim_due(10, 1, {})).at(0);
  store::JobProgress progress{.page = 1, .cursor = "c1", .next_start_ms = std::nullopt, .complete = false};
  BOOST_TEST(must(t.jobs.record_progress_in_transaction(job, progress, 20)));
  auto row = t.row(id);
  BOOST_TEST(row.state == "running");
  BOOST_TEST(row.payload.find("\"note\":\"kept\"") != std::string::npos);
  BOOST_TEST(row.payload.find("\"page\":1") != std::string::npos);
  BOOST_TEST(row.payload.find("\"cursor\":\"c1\"") != std::string::npos);
  progress = {.page = 2, .cursor = std::nullopt, .next_start_ms = std::nullopt, .complete = true};
  BOOST_TEST(must(t.jobs.record_progress_in_transaction(job, progress, 30)));
  row = t.row(id);
  BOOST_TEST(row.state == "done");
  BOOST_TEST(row.attempts == 0);
  BOOST_TEST(row.updated_at == 30);
  auto again = must(t.jobs.claim_due(100, 1, {}));
  BOOST_TEST(again.empty());
}

BOOST_AUTO_TEST_CASE(a_job_retriggered_while_running_is_left_to_the_new_trigger) {
  Db t;
  const int64_t id = t.stream("w", 0, 1);
  auto job = must(t.jobs.claim_due(10, 1, {})).at(0);
  t.stream("w", 50, 2);  // the processor applies a newer notice
  BOOST_TEST(t.row(id).state == "queued");
  const store::RetryDecision decision{.dead = false, .attempts = 1, .next_attempt_at_ms = 999};
  BOOST_TEST(!must(t.jobs.record_failure(job, decision, "HTTP 500", 60)));
  BOOST_TEST(!must(t.jobs.record_progress_in_transaction(job, {.page = 1, .cursor = std::nullopt, .next_start_ms = std::nullopt, .complete = true}, 60)));
  BOOST_TEST(!must(t.jobs.release(job, 60)));
  auto row = t.row(id);
  BOOST_TEST(row.state == "queued");
  BOOST_TEST(row.trigger_seq == 2);
  BOOST_TEST(row.attempts == 0);
  BOOST_TEST(row.next_attempt_at == 50);
}

BOOST_AUTO_TEST_CASE(failures_and_releases) {
  Db t;
  const int64_t id = t.stream("w");
  auto job = must(t.jobs.claim_due(5000, 1, {})).at(0);
  BOOST_TEST(must(t.jobs.record_failure(job, {.dead = false, .attempts = 1, .next_attempt_at_ms = 8000}, "HTTP 503",
                                        5000)));
  auto row = t.row(id);
  BOOST_TEST(row.state == "queued");
  BOOST_TEST(row.attempts == 1);
  BOOST_TEST(row.next_attempt_at == 8000);
  BOOST_TEST(row.last_error.value() == "HTTP 503");
  job = must(t.jobs.claim_due(8000, 1, {})).at(0);
  BOOST_TEST(job.attempts == 1);
  BOOST_TEST(must(t.jobs.release(job, 8100)));
  BOOST_TEST(t.row(id).attempts == 1);  // not counted
  BOOST_TEST(t.row(id).state == "queued");
  job = must(t.jobs.claim_due(8100, 1, {})).at(0);
  BOOST_TEST(must(t.jobs.record_failure(job, {.dead = true, .attempts = 2, .next_attempt_at_ms = 9000}, "HTTP 404",
                                        9000)));
  BOOST_TEST(t.row(id).state == "dead");
  BOOST_TEST(must(t.jobs.claim_due(1'000'000, 1, {})).empty());
}

BOOST_AUTO_TEST_CASE(admin_lists_and_requeues) {
  Db t;
  const int64_t dead = t.stream("dead");
  const int64_t done = t.queue("backfill", "k", 0, 1, R"({"user_id":"u","resource":"heartrate","page":3,"cursor":null})");
  const int64_t running = t.stream("running");
  BOOST_REQUIRE(t.db.exec("UPDATE jobs SET state = 'dead', attempts = 8, last_error = 'HTTP 404' WHERE job_id = " +
                          std::to_string(dead)).ok());
  BOOST_REQUIRE(t.db.exec("UPDATE jobs SET state = 'done', payload = json_set(payload, '$.next_start_ms', 5) "
                          "WHERE job_id = " + std::to_string(done)).ok());
  BOOST_REQUIRE(t.db.exec("UPDATE jobs SET state = 'running' WHERE job_id = " + std::to_string(running)).ok());

  BOOST_TEST(must(store::list_jobs(t.db, std::nullopt)).size() == 3u);
  auto dead_only = must(store::list_jobs(t.db, std::string("dead")));
  BOOST_REQUIRE_EQUAL(dead_only.size(), 1u);
  BOOST_TEST(dead_only[0].job_id == dead);
  BOOST_TEST(!must(store::find_job(t.db, 999)));

  BOOST_TEST(static_cast<int>(must(store::requeue_job(t.db, running, 7000))) ==
             static_cast<int>(store::RequeueStatus::running));
  BOOST_TEST(static_cast<int>(must(store::requeue_job(t.db, 999, 7000))) ==
             static_cast<int>(store::RequeueStatus::not_found));
  BOOST_TEST(static_cast<int>(must(store::requeue_job(t.db, done, 7000))) ==
             static_cast<int>(store::RequeueStatus::requeued));
  auto row = t.row(done);
  BOOST_TEST(row.state == "queued");
  BOOST_TEST(row.next_attempt_at == 7000);
  // A done backfill starts its window again but keeps counting pages (new message ids).
  BOOST_TEST(row.payload == R"({"user_id":"u","resource":"heartrate","page":3})");

  BOOST_TEST(must(store::requeue_dead_jobs(t.db, 7500)) == 1);
  row = t.row(dead);
  BOOST_TEST(row.state == "queued");
  BOOST_TEST(row.attempts == 0);
  BOOST_TEST(row.next_attempt_at == 7500);
  BOOST_TEST(must(store::requeue_dead_jobs(t.db, 7500)) == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // job_store_test
