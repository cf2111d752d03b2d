// The fetcher against the fake service: every injected fault ends in its documented
// outcome (fetcher/failure_policy.h), nothing is stored twice, nothing partial is
// stored, and retries are scheduled in jobs.next_attempt_at (checked on the fake clock,
// never on wall time).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <thread>

#include "common/timestamp.h"
#include "store/jobs/retry_policy.h"
#include "tests/fake_service/fake_bodies.h"
#include "tests/fetcher/fetcher_fixture.h"

BOOST_AUTO_TEST_SUITE(fetcher_faults_test)

using namespace hh;
using hh::fake::Fault;
using hh::fetcher::JobOutcome;

namespace {

const std::string kPath = "/v2/timeseries/workouts/w-1/stream";

Fault status(unsigned code, std::optional<std::string> retry_after = std::nullopt) {
  Fault fault;
  fault.kind = Fault::Kind::status;
  fault.status = code;
  fault.retry_after = std::move(retry_after);
  return fault;
}

Fault fault_of(Fault::Kind kind, std::chrono::milliseconds stall = std::chrono::milliseconds(0)) {
  Fault fault;
  fault.kind = kind;
  fault.stall = stall;
  return fault;
}

std::string kind_of(const JobOutcome& outcome) { return std::string(fetcher::outcome_name(outcome.kind)); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One retried failure, then success on the next attempt: the common shape of most faults.
void expect_retried_then_done(fake::Fault fault, const std::string& error_part,
                              std::chrono::milliseconds read_timeout = std::chrono::seconds(5)) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.inject(kPath, std::move(fault));
  auto fetcher = f.make_fetcher(f.settings_for(service), test::kApiKey, read_timeout);
  const int64_t id = f.queue_stream_job("w-1");

  auto first = fetcher->run_due_now();
  BOOST_REQUIRE_EQUAL(first.size(), 1u);
  BOOST_TEST(kind_of(first[0]) == "retry");
  auto job = f.job(id);
  BOOST_TEST(job.state == "queued");
  BOOST_TEST(job.attempts == 1);
  BOOST_TEST_INFO("last_error: " << job.last_error.value_or(""));
  BOOST_TEST(contains(job.last_error.value_or(""), error_part));
  BOOST_TEST(f.fetched_rows().empty());  // nothing partial was stored

  BOOST_TEST(fetcher->run_due_now().empty());  // not due yet on the fake clock
  f.clock = job.next_attempt_at;
  auto second = fetcher->run_due_now();
  BOOST_REQUIRE_EQUAL(second.size(), 1u);
  BOOST_TEST(kind_of(second[0]) == "done");
  job = f.job(id);
  BOOST_TEST(job.state == "done");
  BOOST_TEST(job.attempts == 0);
  BOOST_TEST(!job.last_error);
  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_TEST(rows[0].body == fake::stream_body(120));
  BOOST_TEST(service.request_count(kPath) == 2u);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_stream_job_is_fetched_and_stored_as_one_fetch_row) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_stream_job("w-1", 7);

  auto outcomes = fetcher->run_due_now();
  BOOST_REQUIRE_EQUAL(outcomes.size(), 1u);
  BOOST_TEST(kind_of(outcomes[0]) == "done");
  BOOST_TEST(outcomes[0].pages == 1);
  const auto job = f.job(id);
  BOOST_TEST(job.state == "done");
  BOOST_TEST(job.payload == R"({"workout_id":"w-1","user_id":"u-1","provider":"garmin","page":1})");

  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_TEST(rows[0].message_id == "fetch:" + std::to_string(id) + ":7:0");
  BOOST_TEST(rows[0].origin == "fetch");
  BOOST_TEST(rows[0].event_type == "fetch.workout_stream");
  BOOST_TEST(rows[0].status == "pending");
  BOOST_TEST(rows[0].headers == R"({"kind":"workout_stream","workout_id":"w-1","user_id":"u-1","provider":"garmin",)"
                                R"("url":")" + service.base_url() + kPath + R"("})");
  BOOST_TEST(rows[0].body == fake::stream_body(120));

  const auto requests = service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 1u);
  BOOST_TEST(requests[0].authorized);
  BOOST_TEST(requests[0].accept_encoding == "gzip");
}

