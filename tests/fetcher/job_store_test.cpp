// The jobs table as a queue (store/jobs/job_queue.h) and its administration
// (store/jobs/job_admin.h) on both backends, each opened as `serve` and `healthhook jobs`
// open it (tests/support/backend_store.h): claiming, conditional updates, crash recovery,
// and the admin operations. What only several PostgreSQL instances sharing a queue need
// (leases taken over, concurrent claims) is in tests/postgres/pg_jobs_test.cpp.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "store/jobs/job_admin.h"
#include "store/jobs/job_queue.h"
#include "store/schema/dialect.h"
#include "store/sqlite/database.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "tests/support/backend_store.h"
#include "tests/support/bytes_read.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(job_store_test)

using namespace hh;
using test::twin_must;
namespace data = boost::unit_test::data;

namespace {

// A store's job queue, its admin, and jobs queued as the processor queues them.
struct JobsOf {
  explicit JobsOf(test::Backend backend) : s(backend) {}

  test::BackendStore s;
  std::unique_ptr<store::JobQueue> jobs = twin_must(s.store().open_job_queue());
  std::unique_ptr<store::JobAdmin> admin = s.job_admin();

  // As the follow-up jobs of the derived writer queue one (store/derived/follow_up_jobs.h):
  // a later trigger re-queues it.
  int64_t queue(std::string_view kind, std::string_view key, int64_t due, int64_t trigger, std::string_view payload) {
    const std::string kind_text = store::schema::sql_literal(kind), key_text = store::schema::sql_literal(key);
    const std::string due_text = std::to_string(due);
    s.exec("INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, "
           "updated_at) VALUES (" + kind_text + ", " + key_text + ", 'queued', 0, " + due_text + ", " +
           std::to_string(trigger) + ", " + store::schema::sql_literal(payload) + ", " + due_text + ", " + due_text +
           ") ON CONFLICT (kind, job_key) DO UPDATE SET state = 'queued', attempts = 0, last_error = NULL, "
           "next_attempt_at = excluded.next_attempt_at, trigger_seq = excluded.trigger_seq, "
           "payload = excluded.payload, updated_at = excluded.updated_at "
           "WHERE excluded.trigger_seq > jobs.trigger_seq");
    return std::stoll(s.value("SELECT job_id FROM jobs WHERE kind = " + kind_text + " AND job_key = " + key_text));
  }
  int64_t stream(std::string_view workout, int64_t due = 1000, int64_t trigger = 1) {
    return queue("workout_stream", workout, due, trigger,
                 "{\"workout_id\":\"" + std::string(workout) + "\",\"user_id\":\"u\",\"provider\":\"garmin\"}");
  }
  store::JobRow row(int64_t id) {
    auto found = twin_must(admin->find(id));
    BOOST_REQUIRE_MESSAGE(found, "job " << id);
    return *found;
  }
};

std::vector<int64_t> ids(const std::vector<store::ClaimedJob>& jobs) {
  std::vector<int64_t> out;
  for (const auto& job : jobs) out.push_back(job.job_id);
  return out;
}

int requeue_code(store::RequeueStatus requeued) { return static_cast<int>(requeued); }

}  // namespace

BOOST_DATA_TEST_CASE(claims_only_due_queued_jobs_oldest_due_first, data::make(test::kBothBackends), backend) {
  JobsOf t(backend);
  const int64_t later = t.stream("w-later", 5000);
  const int64_t first = t.stream("w-first", 1000);
  const int64_t second = t.stream("w-second", 2000);
  auto claimed = twin_must(t.jobs->claim_due(3000, 10, {}));
  BOOST_TEST(ids(claimed) == (std::vector<int64_t>{first, second}));
  BOOST_TEST(t.row(first).state == "running");
  BOOST_TEST(t.row(later).state == "queued");
  BOOST_TEST(twin_must(t.jobs->claim_due(3000, 10, {})).empty());  // running jobs are not claimed twice
  BOOST_TEST(claimed[0].workout_id == "w-first");
  BOOST_TEST(claimed[0].user_id == "u");
  BOOST_TEST(claimed[0].provider == "garmin");
  BOOST_TEST(claimed[0].payload_valid);
  BOOST_TEST(claimed[0].page == 0);
}

