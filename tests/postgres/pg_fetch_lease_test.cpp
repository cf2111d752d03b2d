// The follow-up fetcher on a PostgreSQL job queue shared by several instances (spec §9,
// store/postgres/jobs/pg_job_queue.h): a fetch that takes longer than the job's lease keeps
// its job, because the lease is renewed while the fetch is in flight (fetcher/job_runner.h);
// another instance claiming due jobs all along never takes it over, and the page is stored.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

#include "common/timestamp.h"
#include "fetcher/fetcher.h"
#include "store/inbox_writer.h"
#include "store/postgres/database.h"
#include "store/postgres/jobs/pg_job_queue.h"
#include "store/postgres/pg_inbox.h"
#include "tests/fake_service/fake_service.h"
#include "tests/support/postgres_cluster.h"

BOOST_AUTO_TEST_SUITE(pg_fetch_lease_test)

using namespace hh;

namespace {

template <typename T>
T lease_must(Result<T> result) {
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  return std::move(result.value());
}

// Long enough that a renewal every third of it survives a loaded CI machine (the renewal
// goes through the writer thread, which may be busy); the fetch outlives two of them.
constexpr int64_t kLeaseMs = 3000;
const std::string kSlowPath = "/v2/timeseries/workouts/w-slow/stream";

// One instance's fetcher on `uri`, against `service` (real clock: leases compare the
// instances' clocks).
fetcher::FetcherOptions fetcher_options(const std::string& uri, const fake::FakeService& service) {
  fetcher::FetcherOptions options;
  options.database = store::Database(uri);
  options.service.base_url = service.base_url();
  options.service.concurrency = 1;
  options.service.max_attempts = 5;
  options.api_key = "test-api-key";
  options.read_timeout = std::chrono::seconds(10);
  options.now_ms = unix_now_ms;
  return options;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_fetch_that_outlives_the_lease_keeps_its_job) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  fake::FakeService service;
  // The page comes after two leases' time.
  fake::Fault slow;
  slow.kind = fake::Fault::Kind::stall_head;
  slow.stall = std::chrono::milliseconds(2 * kLeaseMs);
  service.inject(kSlowPath, slow);

  // Instance A: the writer connection with its inbox and job queue, the writer thread, and
  // a fetcher (real clock: leases compare the instances' clocks).
  pg::Connection writer_db = lease_must(store::connect_migrated({uri, ""}));
  BOOST_REQUIRE(writer_db.exec(
      "INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, updated_at) "
      "VALUES ('workout_stream', 'w-slow', 'queued', 0, 0, 1, "
      "'{\"workout_id\":\"w-slow\",\"user_id\":\"u-1\",\"provider\":\"garmin\"}', 0, 0)"));
  auto inbox = lease_must(store::open_postgres_inbox(writer_db, {}));
  auto jobs = lease_must(store::open_postgres_job_queue(writer_db, kLeaseMs));
  store::InboxWriter writer(*inbox, store::WriterOptions{});
  writer.start();
  auto fetcher = lease_must(fetcher::Fetcher::create(fetcher_options(uri, service), writer, *inbox, *jobs));

  // Instance B claims due jobs all along, as its fetcher would.
  pg::Connection other_db = lease_must(store::connect_migrated({uri, ""}));
  auto other = lease_must(store::open_postgres_job_queue(other_db, kLeaseMs));
  std::atomic<bool> finished{false};
  std::vector<fetcher::JobOutcome> outcomes;
  std::thread running([&] {
    outcomes = fetcher->run_due_now();
    finished = true;
  });
  // B starts claiming once A's fetch is on the wire (A has claimed the job): before that,
  // B could claim the due job first, which is the queue working, not a lost lease.
  for (int wait = 0; wait < 200 && service.request_count(kSlowPath) == 0 && !finished; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  BOOST_REQUIRE(service.request_count(kSlowPath) == 1u);
  size_t taken_over = 0;
  for (int round = 0; round < 150 && !finished; ++round) {
    auto claimed = other->claim_due(unix_now_ms(), 10, {});
    BOOST_REQUIRE_MESSAGE(claimed, claimed.error());
    taken_over += claimed->size();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  running.join();
  writer.stop();

  BOOST_TEST(taken_over == 0u);
  BOOST_REQUIRE_EQUAL(outcomes.size(), 1u);
  BOOST_TEST(fetcher::outcome_name(outcomes[0].kind) == "done", outcomes[0].error);
  BOOST_TEST(outcomes[0].pages == 1);
  auto job = lease_must(other_db.query("SELECT state, attempts, last_error IS NULL FROM jobs WHERE job_key = 'w-slow'"));
  BOOST_TEST(job.text(0, 0) == "done");
  BOOST_TEST(job.integer(0, 1) == 0);
  BOOST_TEST(job.boolean(0, 2));
  BOOST_TEST(lease_must(other_db.query_int("SELECT count(*) FROM inbox WHERE origin = 'fetch'")).value_or(0) == 1);
  BOOST_TEST(service.request_count(kSlowPath) == 1u);
}

// An instance killed while it held a job: the job stays 'running' with a lease nobody
// renews. A running fetcher takes it over when the lease runs out, with no other job
// queued to wake it (it once looked only at queued jobs: a quiet receiver left the job
// undone for good, a black-box pass of several instances found).
BOOST_AUTO_TEST_CASE(a_dead_instances_job_is_taken_over_when_its_lease_runs_out) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  fake::FakeService service;
  pg::Connection writer_db = lease_must(store::connect_migrated({uri, ""}));
  // Claimed by an instance that is gone; its lease runs out 1.5 s from now, after this
  // fetcher's start (whose recovery takes over only leases already run out).
  const int64_t lease_until = unix_now_ms() + 1500;
  BOOST_REQUIRE(writer_db.exec(
      "INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, updated_at, "
      "lease_until) VALUES ('workout_stream', 'w-orphan', 'running', 0, 0, 1, "
      "'{\"workout_id\":\"w-orphan\",\"user_id\":\"u-1\",\"provider\":\"garmin\"}', 0, 0, " +
      std::to_string(lease_until) + ")"));
  auto inbox = lease_must(store::open_postgres_inbox(writer_db, {}));
  auto jobs = lease_must(store::open_postgres_job_queue(writer_db, kLeaseMs));
  store::InboxWriter writer(*inbox, store::WriterOptions{});
  writer.start();
  auto fetcher = lease_must(fetcher::Fetcher::create(fetcher_options(uri, service), writer, *inbox, *jobs));
  fetcher->start();
  pg::Connection reader = lease_must(store::connect_migrated({uri, ""}));
  std::string state;
  for (int wait = 0; wait < 200 && state != "done"; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    state = lease_must(reader.query("SELECT state FROM jobs WHERE job_key = 'w-orphan'")).text(0, 0);
  }
  fetcher->stop();
  writer.stop();
  BOOST_TEST(state == "done");
  BOOST_TEST(service.request_count("/v2/timeseries/workouts/w-orphan/stream") == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