BOOST_AUTO_TEST_CASE(server_errors_are_retried_then_done) {
  expect_retried_then_done(status(500), "HTTP 500");
  expect_retried_then_done(status(502), "HTTP 502");
  expect_retried_then_done(status(408), "HTTP 408");
}

BOOST_AUTO_TEST_CASE(the_first_retry_follows_the_initial_backoff) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.inject(kPath, status(500));
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_stream_job("w-1");
  fetcher->run_due_now();
  const auto job = f.job(id);
  const int64_t delay = job.next_attempt_at - job.updated_at;
  BOOST_TEST(delay >= 2500);  // backoff_initial_s = 5, equal jitter: [2.5 s, 5 s]
  BOOST_TEST(delay <= 5000);
}

BOOST_AUTO_TEST_CASE(retry_after_on_503_sets_next_attempt_at) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.inject(kPath, status(503, "7"));
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_stream_job("w-1");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "retry");
  const auto job = f.job(id);
  BOOST_TEST(job.next_attempt_at >= job.updated_at + 7000);  // plus jitter of up to a fifth
  BOOST_TEST(job.next_attempt_at <= job.updated_at + 8400);
  BOOST_TEST(contains(job.last_error.value_or(""), "HTTP 503"));
  f.clock = job.next_attempt_at - 1;
  BOOST_TEST(fetcher->run_due_now().empty());
  f.clock = job.next_attempt_at;
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
}

BOOST_AUTO_TEST_CASE(retry_after_on_429_as_an_http_date) {
  test::FetcherFixture f;
  fake::FakeService service;
  // 120 s after the fake clock, in IMF-fixdate.
  const int64_t at_s = test::kStartClockMs / 1000 + 120;
  std::time_t t = static_cast<std::time_t>(at_s);
  char date[64];
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", std::gmtime(&t));
  service.inject(kPath, status(429, std::string(date)));
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_stream_job("w-1");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "retry");
  const auto job = f.job(id);
  BOOST_TEST(job.next_attempt_at >= test::kStartClockMs + 120'000);
  BOOST_TEST(job.next_attempt_at <= test::kStartClockMs + 144'000);
  BOOST_TEST(contains(job.last_error.value_or(""), "HTTP 429"));
}

// A 429 pauses every job going to that service: with three stream jobs due and the first
// answered 429 "Retry-After: 30", the other two were sent at once (200 requests in 2.7 s
// with 200 jobs). Now no request reaches the service before the 30 s have passed on the
// fake clock; the held-back jobs count no attempt and fall due at or after the pause's end.
BOOST_AUTO_TEST_CASE(a_429_holds_back_every_job_to_the_service_until_retry_after) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.inject("*", status(429, "30"));
  auto fetcher = f.make_fetcher(f.settings_for(service));  // concurrency 1: one job per run
  const int64_t first = f.queue_stream_job("w-1");
  const int64_t second = f.queue_stream_job("w-2");
  const int64_t third = f.queue_stream_job("w-3");
  const auto streams = [&] {
    return service.request_count(kPath) + service.request_count("/v2/timeseries/workouts/w-2/stream") +
           service.request_count("/v2/timeseries/workouts/w-3/stream");
  };

  for (int run = 0; run < 3; ++run) {
    const auto outcomes = fetcher->run_due_now();
    BOOST_REQUIRE_EQUAL(outcomes.size(), 1u);
    BOOST_TEST(kind_of(outcomes[0]) == "retry");
  }
  BOOST_TEST(streams() == 1u);  // only the one that got the 429
  const int64_t pause_end = test::kStartClockMs + 30'000;
  BOOST_TEST(f.job(first).attempts == 1);
  int64_t latest = 0;
  for (const int64_t id : {second, third}) {
    const auto job = f.job(id);
    BOOST_TEST(job.state == "queued");
    BOOST_TEST(job.attempts == 0);  // held back, not tried
    BOOST_TEST(job.next_attempt_at >= pause_end);
    BOOST_TEST(contains(job.last_error.value_or(""), "HTTP 429"));
  }
  for (const int64_t id : {first, second, third}) latest = std::max(latest, f.job(id).next_attempt_at);

  f.clock = pause_end - 1;
  BOOST_TEST(fetcher->run_due_now().empty());
  BOOST_TEST(streams() == 1u);
  auto settings = f.settings_for(service);
  settings.concurrency = 3;
  auto after = f.make_fetcher(settings);
  f.clock = latest;
  const auto outcomes = after->run_due_now();
  BOOST_REQUIRE_EQUAL(outcomes.size(), 3u);
  for (const auto& outcome : outcomes) BOOST_TEST(kind_of(outcome) == "done");
  BOOST_TEST(streams() == 4u);
}