BOOST_DATA_TEST_CASE(claims_respect_the_limit_and_skip_busy_ids, data::make(test::kBothBackends), backend) {
  JobsOf t(backend);
  const int64_t a = t.stream("a"), b = t.stream("b"), c = t.stream("c");
  const std::vector<int64_t> busy{a};
  auto claimed = twin_must(t.jobs->claim_due(5000, 1, busy));
  BOOST_TEST(ids(claimed) == (std::vector<int64_t>{b}));
  BOOST_TEST(t.row(a).state == "queued");
  BOOST_TEST(t.row(c).state == "queued");
  // No longer busy: claimed with the rest.
  BOOST_TEST(ids(twin_must(t.jobs->claim_due(5000, 10, {}))) == (std::vector<int64_t>{a, c}));
}

BOOST_DATA_TEST_CASE(a_payload_that_is_not_json_is_claimed_and_flagged, data::make(test::kBothBackends), backend) {
  JobsOf t(backend);
  t.queue("workout_stream", "bad", 0, 1, "not json");
  auto claimed = twin_must(t.jobs->claim_due(10, 10, {}));
  BOOST_REQUIRE_EQUAL(claimed.size(), 1u);
  BOOST_TEST(!claimed[0].payload_valid);
}

// Left running by a crash: on SQLite any running job at start-up; on PostgreSQL, whose
// queue several instances share, one whose claim's lease has passed (JobQueue::lease()).
BOOST_DATA_TEST_CASE(jobs_left_running_are_requeued_with_an_attempt_counted, data::make(test::kBothBackends),
                     backend) {
  JobsOf t(backend);
  const int64_t a = t.stream("a"), b = t.stream("b"), c = t.stream("c");
  twin_must(t.jobs->claim_due(5000, 10, {}));
  const int64_t restart = 9000 + (t.jobs->lease() ? t.jobs->lease()->count() : 0);
  t.s.exec("UPDATE jobs SET attempts = 4 WHERE job_id = " + std::to_string(c));
  BOOST_TEST(twin_must(t.jobs->requeue_interrupted(restart, 5)) == 3);
  BOOST_TEST(t.row(a).state == "queued");
  BOOST_TEST(t.row(a).attempts == 1);
  BOOST_TEST(t.row(a).next_attempt_at == restart);
  BOOST_TEST(t.row(b).last_error.value().starts_with("interrupted"));
  BOOST_TEST(t.row(c).state == "dead");  // fifth attempt of five: a job that kills the process stops
  BOOST_TEST(twin_must(t.jobs->requeue_interrupted(restart, 5)) == 0);
}

BOOST_DATA_TEST_CASE(progress_keeps_payload_keys_it_does_not_own, data::make(test::kBothBackends), backend) {
  JobsOf t(backend);
  const int64_t id = t.queue("backfill", "k", 0, 4,
                             R"({"user_id":"u","resource":"heartrate","provider":"oura","start":"2024-01-01T00:00:00Z",)"
                             R"("end":"2024-01-02T00:00:00Z","note":"kept"})");
  auto job = twin_must(t.jobs->claim_due(10, 1, {})).at(0);
  store::JobProgress progress{.page = 1, .cursor = "c1", .next_start_ms = std::nullopt, .complete = false};
  BOOST_TEST(twin_must(t.jobs->record_progress_in_transaction(job, progress, 20)));
  auto row = t.row(id);
  BOOST_TEST(row.state == "running");
  BOOST_TEST(row.payload.find("\"note\":\"kept\"") != std::string::npos, row.payload);
  BOOST_TEST(row.payload.find("\"page\":1") != std::string::npos, row.payload);
  BOOST_TEST(row.payload.find("\"cursor\":\"c1\"") != std::string::npos, row.payload);
  progress = {.page = 2, .cursor = std::nullopt, .next_start_ms = std::nullopt, .complete = true};
  BOOST_TEST(twin_must(t.jobs->record_progress_in_transaction(job, progress, 30)));
  row = t.row(id);
  BOOST_TEST(row.state == "done");
  BOOST_TEST(row.attempts == 0);
  BOOST_TEST(row.updated_at == 30);
  BOOST_TEST(twin_must(t.jobs->claim_due(100, 1, {})).empty());
}

