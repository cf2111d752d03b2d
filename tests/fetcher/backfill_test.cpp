// Backfills: summaries in window slices, timeseries by cursor, workout_stream via the
// workouts summaries; each page one inbox row with a deterministic message id; a restart
// in the middle continues from the stored progress without fetching or storing a page twice.
#include <boost/test/unit_test.hpp>
#include <set>

#include "common/timestamp.h"
#include "tests/fake_service/fake_bodies.h"
#include "tests/fetcher/fetcher_fixture.h"

using namespace hh;
using hh::fake::Fault;

namespace {

std::string kind_of(const fetcher::JobOutcome& outcome) { return std::string(fetcher::outcome_name(outcome.kind)); }

const std::string kGroupedPath = "/v2/timeseries/u-1/heartrate/grouped";

// Every summary id in a {"<resource>": [...]} body, in order.
std::vector<std::string> ids_in(const std::string& body) {
  std::vector<std::string> ids;
  for (size_t at = body.find("{\"id\":\""); at != std::string::npos; at = body.find("{\"id\":\"", at + 1)) {
    const size_t start = at + 7;
    ids.push_back(body.substr(start, body.find('"', start) - start));
  }
  return ids;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_timeseries_backfill_follows_next_cursor_to_the_end) {
  test::FetcherFixture f;
  fake::FakeService service;  // 3 pages of 50 samples
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id =
      f.queue_backfill_job("u-1", "heartrate", "garmin", "2024-08-04T00:00:00+00:00", "2024-08-05T00:00:00+00:00", 11);
  auto outcome = fetcher->run_due_now().at(0);
  BOOST_TEST(kind_of(outcome) == "done");
  BOOST_TEST(outcome.pages == 3);

  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 3u);
  for (size_t page = 0; page < 3; ++page) {
    BOOST_TEST(rows[page].message_id == "fetch:" + std::to_string(id) + ":11:" + std::to_string(page));
    BOOST_TEST(rows[page].event_type == "fetch.timeseries.heartrate");
    BOOST_TEST(rows[page].headers.starts_with(
        R"({"kind":"timeseries","resource":"heartrate","user_id":"u-1","provider":"garmin","url":")" +
        service.base_url() + kGroupedPath + "?start_date=2024-08-04T00%3A00%3A00.000Z&end_date="));
    BOOST_TEST(rows[page].body == fake::grouped_body("heartrate", "garmin", *parse_iso8601_ms("2024-08-04T00:00:00Z"),
                                                     *parse_iso8601_ms("2024-08-05T00:00:00Z"), page, 3, 50));
  }
  const auto requests = service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 3u);
  BOOST_TEST(requests[0].target.find("cursor=") == std::string::npos);
  BOOST_TEST(requests[1].target.ends_with("&cursor=eyJvZmZzZXQiOjF9"));
  BOOST_TEST(requests[2].target.ends_with("&cursor=eyJvZmZzZXQiOjJ9"));
  const auto job = f.job(id);
  BOOST_TEST(job.state == "done");
  BOOST_TEST(job.payload.find("\"page\":3") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_summary_backfill_reads_its_window_in_slices_without_overlap) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_backfill_job("u-1", "sleep", "oura", "2024-01-01T00:00:00+00:00",
                                          "2024-03-16T00:00:00+00:00");  // 75 days
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 3u);  // 30 + 30 + 15 days
  std::set<std::string> ids;
  size_t total = 0;
  for (const auto& row : rows) {
    BOOST_TEST(row.event_type == "fetch.summaries.sleep");
    BOOST_TEST(row.headers.starts_with(R"({"kind":"summaries","resource":"sleep","user_id":"u-1","provider":"oura",)"));
    for (const auto& summary : ids_in(row.body)) {
      ids.insert(summary);
      ++total;
    }
  }
  BOOST_TEST(total == 75u);
  BOOST_TEST(ids.size() == 75u);
  BOOST_TEST(service.requests().at(0).path == "/v2/summary/sleep/u-1");
  BOOST_TEST(f.job(id).state == "done");
}