// A 429 on a job's last attempt pauses the service for its Retry-After, at most a day as
// every Retry-After: a lying one (a year, or past what milliseconds hold) held every other
// job to the service back for that long, written into their due times.
BOOST_AUTO_TEST_CASE(a_dead_jobs_pause_lasts_a_day_at_most) {
  for (const char* asked : {"31536000", "9223372036854775807"}) {
    BOOST_TEST_CONTEXT("Retry-After " << asked) {
      test::FetcherFixture f;
      fake::FakeService service;
      service.inject("*", status(429, asked));
      auto settings = f.settings_for(service);
      settings.max_attempts = 1;  // the first 429 kills its job
      auto fetcher = f.make_fetcher(settings);
      const int64_t first = f.queue_stream_job("w-1");
      const int64_t second = f.queue_stream_job("w-2");
      BOOST_REQUIRE_EQUAL(fetcher->run_due_now().size(), 1u);
      BOOST_TEST(f.job(first).state == "dead");
      BOOST_REQUIRE_EQUAL(fetcher->run_due_now().size(), 1u);  // held back, not tried
      const auto held = f.job(second);
      BOOST_TEST(held.state == "queued");
      BOOST_TEST(held.attempts == 0);
      BOOST_TEST(held.next_attempt_at >= test::kStartClockMs + store::kMaxRetryAfterSeconds * 1000);
      // A day and its jitter (a fifth more, at most 10 minutes), never more.
      BOOST_TEST(held.next_attempt_at <= test::kStartClockMs + store::kMaxRetryAfterSeconds * 1000 + 600'000);
    }
  }
}

BOOST_AUTO_TEST_CASE(backoff_grows_until_the_attempts_are_used_up) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.inject(kPath, status(500), -1);  // always
  auto fetcher = f.make_fetcher(f.settings_for(service));  // 5 attempts, 5 s doubling, cap 60 s
  const int64_t id = f.queue_stream_job("w-1");
  int64_t previous_delay = 0;
  int64_t nominal = 5000;
  for (int attempt = 1; attempt <= 4; ++attempt, nominal *= 2) {
    BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "retry");
    const auto job = f.job(id);
    BOOST_TEST(job.attempts == attempt);
    const int64_t delay = job.next_attempt_at - job.updated_at;
    BOOST_TEST_INFO("attempt " << attempt << " delay " << delay);
    BOOST_TEST(delay >= nominal / 2);
    BOOST_TEST(delay <= nominal);
    BOOST_TEST(delay >= previous_delay);
    previous_delay = delay;
    f.clock = job.next_attempt_at;
  }
  const auto last = fetcher->run_due_now();
  BOOST_TEST(kind_of(last.at(0)) == "dead");
  const auto job = f.job(id);
  BOOST_TEST(job.state == "dead");
  BOOST_TEST(job.attempts == 5);
  BOOST_TEST(job.last_error.value_or("").starts_with("HTTP 500"));
  BOOST_TEST(contains(job.last_error.value_or(""), kPath));
  f.clock = f.clock + 86'400'000;
  BOOST_TEST(fetcher->run_due_now().empty());  // dead jobs are not retried
  BOOST_TEST(service.request_count(kPath) == 5u);
  BOOST_TEST(f.fetched_rows().empty());
}

BOOST_AUTO_TEST_CASE(client_errors_other_than_408_and_429_are_final) {
  for (unsigned code : {400u, 404u, 422u}) {
    test::FetcherFixture f;
    fake::FakeService service;
    service.inject(kPath, status(code));
    auto fetcher = f.make_fetcher(f.settings_for(service));
    const int64_t id = f.queue_stream_job("w-1");
    BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "dead");
    const auto job = f.job(id);
    BOOST_TEST(job.state == "dead");
    BOOST_TEST(job.attempts == 1);
    BOOST_TEST(job.last_error.value_or("").starts_with("HTTP " + std::to_string(code)));
    BOOST_TEST(service.request_count(kPath) == 1u);
  }
}

