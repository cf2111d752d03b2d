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
#include "tests/derived/corpus.h"
#include "tests/postgres/backend_store.h"

BOOST_AUTO_TEST_SUITE(both_backends_test)

using namespace hh;
using test::BackendStore;
using Strings = std::vector<std::string>;
namespace data = boost::unit_test::data;

namespace {

void catch_up(processor::Processor& p) {
  auto done = p.run_until_caught_up(nullptr);
  BOOST_REQUIRE_MESSAGE(done, done.error());
}

// What processing left, in an order both engines give alike.
Strings derived_state(BackendStore& s) {
  Strings out;
  for (const auto& [sql, columns] : std::vector<std::pair<std::string, int>>{
           {"SELECT resource, id, seq, data FROM summaries ORDER BY resource COLLATE \"C\", id COLLATE \"C\"", 4},
           {"SELECT count(*), coalesce(sum(seq), 0), coalesce(sum(t_ms), 0) FROM samples", 3},
           {"SELECT seq, table_name, row_key, op, row_count FROM changes ORDER BY change_id", 5},
           {"SELECT seq, status, family FROM deliveries ORDER BY seq", 3},
           {"SELECT kind, job_key, state, trigger_seq FROM jobs ORDER BY job_id", 4}}) {
    for (std::string& row : s.rows(sql, columns)) out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

BOOST_DATA_TEST_CASE(whatever_order_four_versions_arrive_in_the_last_to_arrive_wins, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  const std::array<int, 4> scores{10, 20, 30, 40};
  std::array<size_t, 4> order{0, 1, 2, 3};
  int permutation = 0;
  do {
    const std::string id = "sleep-" + std::to_string(permutation);
    std::vector<store::NewDelivery> arrivals;
    for (size_t i : order) {
      arrivals.push_back(test::sleep_delivery(id + "-msg-" + std::to_string(i), id, scores[i]));
    }
    s.append(arrivals);
    catch_up(*s.processor());
    const std::string last_seq = s.value("SELECT max(seq) FROM inbox");
    const Strings stored = s.rows("SELECT seq, data FROM summaries WHERE id = '" + id + "'", 2);
    BOOST_REQUIRE_EQUAL(stored.size(), 1u);
    BOOST_TEST(stored[0].starts_with(last_seq + "|"), stored[0]);
    BOOST_TEST(stored[0].find("\"score\":" + std::to_string(scores[order[3]])) != std::string::npos, stored[0]);
    BOOST_TEST(s.rows("SELECT op FROM changes WHERE table_name = 'summaries' AND row_key LIKE '%/" + id +
                          "' ORDER BY change_id",
                      1) == (Strings{"insert", "update", "update", "update"}),
               boost::test_tools::per_element());
    ++permutation;
  } while (std::next_permutation(order.begin(), order.end()));
  BOOST_TEST(permutation == 24);
  // The user appears once, with the first delivery applied; the others change nothing of it.
  BOOST_TEST(s.rows("SELECT seq, op FROM changes WHERE table_name = 'users'", 2) == (Strings{"1|insert"}),
             boost::test_tools::per_element());
}

BOOST_DATA_TEST_CASE(an_invalid_delivery_is_marked_and_the_next_one_is_processed, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  s.append({test::sleep_delivery("a", "sleep-1", 1), test::raw_delivery("b", "{not json"),
            test::raw_delivery("c", R"({"data":{}})"), test::sleep_delivery("d", "sleep-2", 2),
            test::raw_delivery("e", R"({"event_type":"daily.timeseries.hypnogram.created","data":{}})"),
            test::raw_delivery("f", R"({"event_type":"something.new","data":{}})")});
  auto p = s.processor();
  catch_up(*p);
  BOOST_TEST(s.rows("SELECT seq, status, family, error FROM deliveries ORDER BY seq", 4) ==
                 (Strings{"1|processed|summary|NULL",
                          "2|invalid|other|body: not valid JSON (JSON document ended early in the middle of an object "
                          "or array.)",
                          "3|invalid|other|event_type: missing", "4|processed|summary|NULL", "5|ignored|hypnogram|NULL",
                          "6|unknown|other|NULL"}),
             boost::test_tools::per_element());
  BOOST_TEST(s.rows("SELECT id FROM summaries ORDER BY id COLLATE \"C\"", 1) == (Strings{"sleep-1", "sleep-2"}),
             boost::test_tools::per_element());
  BOOST_TEST(p->stats().processed == 2u);
  BOOST_TEST(p->stats().invalid == 2u);
  BOOST_TEST(p->stats().ignored == 1u);
  BOOST_TEST(p->stats().unknown == 1u);
  BOOST_TEST(p->applied_seq() == 6);
}

BOOST_DATA_TEST_CASE(a_restart_resumes_exactly_where_the_last_committed_step_ended, data::make(test::kBothBackends),
                     backend) {
  const auto corpus = test::make_corpus(120, 7);
  BackendStore reference(backend);
  reference.append(corpus);
  catch_up(*reference.processor());
  const Strings expected = derived_state(reference);

  BackendStore s(backend);
  s.append(corpus);
  {
    auto p = s.processor({.max_rows_per_step = 10000, .max_deliveries_per_step = 7});
    for (int i = 0; i < 5; ++i) BOOST_TEST(p->run_once(120));
    BOOST_TEST(p->applied_seq() == 35);
  }  // "killed" between steps: the processor and the store are gone
  s.reopen();
  BOOST_TEST(s.value("SELECT applied_seq FROM processor_state") == "35");
  BOOST_TEST(s.value("SELECT count(*) FROM deliveries WHERE status = 'pending'") == "85");
  BOOST_TEST(s.value("SELECT count(*) FROM deliveries WHERE status <> 'pending' AND seq > 35") == "0");
  auto p = s.processor({.max_rows_per_step = 50, .max_deliveries_per_step = 7});
  catch_up(*p);
  BOOST_TEST(p->stats().processed + p->stats().invalid + p->stats().ignored + p->stats().unknown == 85u);
  BOOST_TEST(derived_state(s) == expected, boost::test_tools::per_element());
}

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