BOOST_AUTO_TEST_CASE(a_workout_stream_backfill_reads_the_workouts_summaries) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  f.queue_backfill_job("u-1", "workout_stream", "zwift", "2024-06-01T00:00:00+00:00", "2024-06-04T00:00:00+00:00");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_TEST(rows[0].event_type == "fetch.workouts_for_streams");
  BOOST_TEST(rows[0].headers.starts_with(R"({"kind":"workouts_for_streams","user_id":"u-1","provider":"zwift","url":")"));
  BOOST_TEST(rows[0].body.starts_with("{\"workouts\":[{\"id\":"));
  BOOST_TEST(ids_in(rows[0].body).size() == 3u);
  BOOST_TEST(service.requests().at(0).path == "/v2/summary/workouts/u-1");
}

BOOST_AUTO_TEST_CASE(a_restart_in_the_middle_continues_without_duplicates) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.inject(kGroupedPath, Fault{});  // kind none: page 0 is answered
  Fault drop;
  drop.kind = Fault::Kind::drop_mid_body;
  service.inject(kGroupedPath, drop);  // page 1 breaks off
  const int64_t id =
      f.queue_backfill_job("u-1", "heartrate", "garmin", "2024-08-04T00:00:00+00:00", "2024-08-05T00:00:00+00:00");
  {
    auto first = f.make_fetcher(f.settings_for(service));
    auto outcome = first->run_due_now().at(0);
    BOOST_TEST(kind_of(outcome) == "retry");
    BOOST_TEST(outcome.pages == 1);
  }  // this fetcher (the "process") is gone; its progress is in the job's payload
  auto job = f.job(id);
  BOOST_TEST(job.state == "queued");
  BOOST_TEST(job.payload.find("\"page\":1") != std::string::npos);
  BOOST_TEST(job.payload.find("\"cursor\":\"eyJvZmZzZXQiOjF9\"") != std::string::npos);
  BOOST_TEST(f.fetched_rows().size() == 1u);

  f.clock = job.next_attempt_at;
  auto second = f.make_fetcher(f.settings_for(service));
  auto outcome = second->run_due_now().at(0);
  BOOST_TEST(kind_of(outcome) == "done");
  BOOST_TEST(outcome.pages == 2);

  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 3u);
  std::set<std::string> message_ids;
  size_t samples = 0;
  for (const auto& row : rows) {
    message_ids.insert(row.message_id);
    samples += count_of(row.body, "\"timestamp\":");
  }
  BOOST_TEST(message_ids.size() == 3u);
  BOOST_TEST(samples == 150u);
  // Page 0 was fetched once; page 1 twice (broken, then whole); page 2 once.
  const auto requests = service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 4u);
  BOOST_TEST(requests[0].target.find("cursor=") == std::string::npos);
  BOOST_TEST(requests[1].target.ends_with("cursor=eyJvZmZzZXQiOjF9"));
  BOOST_TEST(requests[2].target.ends_with("cursor=eyJvZmZzZXQiOjF9"));
  BOOST_TEST(requests[3].target.ends_with("cursor=eyJvZmZzZXQiOjJ9"));
}

BOOST_AUTO_TEST_CASE(a_new_trigger_fetches_the_window_again_under_new_message_ids) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const std::string start = "2024-08-04T00:00:00+00:00", end = "2024-08-05T00:00:00+00:00";
  const int64_t id = f.queue_backfill_job("u-1", "heartrate", "garmin", start, end, 3);
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
  BOOST_TEST(f.queue_backfill_job("u-1", "heartrate", "garmin", start, end, 3) == id);  // same notice again: no-op
  BOOST_TEST(fetcher->run_due_now().empty());
  f.queue_backfill_job("u-1", "heartrate", "garmin", start, end, 8);  // a newer notice
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 6u);
  BOOST_TEST(rows[3].message_id == "fetch:" + std::to_string(id) + ":8:0");
  BOOST_TEST(rows[5].message_id == "fetch:" + std::to_string(id) + ":8:2");
}