// An error body sent gzip-encoded (we ask for gzip) is decoded before it is quoted, as a
// 2xx body is: it appeared as compressed bytes in last_error and the log. The key is
// redacted from the decoded text.
BOOST_AUTO_TEST_CASE(a_gzip_error_body_is_quoted_decoded) {
  test::FetcherFixture f;
  fake::FakeService service;
  Fault fault = status(503);
  fault.gzip_body = true;
  fault.body = "{\"detail\":\"over capacity for " + std::string(test::kApiKey) + ", try later\"}";
  service.inject(kPath, fault);
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_stream_job("w-1");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "retry");
  const std::string error = f.job(id).last_error.value_or("");
  BOOST_TEST(error.starts_with("HTTP 503: {\"detail\":\"over capacity for [redacted], try later\"}"), error);
}

BOOST_AUTO_TEST_CASE(a_wrong_api_key_is_final) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service), "not-the-key");
  const int64_t id = f.queue_stream_job("w-1");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "dead");
  BOOST_TEST(f.job(id).last_error.value_or("").starts_with("HTTP 401: {\"detail\":\"Invalid API key\"}"));
  BOOST_TEST(!service.requests().at(0).authorized);
}

// A service that echoes the key it refused (or any key in an error page) never has it
// kept: jobs.last_error is shown by `healthhook jobs`, the read API and the log.
BOOST_AUTO_TEST_CASE(an_error_body_that_echoes_the_api_key_is_kept_without_it) {
  const std::string key = "sk_live_0123456789abcdef0123456789abcdef";
  const std::vector<std::pair<unsigned, std::string>> answers = {
      {401, "{\"detail\":\"Invalid API key " + key + "\"}"},
      {403, "{\"detail\":\"API key " + key + " has expired; key " + key + "\"}"},
      // Starting just before the excerpt's end: not shown in part either.
      {400, std::string(505, 'x') + key + "tail"},
      // JSON that escapes a character of it.
      {402, "{\"detail\":\"key sk\\u005flive_0123456789abcdef0123456789abcdef\"}"},
      // Percent-encoded, as a service that echoes the request's URL writes it.
      {404, "{\"detail\":\"no such key: sk%5Flive%5f0123456789abcdef0123456789abcdef\"}"},
  };
  for (const auto& [code, body] : answers) {
    BOOST_TEST_CONTEXT("HTTP " << code) {
      test::FetcherFixture f;
      fake::FakeOptions options;
      options.api_key = key;
      fake::FakeService service(options);
      Fault fault = status(code);
      fault.body = body;
      service.inject(kPath, fault);
      auto fetcher = f.make_fetcher(f.settings_for(service), key);
      const int64_t id = f.queue_stream_job("w-1");
      BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "dead");
      const std::string error = f.job(id).last_error.value_or("");
      BOOST_TEST(error.starts_with("HTTP " + std::to_string(code)), error);
      BOOST_TEST(error.find(key.substr(0, 12)) == std::string::npos, error);
      BOOST_TEST(error.find(key.substr(12)) == std::string::npos, error);
      if (code != 400) BOOST_TEST(error.find("[redacted]") != std::string::npos, error);
    }
  }
}

