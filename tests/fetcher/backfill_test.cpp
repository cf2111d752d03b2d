// Backfills: summaries in window slices, timeseries by cursor, workout_stream via the
// workouts summaries; each page one inbox row with a deterministic message id; a restart
// in the middle continues from the stored progress without fetching or storing a page twice.
#include <simdjson.h>

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "common/timestamp.h"
#include "tests/fake_service/fake_bodies.h"
#include "tests/fetcher/fetcher_fixture.h"

BOOST_AUTO_TEST_SUITE(backfill_test)

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

// The member names of a JSON object, sorted.
std::set<std::string> keys_of(simdjson::dom::object object) {
  std::set<std::string> keys;
  for (auto field : object) keys.insert(std::string(field.key));
  return keys;
}

// The member names of the JSON object `json` (its member `member` when given), sorted;
// an error when it is not an object.
std::set<std::string> keys_in(const std::string& json, const char* member = nullptr) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json);
  simdjson::dom::element root;
  BOOST_REQUIRE(!parser.parse(padded).get(root));
  simdjson::dom::object object;
  if (member) {
    BOOST_REQUIRE(!root.at_key(member).get_object().get(object));
  } else {
    BOOST_REQUIRE_MESSAGE(!root.get_object().get(object), "not an object: " << json.substr(0, 80));
  }
  return keys_of(object);
}

// The `data` object's member names of a webhook example of schemas/examples/ (the
// reference notes' objects).
std::set<std::string> example_data_keys(const std::string& name) { return keys_in(test::example_file(name), "data"); }

// A day of u-1's garmin heart rate queued as a backfill (trigger seq 11) and run once
// against `service`: the job's id and the run's outcome.
std::pair<int64_t, fetcher::JobOutcome> run_heartrate_backfill(test::FetcherFixture& f, fake::FakeService& service) {
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id =
      f.queue_backfill_job("u-1", "heartrate", "garmin", "2024-08-04T00:00:00+00:00", "2024-08-05T00:00:00+00:00", 11);
  return {id, fetcher->run_due_now().at(0)};
}

}  // namespace

// The fake must answer with the service's shapes (reference notes §3.1), or the suite
// cannot see a fetcher that expects others: checked against the reference's objects.
BOOST_AUTO_TEST_CASE(the_fake_serves_the_shapes_of_the_reference) {
  const int64_t start = *parse_iso8601_ms("2024-03-05T00:00:00Z");
  const std::string meals = fake::summaries_body("meal", "u-1", "myfitnesspal", start, start + 2 * 86400000LL, 10);
  BOOST_TEST(keys_in(meals) == std::set<std::string>{"meals"});  // plural, unlike the resource
  const auto reference_meal = example_data_keys("summary-meal.json");
  simdjson::dom::parser parser;
  const simdjson::padded_string padded_meals(meals);
  simdjson::dom::array items;
  BOOST_REQUIRE(!parser.parse(padded_meals).at_key("meals").get_array().get(items));
  BOOST_TEST(items.size() == 2u);
  for (simdjson::dom::element item : items) {
    simdjson::dom::object meal;
    BOOST_REQUIRE(!item.get_object().get(meal));
    BOOST_TEST(keys_of(meal) == reference_meal, boost::test_tools::per_element());
  }

  // One object, not a list, with the reference's members.
  BOOST_TEST(keys_in(fake::profile_body("u-1", "fitbit")) == example_data_keys("summary-profile.json"),
             boost::test_tools::per_element());

  for (const std::string resource : {"sleep", "activity", "body", "workouts"}) {
    BOOST_TEST(keys_in(fake::summaries_body(resource, "u-1", "oura", start, start + 86400000LL, 10)) ==
               std::set<std::string>{resource});
  }

  // The service interface's Provider: name, slug, description and logo always; auth_type and
  // supported_resources may be there; nothing else.
  const simdjson::padded_string padded_providers(fake::providers_body());
  simdjson::dom::array providers;
  BOOST_REQUIRE(!parser.parse(padded_providers).get_array().get(providers));
  const std::set<std::string> allowed{"name", "slug", "description", "logo", "auth_type", "supported_resources"};
  for (simdjson::dom::element provider : providers) {
    simdjson::dom::object object;
    BOOST_REQUIRE(!provider.get_object().get(object));
    const auto keys = keys_of(object);
    for (const char* required : {"name", "slug", "description", "logo"}) BOOST_TEST(keys.count(required) == 1u);
    for (const auto& key : keys) BOOST_TEST(allowed.count(key) == 1u, key);
  }
}