BOOST_DATA_TEST_CASE(a_job_retriggered_while_running_is_left_to_the_new_trigger, data::make(test::kBothBackends),
                     backend) {
  JobsOf t(backend);
  const int64_t id = t.stream("w", 0, 1);
  auto job = twin_must(t.jobs->claim_due(10, 1, {})).at(0);
  t.stream("w", 50, 2);  // the processor applies a newer notice
  BOOST_TEST(t.row(id).state == "queued");
  const store::RetryDecision decision{.dead = false, .attempts = 1, .next_attempt_at_ms = 999};
  BOOST_TEST(!twin_must(t.jobs->record_failure(job, decision, "HTTP 500", 60)));
  BOOST_TEST(!twin_must(t.jobs->record_progress_in_transaction(
      job, {.page = 1, .cursor = std::nullopt, .next_start_ms = std::nullopt, .complete = true}, 60)));
  BOOST_TEST(!twin_must(t.jobs->release(job, 60)));
  auto row = t.row(id);
  BOOST_TEST(row.state == "queued");
  BOOST_TEST(row.trigger_seq == 2);
  BOOST_TEST(row.attempts == 0);
  BOOST_TEST(row.next_attempt_at == 50);
  BOOST_TEST(!row.last_error);
}

BOOST_DATA_TEST_CASE(failures_and_releases, data::make(test::kBothBackends), backend) {
  JobsOf t(backend);
  const int64_t id = t.stream("w");
  auto job = twin_must(t.jobs->claim_due(5000, 1, {})).at(0);
  BOOST_TEST(twin_must(
      t.jobs->record_failure(job, {.dead = false, .attempts = 1, .next_attempt_at_ms = 8000}, "HTTP 503", 5000)));
  auto row = t.row(id);
  BOOST_TEST(row.state == "queued");
  BOOST_TEST(row.attempts == 1);
  BOOST_TEST(row.next_attempt_at == 8000);
  BOOST_TEST(row.last_error.value() == "HTTP 503");
  BOOST_TEST(twin_must(t.jobs->claim_due(7999, 1, {})).empty());  // not due before its backoff
  job = twin_must(t.jobs->claim_due(8000, 1, {})).at(0);
  BOOST_TEST(job.attempts == 1);
  BOOST_TEST(twin_must(t.jobs->release(job, 8100)));
  BOOST_TEST(t.row(id).attempts == 1);  // not counted
  BOOST_TEST(t.row(id).state == "queued");
  job = twin_must(t.jobs->claim_due(8100, 1, {})).at(0);
  BOOST_TEST(twin_must(
      t.jobs->record_failure(job, {.dead = true, .attempts = 2, .next_attempt_at_ms = 9000}, "HTTP 404", 9000)));
  BOOST_TEST(t.row(id).state == "dead");
  BOOST_TEST(twin_must(t.jobs->claim_due(1'000'000, 1, {})).empty());
}