// A 2xx answer that echoes the key is stored without it, as an error body is kept (attack
// bbS, e_detail200: a stream fetch answered 200 {"detail":" key … refused"} was stored as
// an invalid delivery with the key whole, and `query deliveries` printed it).
BOOST_AUTO_TEST_CASE(a_2xx_answer_that_echoes_the_api_key_is_stored_without_it) {
  const std::string key = "sk_live_0123456789abcdef0123456789abcdef";
  const std::vector<std::string> bodies = {
      "{\"detail\":\" key " + key + " refused\"}",
      "{\"detail\":\"key sk\\u005flive_0123456789abcdef0123456789abcdef\"}",
      "{\"detail\":\"no such key: sk%5Flive%5f0123456789abcdef0123456789abcdef\"}",
  };
  for (const std::string& body : bodies) {
    BOOST_TEST_CONTEXT(body) {
      test::FetcherFixture f;
      fake::FakeOptions options;
      options.api_key = key;
      fake::FakeService service(options);
      Fault fault = status(200);
      fault.body = body;
      service.inject(kPath, fault);
      auto fetcher = f.make_fetcher(f.settings_for(service), key);
      f.queue_stream_job("w-1");
      BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
      const auto rows = f.fetched_rows();
      BOOST_REQUIRE_EQUAL(rows.size(), 1u);
      BOOST_TEST(rows[0].body.find(key.substr(0, 12)) == std::string::npos, rows[0].body);
      BOOST_TEST(rows[0].body.find(key.substr(12)) == std::string::npos, rows[0].body);
      BOOST_TEST(rows[0].body.find("[redacted]") != std::string::npos, rows[0].body);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_stall_past_the_read_deadline_is_retried) {
  // A 1 s deadline against a 3 s stall: the retry, which is not stalled, must also finish
  // within the deadline, on a loaded CI machine under ASan.
  expect_retried_then_done(fault_of(Fault::Kind::stall_head, std::chrono::seconds(3)), "timeout: waiting for the response",
                           std::chrono::seconds(1));
  expect_retried_then_done(fault_of(Fault::Kind::stall_body, std::chrono::seconds(3)),
                           "timeout: reading the response body", std::chrono::seconds(1));
}

// A server that never pauses long enough for the read deadline but never finishes either:
// each byte of the answer comes 20 ms after the last (the whole would take seconds), and
// the deadline of the whole fetch, not the read deadline, ends it. The retry is not dripped.
BOOST_AUTO_TEST_CASE(an_answer_dripping_past_the_fetch_deadline_is_retried) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.set_stream_points("w-1", 40);
  service.inject(kPath, fault_of(Fault::Kind::drip_body, std::chrono::milliseconds(20)));
  auto settings = f.settings_for(service);
  settings.fetch_timeout_s = 1;
  auto fetcher = f.make_fetcher(settings, test::kApiKey, std::chrono::seconds(1));
  const int64_t id = f.queue_stream_job("w-1");

  auto first = fetcher->run_due_now();
  BOOST_REQUIRE_EQUAL(first.size(), 1u);
  BOOST_TEST(kind_of(first[0]) == "retry");
  auto job = f.job(id);
  BOOST_TEST(job.attempts == 1);
  BOOST_TEST(contains(job.last_error.value_or(""), "timeout: no complete answer within 1000 ms"),
             job.last_error.value_or(""));
  BOOST_TEST(f.fetched_rows().empty());

  f.clock = job.next_attempt_at;
  auto second = fetcher->run_due_now();
  BOOST_REQUIRE_EQUAL(second.size(), 1u);
  BOOST_TEST(kind_of(second[0]) == "done");
  BOOST_TEST(f.fetched_rows().at(0).body == fake::stream_body(40));
}

BOOST_AUTO_TEST_CASE(a_connection_dropped_mid_body_is_retried) {
  expect_retried_then_done(fault_of(Fault::Kind::drop_mid_body), "transport: reading the response body");
  expect_retried_then_done(fault_of(Fault::Kind::close_without_response), "transport: waiting for the response");
}

BOOST_AUTO_TEST_CASE(malformed_json_is_retried_and_never_stored) {
  expect_retried_then_done(fault_of(Fault::Kind::malformed_json), "malformed JSON at byte");
}

BOOST_AUTO_TEST_CASE(an_unexpected_body_shape_is_retried) {
  Fault fault = status(200);
  fault.body = "[1,2,3]";
  expect_retried_then_done(fault, "unexpected body");
}

BOOST_AUTO_TEST_CASE(gzip_bodies_are_decoded_before_they_are_stored) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.set_gzip(true);
  service.set_stream_points("w-1", 5000);
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_stream_job("w-1");
  auto outcome = fetcher->run_due_now().at(0);
  BOOST_TEST(kind_of(outcome) == "done");
  BOOST_TEST(f.job(id).state == "done");
  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_TEST(rows[0].body == fake::stream_body(5000));
  BOOST_TEST(outcome.body_bytes == fake::stream_body(5000).size());
}

BOOST_AUTO_TEST_CASE(chunked_bodies_are_read_whole) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.set_chunked(true);
  service.set_stream_points("w-1", 3000);
  auto fetcher = f.make_fetcher(f.settings_for(service));
  f.queue_stream_job("w-1");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
  BOOST_TEST(f.fetched_rows().at(0).body == fake::stream_body(3000));
}