// Reference notes §3.1: GET /v2/summary/meal/… answers {"meals": [...]}.
BOOST_AUTO_TEST_CASE(a_meal_backfill_reads_the_meals_list_and_ends_done) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_backfill_job("u-1", "meal", "myfitnesspal", "2024-01-01T00:00:00+00:00",
                                          "2024-02-15T00:00:00+00:00");  // 45 days: two slices
  const auto outcomes = f.run_until_settled(*fetcher, id);
  BOOST_REQUIRE(!outcomes.empty());
  BOOST_TEST(kind_of(outcomes.back()) == "done", outcomes.back().error);
  BOOST_TEST(f.job(id).state == "done");
  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 2u);
  size_t meals = 0;
  for (const auto& row : rows) {
    BOOST_TEST(row.event_type == "fetch.summaries.meal");
    BOOST_TEST(row.headers.starts_with(R"({"kind":"summaries","resource":"meal","items_key":"meals","user_id":"u-1",)"));
    BOOST_TEST(row.body.starts_with(R"({"meals":[)"));
    meals += ids_in(row.body).size();
  }
  BOOST_TEST(meals == 45u);
  for (const auto& request : service.requests()) BOOST_TEST(request.path == "/v2/summary/meal/u-1");
}

// A page larger than the parser takes in one document (64 MiB in serve; 1,000 bytes here)
// ends the job dead naming the limit, with nothing stored: it was stored, marked invalid,
// and the job said done without its rows (black-box pass).
BOOST_AUTO_TEST_CASE(a_page_larger_than_the_parser_takes_ends_the_job_dead) {
  test::FetcherFixture f;
  f.max_page_bytes = 1000;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_backfill_job("u-1", "meal", "myfitnesspal", "2024-01-01T00:00:00+00:00",
                                          "2024-01-15T00:00:00+00:00");
  const auto outcomes = f.run_until_settled(*fetcher, id);
  BOOST_REQUIRE(!outcomes.empty());
  BOOST_TEST(kind_of(outcomes.back()) == "dead");
  BOOST_TEST(f.job(id).last_error.value_or("").find("over the 1000 the parser takes") != std::string::npos,
             f.job(id).last_error.value_or(""));
  BOOST_TEST(f.fetched_rows().empty());
}

// Reference notes §3.1: GET /v2/summary/profile/{user_id}?provider= takes no window and
// answers one object: one request per backfill, whatever its window.
BOOST_AUTO_TEST_CASE(a_profile_backfill_fetches_one_object_once_without_a_window) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_backfill_job("u-1", "profile", "fitbit", "2020-01-01T00:00:00+00:00",
                                          "2024-06-01T00:00:00+00:00");  // years: no slices for a profile
  auto outcome = fetcher->run_due_now().at(0);
  BOOST_TEST(kind_of(outcome) == "done", outcome.error);
  BOOST_TEST(outcome.pages == 1);
  const auto requests = service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 1u);
  BOOST_TEST(requests[0].target == "/v2/summary/profile/u-1?provider=fitbit");
  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_TEST(rows[0].event_type == "fetch.summary.profile");
  BOOST_TEST(rows[0].headers.starts_with(R"({"kind":"summary","resource":"profile","user_id":"u-1","provider":"fitbit",)"));
  BOOST_TEST(rows[0].body == fake::profile_body("u-1", "fitbit"));
  BOOST_TEST(f.job(id).state == "done");
  // A list would not do: the fetcher expects the one object the service sends.
  fake::Fault list;
  list.kind = fake::Fault::Kind::status;
  list.status = 200;
  list.body = "[" + fake::profile_body("u-1", "fitbit") + "]";
  service.inject("/v2/summary/profile/u-2", list);
  const int64_t other = f.queue_backfill_job("u-2", "profile", "fitbit", "2024-01-01T00:00:00+00:00",
                                             "2024-06-01T00:00:00+00:00");
  auto retried = fetcher->run_due_now().at(0);
  BOOST_TEST(kind_of(retried) == "retry");
  BOOST_TEST(retried.error.find("expected one JSON object") != std::string::npos, retried.error);
  BOOST_TEST(f.job(other).state == "queued");
}

