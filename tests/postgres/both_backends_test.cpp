// The store's behaviours that do not depend on its engine, checked once and run on both
// backends (tests/postgres/backend_store.h): the processor's latest-wins rule in any
// arrival order, poisoned deliveries, a restart between steps, and the follow-up job
// queue (claiming, failures, releases, a trigger that arrives while a job runs). The
// SQLite-only suites these come from (tests/derived/processor_test.cpp,
// tests/fetcher/job_store_test.cpp) keep what only SQLite has: the durable seq, WAL and
// the disk-full path.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "store/jobs/job_queue.h"
#include "tests/support/backend_store.h"

BOOST_AUTO_TEST_SUITE(both_backends_test)

using namespace hh;
using test::BackendStore;
using Strings = std::vector<std::string>;
namespace data = boost::unit_test::data;

namespace {

// A job queued as the processor queues one (store/sqlite/derived/follow_up_jobs.cpp and
// its PostgreSQL twin): a later trigger re-queues it.
int64_t queue_stream(BackendStore& s, const std::string& workout, int64_t due, int64_t trigger) {
  const std::string payload = "{\"workout_id\":\"" + workout + "\",\"user_id\":\"u\",\"provider\":\"garmin\"}";
  const std::string due_text = std::to_string(due), trigger_text = std::to_string(trigger);
  s.exec("INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, "
         "updated_at, user_id) VALUES ('workout_stream', '" + workout + "', 'queued', 0, " + due_text + ", " +
         trigger_text + ", '" + payload + "', " + due_text + ", " + due_text +
         ", 'u') ON CONFLICT (kind, job_key) DO UPDATE SET state = 'queued', attempts = 0, last_error = NULL, "
         "next_attempt_at = excluded.next_attempt_at, trigger_seq = excluded.trigger_seq, payload = excluded.payload, "
         "updated_at = excluded.updated_at WHERE excluded.trigger_seq > jobs.trigger_seq");
  return std::stoll(s.value("SELECT job_id FROM jobs WHERE kind = 'workout_stream' AND job_key = '" + workout + "'"));
}

// state|attempts|next_attempt_at|last_error|trigger_seq of a job.
std::string job(BackendStore& s, int64_t id) {
  return s.value("SELECT state || '|' || attempts || '|' || next_attempt_at || '|' || coalesce(last_error, '-') || "
                 "'|' || trigger_seq FROM jobs WHERE job_id = " + std::to_string(id));
}

std::vector<int64_t> ids(const std::vector<store::ClaimedJob>& jobs) {
  std::vector<int64_t> out;
  for (const auto& claimed : jobs) out.push_back(claimed.job_id);
  return out;
}

}  // namespace

BOOST_DATA_TEST_CASE(claims_only_due_queued_jobs_oldest_due_first_and_respect_the_limit,
                     data::make(test::kBothBackends), backend) {
  BackendStore s(backend);
  auto queue = test::twin_must(s.store().open_job_queue());
  const int64_t later = queue_stream(s, "w-later", 5000, 1);
  const int64_t first = queue_stream(s, "w-first", 1000, 1);
  const int64_t second = queue_stream(s, "w-second", 2000, 1);
  const int64_t third = queue_stream(s, "w-third", 2500, 1);
  const std::vector<int64_t> busy{second};
  auto claimed = test::twin_must(queue->claim_due(3000, 2, busy));
  BOOST_TEST(ids(claimed) == (std::vector<int64_t>{first, third}));
  BOOST_TEST(job(s, first).starts_with("running|"));
  BOOST_TEST(job(s, second).starts_with("queued|"));  // busy: left for later
  BOOST_TEST(job(s, later).starts_with("queued|"));   // not due
  BOOST_TEST(ids(test::twin_must(queue->claim_due(3000, 10, {}))) == (std::vector<int64_t>{second}));
  BOOST_TEST(test::twin_must(queue->claim_due(3000, 10, {})).empty());  // running jobs are not claimed twice
  BOOST_TEST(claimed[0].workout_id == "w-first");
  BOOST_TEST(claimed[0].user_id == "u");
  BOOST_TEST(claimed[0].provider == "garmin");
  BOOST_TEST(claimed[0].payload_valid);
}

BOOST_DATA_TEST_CASE(failures_are_retried_releases_are_not_counted_and_the_last_failure_is_dead,
                     data::make(test::kBothBackends), backend) {
  BackendStore s(backend);
  auto queue = test::twin_must(s.store().open_job_queue());
  const int64_t id = queue_stream(s, "w", 1000, 1);
  auto claimed = test::twin_must(queue->claim_due(5000, 1, {})).at(0);
  BOOST_TEST(test::twin_must(
      queue->record_failure(claimed, {.dead = false, .attempts = 1, .next_attempt_at_ms = 8000}, "HTTP 503", 5000)));
  BOOST_TEST(job(s, id) == "queued|1|8000|HTTP 503|1");
  BOOST_TEST(test::twin_must(queue->claim_due(7999, 1, {})).empty());
  claimed = test::twin_must(queue->claim_due(8000, 1, {})).at(0);
  BOOST_TEST(claimed.attempts == 1);
  BOOST_TEST(test::twin_must(queue->release(claimed, 8100)));
  BOOST_TEST(job(s, id).starts_with("queued|1|"));  // a release is not an attempt
  claimed = test::twin_must(queue->claim_due(8100, 1, {})).at(0);
  BOOST_TEST(test::twin_must(
      queue->record_failure(claimed, {.dead = true, .attempts = 2, .next_attempt_at_ms = 9000}, "HTTP 404", 9000)));
  BOOST_TEST(job(s, id).starts_with("dead|2|"));
  BOOST_TEST(test::twin_must(queue->claim_due(1'000'000, 1, {})).empty());
}

BOOST_DATA_TEST_CASE(a_job_retriggered_while_running_is_left_to_the_new_trigger, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  auto queue = test::twin_must(s.store().open_job_queue());
  const int64_t id = queue_stream(s, "w", 0, 1);
  auto claimed = test::twin_must(queue->claim_due(10, 1, {})).at(0);
  queue_stream(s, "w", 50, 2);  // the processor applies a newer notice
  BOOST_TEST(job(s, id) == "queued|0|50|-|2");
  const store::RetryDecision decision{.dead = false, .attempts = 1, .next_attempt_at_ms = 999};
  BOOST_TEST(!test::twin_must(queue->record_failure(claimed, decision, "HTTP 500", 60)));
  BOOST_TEST(!test::twin_must(queue->record_progress_in_transaction(
      claimed, {.page = 1, .cursor = std::nullopt, .next_start_ms = std::nullopt, .complete = true}, 60)));
  BOOST_TEST(!test::twin_must(queue->release(claimed, 60)));
  BOOST_TEST(job(s, id) == "queued|0|50|-|2");
}

BOOST_AUTO_TEST_SUITE_END()