BOOST_AUTO_TEST_CASE(a_body_over_max_response_bytes_fails_the_job) {
  // Content-Length (refused before reading), chunked (while reading), gzip (while inflating).
  for (int variant = 0; variant < 3; ++variant) {
    BOOST_TEST_INFO("variant " << variant);
    test::FetcherFixture f;
    fake::FakeService service;
    service.set_chunked(variant == 1);
    service.set_gzip(variant == 2);
    service.set_stream_points("w-1", 2000);  // ~180 KB
    auto settings = f.settings_for(service);
    settings.max_response_bytes = 64 * 1024;
    auto fetcher = f.make_fetcher(settings);
    const int64_t id = f.queue_stream_job("w-1");
    BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "dead");
    const auto job = f.job(id);
    BOOST_TEST(job.attempts == 1);
    BOOST_TEST(job.last_error.value_or("").starts_with("too_large: "));
    BOOST_TEST(f.fetched_rows().empty());
  }
}

BOOST_AUTO_TEST_CASE(a_30_mb_stream_is_stored_whole) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.set_stream_points("w-1", 520'000);
  auto fetcher = f.make_fetcher(f.settings_for(service));
  f.queue_stream_job("w-1");
  auto outcome = fetcher->run_due_now().at(0);
  BOOST_TEST(kind_of(outcome) == "done");
  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_TEST(rows[0].body.size() > 30'000'000u);
  BOOST_TEST(rows[0].body == fake::stream_body(520'000));
}

BOOST_AUTO_TEST_CASE(keep_alive_reuses_one_connection) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  for (int i = 0; i < 5; ++i) f.queue_stream_job("w-" + std::to_string(i));
  size_t done = 0;
  for (int round = 0; round < 5; ++round) {
    for (const auto& outcome : fetcher->run_due_now()) done += outcome.kind == JobOutcome::Kind::done ? 1 : 0;
  }
  BOOST_TEST(done == 5u);
  BOOST_TEST(service.connections_accepted() == 1u);
  BOOST_TEST(fetcher->connections_opened() == 1u);
}

BOOST_AUTO_TEST_CASE(an_idle_connection_the_server_closed_is_replaced_without_a_failure) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  f.queue_stream_job("w-1");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
  // The fake marks the connection idle when its coroutine resumes after the reply went
  // out, which can be after the fetcher already has the whole reply: retry (bounded).
  size_t closed = 0;
  for (int i = 0; i < 500 && closed == 0; ++i) {
    closed = service.close_idle_connections();
    if (closed == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  BOOST_TEST(closed == 1u);
  const int64_t second = f.queue_stream_job("w-2");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
  BOOST_TEST(f.job(second).attempts == 0);
  BOOST_TEST(service.connections_accepted() == 2u);
}

// A service that sends more than its answer (its Content-Length left the rest of a body
// out, or it answered twice), the extra bytes arriving after the answer was read: the
// connection is not used again, so the next job's answer is its own. The extra bytes were
// read as the next request's answer: workouts stored each other's streams, until a restart.
BOOST_AUTO_TEST_CASE(bytes_after_an_answer_are_never_the_next_jobs_answer) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const std::string smuggled = R"({"time":[999],"heartrate":[6666]})";
  Fault fault = fault_of(Fault::Kind::bytes_after_answer, std::chrono::milliseconds(50));
  fault.body = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
               std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled;
  service.inject(kPath, fault);
  f.queue_stream_job("w-1");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
  // The extra bytes are sent 50 ms after the answer: let them arrive while the connection idles.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int64_t next = f.queue_stream_job("w-2");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
  BOOST_TEST(f.job(next).attempts == 0);
  const auto rows = f.fetched_rows();
  BOOST_REQUIRE_EQUAL(rows.size(), 2u);
  for (const auto& row : rows) BOOST_TEST(row.body == fake::stream_body(120));
  BOOST_TEST(service.request_count("/v2/timeseries/workouts/w-2/stream") == 1u);
  BOOST_TEST(fetcher->connections_opened() == 2u);
}

// A slow service on a kept-alive connection: one request, one failed attempt, not a
// second copy sent at once on a new connection (only a connection the server closed is
// replaced so).
BOOST_AUTO_TEST_CASE(a_stall_on_a_kept_alive_connection_is_one_request) {
  test::FetcherFixture f;
  fake::FakeService service;
  auto fetcher = f.make_fetcher(f.settings_for(service), test::kApiKey, std::chrono::seconds(1));
  f.queue_stream_job("w-0");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");  // leaves the connection idle
  service.inject(kPath, fault_of(Fault::Kind::stall_head, std::chrono::seconds(3)));
  const int64_t slow = f.queue_stream_job("w-1");
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "retry");
  BOOST_TEST(service.request_count(kPath) == 1u);  // kPath is w-1's
  BOOST_TEST(f.job(slow).attempts == 1);
}