BOOST_AUTO_TEST_CASE(a_timeseries_backfill_follows_next_cursor_to_the_end) {
  test::FetcherFixture f;
  fake::FakeService service;  // 3 pages of 50 samples
  const auto [id, outcome] = run_heartrate_backfill(f, service);
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

// A lying service whose pages loop: the loop is seen when a cursor comes back, the page
// that closed it is stored, the job ends dead with the reason (retrying cannot mend it),
// and no page is stored twice. `options` says which cursor comes back.
namespace {
void expect_the_loop_ends_the_job_dead(const fake::FakeOptions& options) {
  test::FetcherFixture f;
  fake::FakeService service(options);
  const auto [id, outcome] = run_heartrate_backfill(f, service);
  BOOST_TEST(kind_of(outcome) == "dead");
  BOOST_TEST(outcome.pages == 3);
  BOOST_TEST(f.fetched_rows().size() == 3u);
  BOOST_TEST(service.requests().size() == 3u);
  const auto job = f.job(id);
  BOOST_TEST(job.state == "dead");
  BOOST_TEST(job.last_error.value_or("").find("came back: the service's pages loop") != std::string::npos,
             job.last_error.value_or(""));
}
}  // namespace

// The last page points back to an earlier page's cursor.
BOOST_AUTO_TEST_CASE(a_cursor_that_comes_back_ends_the_job_dead) {
  fake::FakeOptions options;
  options.cursor_loops = true;
  expect_the_loop_ends_the_job_dead(options);
}

// A service whose pages never end, each with a new cursor (none comes back): the job stores
// at most max_pages (10,000 in serve; 4 here), then ends dead saying so. It was fetched for
// ever (black-box pass: 913 pages in 42 s, still running).
BOOST_AUTO_TEST_CASE(a_job_whose_pages_never_end_is_dead_after_max_pages) {
  test::FetcherFixture f;
  f.max_pages = 4;
  fake::FakeOptions options;
  options.timeseries_pages = 50;
  fake::FakeService service(options);
  const auto [id, outcome] = run_heartrate_backfill(f, service);
  BOOST_TEST(kind_of(outcome) == "dead");
  BOOST_TEST(outcome.pages == 4);
  BOOST_TEST(f.fetched_rows().size() == 4u);
  BOOST_TEST(service.requests().size() == 4u);
  const auto job = f.job(id);
  BOOST_TEST(job.state == "dead");
  BOOST_TEST(job.last_error.value_or("").find("more than 4 pages, each with a new next_cursor") != std::string::npos,
             job.last_error.value_or(""));
}

// The shortest loop: a page whose next_cursor is the cursor it was asked for (it used to
// be retried to max_attempts without being stored).
BOOST_AUTO_TEST_CASE(a_page_that_names_its_own_cursor_next_ends_the_job_dead_once_stored) {
  fake::FakeOptions options;
  options.cursor_repeats = true;
  expect_the_loop_ends_the_job_dead(options);
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

// The bound on endless cursors counts a chain of next_cursor, not the 30-day steps the
// fetcher takes through a summary window (the service sends no cursor there). A window of
// more steps than max_pages is read whole (black-box finding: --since 1000-01-01 died
// after 10,000 steps, "each with a new next_cursor", with the newest 205 years unfetched;
// 6 steps over a bound of 4 here).
BOOST_AUTO_TEST_CASE(a_summary_window_of_more_steps_than_max_pages_is_read_whole) {
  test::FetcherFixture f;
  f.max_pages = 4;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_backfill_job("u-1", "sleep", "garmin", "2024-01-01T00:00:00+00:00",
                                          "2024-06-29T00:00:00+00:00");  // 180 days: 6 steps
  const auto outcome = fetcher->run_due_now().at(0);
  BOOST_TEST(kind_of(outcome) == "done", outcome.error);
  BOOST_TEST(outcome.pages == 6);
  const auto requests = service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 6u);
  for (const auto& request : requests) BOOST_TEST(request.target.find("cursor") == std::string::npos);
  BOOST_TEST(requests.back().target.find("end_date=2024-06-29T00%3A00%3A00.000Z") != std::string::npos,
             requests.back().target);
  size_t total = 0;
  for (const auto& row : f.fetched_rows()) total += ids_in(row.body).size();
  BOOST_TEST(total == 180u);  // one summary a day, the newest steps included
  const auto job = f.job(id);
  BOOST_TEST(job.state == "done");
  BOOST_TEST(!job.last_error);
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

// A service that answers a backfill with another user's or provider's items (black-box
// pass: another user's sleep summary replaced the asked user's row with the same id, and a
// grouped answer {"groups":{"polar":[…]}} to provider=garmin was filed as the user's polar
// samples). The page is refused before it is stored, with refresh's words, and retried
// like an answer of the wrong shape until the job is dead; nothing is stored.
namespace {

const std::string kAskedUser = "bf6222fb-1111-4222-8333-444455556666";
const std::string kOtherUser = "00000000-0000-4000-8000-00000000dead";

// `resource` of kAskedUser from garmin, two days, run against a service that answers with
// `options`' lie until the job is settled: the job must end dead with `error` in its last
// error, after max_attempts requests, none of their pages stored.
void expect_the_lie_is_refused(const fake::FakeOptions& options, const std::string& resource,
                               const std::string& error) {
  test::FetcherFixture f;
  fake::FakeService service(options);
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_backfill_job(kAskedUser, resource, "garmin", "2024-05-01T00:00:00+00:00",
                                          "2024-05-03T00:00:00+00:00");
  const auto outcomes = f.run_until_settled(*fetcher, id);
  BOOST_REQUIRE(!outcomes.empty());
  BOOST_TEST(kind_of(outcomes.front()) == "retry");  // the service's fault, as a wrong shape is
  BOOST_TEST(kind_of(outcomes.back()) == "dead");
  for (const auto& outcome : outcomes) BOOST_TEST(outcome.pages == 0);
  const auto job = f.job(id);
  BOOST_TEST(job.state == "dead");
  BOOST_TEST(job.last_error.value_or("").find(error) != std::string::npos, job.last_error.value_or(""));
  BOOST_TEST(f.fetched_rows().empty());
  BOOST_TEST(service.requests().size() == 5u);  // settings_for: 5 attempts
}

}  // namespace

BOOST_AUTO_TEST_CASE(summaries_of_another_user_are_refused_and_never_stored) {
  fake::FakeOptions options;
  options.answer_user_id = kOtherUser;
  expect_the_lie_is_refused(options, "sleep",
                            "unexpected answer: user_id \"" + kOtherUser + "\" is not the user asked for, at sleep[0]");
  expect_the_lie_is_refused(options, "profile",
                            "unexpected answer: user_id \"" + kOtherUser + "\" is not the user asked for (");
}

BOOST_AUTO_TEST_CASE(summaries_of_another_provider_are_refused_and_never_stored) {
  fake::FakeOptions options;
  options.answer_provider = "polar";
  expect_the_lie_is_refused(
      options, "meal", "unexpected answer: provider \"polar\" is not the provider asked for, at meals[0].source.provider");
}

BOOST_AUTO_TEST_CASE(a_grouped_answer_of_another_provider_is_refused_and_never_stored) {
  fake::FakeOptions options;
  options.answer_provider = "polar";
  expect_the_lie_is_refused(options, "heartrate",
                            "unexpected answer: provider \"polar\" is not the provider asked for, at groups.polar");
}

BOOST_AUTO_TEST_SUITE_END()  // backfill_test