BOOST_DATA_TEST_CASE(admin_lists_and_requeues, data::make(test::kBothBackends), backend) {
  JobsOf t(backend);
  const int64_t dead = t.stream("dead");
  const int64_t done = t.queue("backfill", "k", 0, 1, R"({"user_id":"u","resource":"heartrate","page":3,"cursor":null})");
  const int64_t running = t.stream("running");
  t.s.exec("UPDATE jobs SET state = 'dead', attempts = 8, last_error = 'HTTP 404' WHERE job_id = " +
           std::to_string(dead));
  t.s.exec(R"(UPDATE jobs SET state = 'done', payload = '{"user_id":"u","resource":"heartrate","page":3,)"
           R"("cursor":null,"next_start_ms":5}' WHERE job_id = )" + std::to_string(done));
  t.s.exec("UPDATE jobs SET state = 'running' WHERE job_id = " + std::to_string(running));

  BOOST_TEST(twin_must(t.admin->list(std::nullopt)).size() == 3u);
  // A page: the first by job_id, in the state asked for or in any.
  const auto first_two = twin_must(t.admin->list(std::nullopt, 2));
  BOOST_REQUIRE_EQUAL(first_two.size(), 2u);
  BOOST_TEST(first_two[0].job_id == dead);
  BOOST_TEST(first_two[1].job_id == done);
  BOOST_TEST(twin_must(t.admin->list(std::string("running"), 1)).size() == 1u);
  BOOST_TEST(twin_must(t.admin->list(std::string("dead"), 0)).empty());
  auto dead_only = twin_must(t.admin->list(std::string("dead")));
  BOOST_REQUIRE_EQUAL(dead_only.size(), 1u);
  BOOST_TEST(dead_only[0].job_id == dead);
  BOOST_TEST(!twin_must(t.admin->find(999)));

  BOOST_TEST(requeue_code(twin_must(t.admin->requeue(running, 7000))) == requeue_code(store::RequeueStatus::running));
  BOOST_TEST(requeue_code(twin_must(t.admin->requeue(999, 7000))) == requeue_code(store::RequeueStatus::not_found));
  BOOST_TEST(requeue_code(twin_must(t.admin->requeue(done, 7000))) == requeue_code(store::RequeueStatus::requeued));
  auto row = t.row(done);
  BOOST_TEST(row.state == "queued");
  BOOST_TEST(row.next_attempt_at == 7000);
  // A done backfill starts its window again but keeps counting pages (new message ids).
  BOOST_TEST(row.payload == R"({"user_id":"u","resource":"heartrate","page":3})");

  BOOST_TEST(twin_must(t.admin->requeue_dead(7500)) == 1);
  row = t.row(dead);
  BOOST_TEST(row.state == "queued");
  BOOST_TEST(row.attempts == 0);
  BOOST_TEST(row.next_attempt_at == 7500);
  BOOST_TEST(twin_must(t.admin->requeue_dead(7500)) == 0);
}

// A page of a state's jobs reads that page: done jobs stay until their user is erased, and GET /v1/jobs read
// every job of the state (and held them all in memory) to show the first `limit` (a review
// of the store's query plans). SQLite; the PostgreSQL statement has the same LIMIT.
BOOST_AUTO_TEST_CASE(a_page_of_done_jobs_reads_the_page_not_every_done_job) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  {
    auto writer = store::open_for_writing(path, {});
    BOOST_REQUIRE_MESSAGE(writer, writer.error());
    BOOST_REQUIRE(writer->exec(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000) "
        "INSERT INTO jobs (kind, job_key, state, next_attempt_at, trigger_seq, payload, created_at, updated_at) "
        "SELECT 'workout_stream', 'w' || i, CASE WHEN i % 3 = 0 THEN 'queued' ELSE 'done' END, i, i, "
        "printf('{\"workout_id\":\"w%d\",\"pad\":\"%.200c\"}', i, 'x'), i, i FROM n"));
  }
  auto admin = store::open_sqlite_job_admin(path);
  BOOST_REQUIRE_MESSAGE(admin, admin.error());
  Result<std::vector<store::JobRow>> page = std::vector<store::JobRow>{};
  const int64_t read = test::bytes_read_by([&] { page = (*admin)->list(std::string("done"), 51); });
  BOOST_REQUIRE_MESSAGE(page, page.error());
  BOOST_REQUIRE_EQUAL(page->size(), 51u);
  BOOST_TEST(page->front().job_key == "w1");
  BOOST_TEST(page->back().job_key == "w76");  // 51 done ones: two of every three
  BOOST_TEST_MESSAGE("one page of done jobs read " << read << " bytes");
  BOOST_TEST(read < 200'000);  // the table is ~8 MB; every done job's entry of jobs_due ~0.4 MB
}

BOOST_AUTO_TEST_SUITE_END()  // job_store_test