BOOST_AUTO_TEST_CASE(no_more_than_concurrency_requests_at_once) {
  test::FetcherFixture f;
  fake::FakeService service;
  service.inject("*", fault_of(Fault::Kind::stall_head, std::chrono::milliseconds(200)), -1);
  auto settings = f.settings_for(service);
  settings.concurrency = 2;
  auto fetcher = f.make_fetcher(settings);
  for (int i = 0; i < 6; ++i) f.queue_stream_job("w-" + std::to_string(i));
  size_t done = 0;
  for (int round = 0; round < 6 && done < 6; ++round) {
    for (const auto& outcome : fetcher->run_due_now()) done += outcome.kind == JobOutcome::Kind::done ? 1 : 0;
  }
  BOOST_TEST(done == 6u);
  BOOST_TEST(service.max_concurrent_requests() == 2u);
}

BOOST_AUTO_TEST_CASE(jobs_left_running_by_a_crash_are_requeued_at_start) {
  test::FetcherFixture f;
  fake::FakeService service;
  const int64_t id = f.queue_stream_job("w-1");
  f.on_writer([&](sqlite::Connection& db) {
    BOOST_REQUIRE(db.exec("UPDATE jobs SET state = 'running' WHERE job_id = " + std::to_string(id)).ok());
  });
  auto fetcher = f.make_fetcher(f.settings_for(service));
  auto outcomes = fetcher->run_due_now();  // the first run recovers, like start()
  BOOST_REQUIRE_EQUAL(outcomes.size(), 1u);
  BOOST_TEST(kind_of(outcomes[0]) == "done");
  BOOST_TEST(f.job(id).state == "done");
  BOOST_TEST(f.fetched_rows().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_job_retriggered_while_fetching_is_left_to_its_new_trigger) {
  test::FetcherFixture f;
  fake::FakeService service;
  // The stall keeps the fetched page's commit behind the re-trigger's; the test must see the
  // request and commit the re-trigger (a real fsync) within it, so it is long enough for a
  // loaded CI machine under ASan, and shorter than the fetcher's 5 s wait for the head.
  service.inject(kPath, fault_of(Fault::Kind::stall_head, std::chrono::seconds(3)));
  auto fetcher = f.make_fetcher(f.settings_for(service));
  const int64_t id = f.queue_stream_job("w-1", 5);
  std::vector<JobOutcome> outcomes;
  std::thread run([&] { outcomes = fetcher->run_due_now(); });
  for (int i = 0; i < 1000 && service.request_count(kPath) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  BOOST_TEST(service.request_count(kPath) == 1u);  // the fetch is in flight: re-trigger now
  f.queue_stream_job("w-1", 9);
  run.join();
  BOOST_REQUIRE_EQUAL(outcomes.size(), 1u);
  BOOST_TEST(kind_of(outcomes[0]) == "superseded");
  BOOST_TEST(f.fetched_rows().empty());  // the page of the old trigger was rolled back
  BOOST_TEST(f.job(id).state == "queued");
  BOOST_TEST(f.job(id).trigger_seq == 9);
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "done");
  BOOST_TEST(f.fetched_rows().at(0).message_id == "fetch:" + std::to_string(id) + ":9:0");
}

BOOST_AUTO_TEST_CASE(a_payload_the_fetcher_cannot_use_kills_the_job_with_the_reason) {
  test::FetcherFixture f;
  fake::FakeService service;
  const int64_t id = f.queue_stream_job("w-1");
  f.on_writer([&](sqlite::Connection& db) {
    BOOST_REQUIRE(db.exec("UPDATE jobs SET payload = '{\"user_id\":\"u\"}' WHERE job_id = " + std::to_string(id)).ok());
  });
  auto fetcher = f.make_fetcher(f.settings_for(service));
  BOOST_TEST(kind_of(fetcher->run_due_now().at(0)) == "dead");
  BOOST_TEST(f.job(id).last_error.value_or("") == "payload: missing workout_id");
  BOOST_TEST(service.requests().empty());
}

BOOST_AUTO_TEST_SUITE_END()  // fetcher_faults_test
