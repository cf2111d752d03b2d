// The fetcher's pure parts: retry scheduling, failure verdicts, gzip, base-URL policy
// and the page plan. No sockets, no database. (Retry-After parsing is the client core's:
// tests/http_client/retry_after_test.cpp.)
#include <zlib.h>

#include <boost/test/unit_test.hpp>

#include "common/timestamp.h"
#include "fetcher/base_url.h"
#include "fetcher/failure_policy.h"
#include "fetcher/fetch_plan.h"
#include "fetcher/gzip_decoder.h"
#include "fetcher/resource_kinds.h"
#include "tests/fake_service/fake_bodies.h"
#include "store/jobs/retry_policy.h"

BOOST_AUTO_TEST_SUITE(fetch_units_test)

using namespace hh;
using namespace hh::fetcher;

namespace {

store::RetryPolicy policy(int64_t attempts, int64_t initial_ms, int64_t max_ms) {
  store::RetryPolicy p;
  p.max_attempts = attempts;
  p.initial = std::chrono::milliseconds(initial_ms);
  p.max = std::chrono::milliseconds(max_ms);
  return p;
}

// Best compression: a 10 MiB body of spaces must stay small on the wire (the bomb test).
std::string gzip(const std::string& input) { return hh::fake::gzip(input, Z_BEST_COMPRESSION); }

FetchResult response(unsigned status, std::optional<std::string> retry_after = std::nullopt, std::string body = "") {
  FetchResult r;
  r.status = status;
  r.retry_after = std::move(retry_after);
  r.body = std::move(body);
  return r;
}

BaseUrl base() { return BaseUrl::parse("https://api.example.test/prefix").value(); }

store::ClaimedJob stream_job() {
  store::ClaimedJob job;
  job.job_id = 12;
  job.kind = "workout_stream";
  job.trigger_seq = 345;
  job.payload_valid = true;
  job.workout_id = "fdc70dd0-8cc8-4ec8-8b80-121fd9a3302a";
  job.user_id = "u-1";
  job.provider = "fitbit";
  return job;
}

store::ClaimedJob backfill_job(const std::string& resource) {
  store::ClaimedJob job;
  job.job_id = 3;
  job.kind = "backfill";
  job.trigger_seq = 9;
  job.payload_valid = true;
  job.user_id = "u-1";
  job.resource = resource;
  job.provider = "oura";
  job.start = "2024-01-01T00:00:00.000Z";
  job.end = "2024-03-16T00:00:00.000Z";
  return job;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(retry_policy)

BOOST_AUTO_TEST_CASE(backoff_doubles_with_equal_jitter_and_stops_at_the_cap) {
  const auto p = policy(10, 5000, 60000);
  const int64_t nominal[] = {5000, 10000, 20000, 40000, 60000, 60000};
  for (int failures = 1; failures <= 6; ++failures) {
    const int64_t d = nominal[failures - 1];
    BOOST_TEST(store::backoff_ms(p, failures, 0) == d / 2);
    BOOST_TEST(store::backoff_ms(p, failures, static_cast<uint64_t>(d / 2)) == d);  // top of the range
    for (uint64_t bits : {1ull, 12345ull, ~0ull}) {
      const int64_t delay = store::backoff_ms(p, failures, bits);
      BOOST_TEST(delay >= d / 2);
      BOOST_TEST(delay <= d);
    }
  }
}

BOOST_AUTO_TEST_CASE(backoff_never_shrinks_before_the_cap_whatever_the_jitter) {
  // The lowest delay after n+1 failures is the highest possible after n failures.
  const auto p = policy(10, 5000, 3'600'000);
  int64_t nominal = 5000;
  for (int failures = 1; failures < 9; ++failures, nominal *= 2) {
    BOOST_TEST(store::backoff_ms(p, failures, static_cast<uint64_t>(nominal / 2)) == nominal);
    BOOST_TEST(store::backoff_ms(p, failures + 1, 0) == nominal);
  }
}

BOOST_AUTO_TEST_CASE(huge_failure_counts_do_not_overflow) {
  BOOST_TEST(store::backoff_ms(policy(10, 5000, 60000), 1000, 7) <= 60000);
}

BOOST_AUTO_TEST_CASE(decisions) {
  const auto p = policy(3, 5000, 60000);
  auto first = store::decide_retry(p, 0, false, std::nullopt, 1000, 0);
  BOOST_TEST(!first.dead);
  BOOST_TEST(first.attempts == 1);
  BOOST_TEST(first.next_attempt_at_ms == 1000 + 2500);
  auto last = store::decide_retry(p, 2, false, std::nullopt, 1000, 0);
  BOOST_TEST(last.dead);  // third failure of three allowed
  BOOST_TEST(last.attempts == 3);
  auto final_failure = store::decide_retry(p, 0, true, std::nullopt, 1000, 0);
  BOOST_TEST(final_failure.dead);
  BOOST_TEST(final_failure.attempts == 1);
  auto retry_after = store::decide_retry(p, 0, false, 7, 1000, 0);
  BOOST_TEST(retry_after.next_attempt_at_ms == 1000 + 7000);
  auto clamped = store::decide_retry(p, 0, false, int64_t{10'000'000}, 0, 0);
  BOOST_TEST(clamped.next_attempt_at_ms == store::kMaxRetryAfterSeconds * 1000);
  // Retry-After 0 or a date already past: the backoff, not at once (every attempt would go
  // in a burst).
  auto negative = store::decide_retry(p, 0, false, int64_t{-5}, 1000, 0);
  BOOST_TEST(negative.next_attempt_at_ms == 1000 + 2500);
  auto zero = store::decide_retry(p, 1, false, int64_t{0}, 1000, 0);
  BOOST_TEST(zero.next_attempt_at_ms == 1000 + 5000);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(failure_verdicts)

BOOST_AUTO_TEST_CASE(statuses) {
  for (unsigned status : {400u, 401u, 403u, 404u, 410u, 422u}) {
    BOOST_TEST_INFO("status " << status);
    BOOST_TEST(judge_status(response(status), 0).final);
  }
  for (unsigned status : {408u, 429u, 500u, 502u, 503u, 504u}) {
    BOOST_TEST_INFO("status " << status);
    BOOST_TEST(!judge_status(response(status), 0).final);
  }
  const auto redirect = judge_status(response(301), 0);
  BOOST_TEST(redirect.final);
  BOOST_TEST(redirect.error.find("redirects are not followed; check service.base_url") != std::string::npos);
  // A team's job names the team's entry, where its base URL came from.
  BOOST_TEST(judge_status(response(302), 0, false, "service.teams[1].base_url").error ==
             "HTTP 302 (redirects are not followed; check service.teams[1].base_url)");
  // A 304 is final too, but no redirect: the job said "redirects are not followed".
  const auto not_modified = judge_status(response(304), 0);
  BOOST_TEST(not_modified.final);
  BOOST_TEST(not_modified.error.find("redirects") == std::string::npos, not_modified.error);
  BOOST_TEST(not_modified.error.find("unexpected") != std::string::npos, not_modified.error);
}

// Retry-After is honoured, never earlier, and spread by up to a fifth (at most 10 min): 200
// jobs told "Retry-After: 30" all fell due at one instant and got the next 429 together.
BOOST_AUTO_TEST_CASE(retry_after_is_spread_with_jitter_never_earlier) {
  const auto p = policy(5, 5000, 60000);
  BOOST_TEST(store::decide_retry(p, 0, false, 30, 1000, 0).next_attempt_at_ms == 1000 + 30'000);
  BOOST_TEST(store::decide_retry(p, 0, false, 30, 1000, 6000).next_attempt_at_ms == 1000 + 36'000);
  BOOST_TEST(store::decide_retry(p, 0, false, 30, 1000, 6001).next_attempt_at_ms == 1000 + 30'000);
  BOOST_TEST(store::decide_retry(p, 0, false, 30, 1000, 1234).next_attempt_at_ms == 1000 + 31'234);
  BOOST_TEST(store::retry_after_ms(86'400'000, 600'000) == 86'400'000 + 600'000);  // spread capped at 10 min
  BOOST_TEST(store::retry_after_ms(86'400'000, 600'001) == 86'400'000);
}

BOOST_AUTO_TEST_CASE(retry_after_only_on_429_and_503) {
  BOOST_TEST(judge_status(response(429, "30"), 0).retry_after_s.value_or(-1) == 30);
  BOOST_TEST(judge_status(response(503, "2"), 0).retry_after_s.value_or(-1) == 2);
  BOOST_TEST(!judge_status(response(500, "30"), 0).retry_after_s);
  BOOST_TEST(!judge_status(response(503, "soon"), 0).retry_after_s);
}

// A Retry-After past the one-day cap (store::kMaxRetryAfterSeconds) says the wait applied,
// and the value as sent: last_error said "(Retry-After: 90000 s)" though the job waited a
// day, and "2147483647 s" for a value too large for a number (black-box pass).
BOOST_AUTO_TEST_CASE(retry_after_past_the_cap_says_the_wait_applied) {
  BOOST_TEST(judge_status(response(429, "86400"), 0).error == "HTTP 429 (Retry-After: 86400 s)");
  const auto long_wait = judge_status(response(429, "90000"), 0);
  BOOST_TEST(long_wait.retry_after_s.value_or(-1) == 90000);
  BOOST_TEST(long_wait.error == "HTTP 429 (Retry-After: 90000 s, more than a day: waits a day)");
  BOOST_TEST(judge_status(response(503, "99999999999999999999"), 0).error ==
             "HTTP 503 (Retry-After: 99999999999999999999 s, more than a day: waits a day)");
  BOOST_TEST(judge_status(response(503, "Fri, 01 Jan 2100 00:00:00 GMT"), 0).error ==
             "HTTP 503 (Retry-After: Fri, 01 Jan 2100 00:00:00 GMT, more than a day: waits a day)");
  // What the job then waits: a day.
  const auto decision = store::decide_retry({}, 0, false, long_wait.retry_after_s, 0, 0);
  BOOST_TEST(decision.next_attempt_at_ms == store::kMaxRetryAfterSeconds * 1000);
}

BOOST_AUTO_TEST_CASE(error_text_names_the_status_and_a_clean_excerpt) {
  const auto verdict = judge_status(response(500, std::nullopt, "{\"detail\":\"boom\"}\n\x01" + std::string(300, 'x')), 0);
  BOOST_TEST(verdict.error.starts_with("HTTP 500: {\"detail\":\"boom\"}  xxx"));
  BOOST_TEST(verdict.error.ends_with("..."));
  BOOST_TEST(verdict.error.size() < 220u);
  // A body with nothing printable leaves no empty tail, as the forwarder's and replay's
  // errors (common/http_client/outcome.h's status_error).
  BOOST_TEST(judge_status(response(500, std::nullopt, ""), 0).error == "HTTP 500");
  BOOST_TEST(judge_status(response(500, std::nullopt, "\r\n"), 0).error == "HTTP 500");
}

BOOST_AUTO_TEST_CASE(transport_failures) {
  FetchResult failure;
  failure.failure = FetchFailure::certificate;
  failure.error = "TLS certificate of x rejected: hostname mismatch";
  BOOST_TEST(judge_failure(failure).final);
  failure.failure = FetchFailure::too_large;
  BOOST_TEST(judge_failure(failure).final);
  for (auto kind : {FetchFailure::connect, FetchFailure::tls, FetchFailure::timeout, FetchFailure::transport,
                    FetchFailure::protocol}) {
    failure.failure = kind;
    BOOST_TEST(!judge_failure(failure).final);
  }
  failure.failure = FetchFailure::timeout;
  failure.error = "waiting for the response: no data for 300 ms";
  BOOST_TEST(judge_failure(failure).error == "timeout: waiting for the response: no data for 300 ms");
}

BOOST_AUTO_TEST_CASE(metric_labels) {
  BOOST_TEST(request_outcome(response(200)) == "ok");
  BOOST_TEST(request_outcome(response(429)) == "http_429");
  BOOST_TEST(request_outcome(response(404)) == "http_4xx");
  BOOST_TEST(request_outcome(response(503)) == "http_5xx");
  BOOST_TEST(request_outcome(response(301)) == "http_other");
  FetchResult failure;
  failure.failure = FetchFailure::timeout;
  BOOST_TEST(request_outcome(failure) == "timeout");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(gzip_decoding)

BOOST_AUTO_TEST_CASE(round_trip_in_small_pieces) {
  std::string original;
  for (int i = 0; i < 20000; ++i) original += "{\"time\":" + std::to_string(i) + "},";
  const std::string packed = gzip(original);
  GzipDecoder decoder;
  std::string out;
  for (size_t at = 0; at < packed.size(); at += 777) {
    BOOST_REQUIRE(decoder.feed(std::string_view(packed).substr(at, 777), out, 1 << 30).ok());
  }
  BOOST_TEST(decoder.finished());
  BOOST_TEST(out == original);
}

BOOST_AUTO_TEST_CASE(concatenated_members) {
  GzipDecoder decoder;
  std::string out;
  BOOST_REQUIRE(decoder.feed(gzip("{\"a\":") + gzip("1}"), out, 1000).ok());
  BOOST_TEST(decoder.finished());
  BOOST_TEST(out == "{\"a\":1}");
}

BOOST_AUTO_TEST_CASE(a_small_body_that_inflates_past_the_limit_fails) {
  const std::string bomb = gzip(std::string(10 * 1024 * 1024, ' '));
  BOOST_TEST(bomb.size() < 20000u);
  GzipDecoder decoder;
  std::string out;
  auto fed = decoder.feed(bomb, out, 1024 * 1024);
  BOOST_TEST(!fed.ok());
  BOOST_TEST(out.size() <= 1024u * 1024u);
}

BOOST_AUTO_TEST_CASE(corrupt_and_truncated_data) {
  std::string packed = gzip("{\"a\":1}");
  GzipDecoder truncated;
  std::string out;
  BOOST_TEST(truncated.feed(std::string_view(packed).substr(0, packed.size() - 4), out, 1000).ok());
  BOOST_TEST(!truncated.finished());
  packed[12] = static_cast<char>(packed[12] ^ 0x55);
  GzipDecoder corrupt;
  out.clear();
  const bool failed_or_unfinished = !corrupt.feed(packed, out, 1000).ok() || !corrupt.finished();
  BOOST_TEST(failed_or_unfinished);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(base_url)

BOOST_AUTO_TEST_CASE(https_and_only_loopback_http) {
  auto https = BaseUrl::parse("https://api.sandbox.example/");
  BOOST_REQUIRE(https.ok());
  BOOST_TEST(https->tls);
  BOOST_TEST(https->port == 443);
  BOOST_TEST(https->path_prefix == "");
  BOOST_TEST(https->authority() == "api.sandbox.example");
  auto local = BaseUrl::parse("http://127.0.0.1:8123");
  BOOST_REQUIRE(local.ok());
  BOOST_TEST(!local->tls);
  BOOST_TEST(local->authority() == "127.0.0.1:8123");
  for (const char* refused : {"http://api.sandbox.example", "http://localhost:8080", "http://127.0.0.2", "ftp://x",
                              "https://user:pw@api.example", "https://api.example/?a=1", "api.example", ""}) {
    BOOST_TEST_INFO(refused);
    BOOST_TEST(!BaseUrl::parse(refused).ok());
  }
}

// Boost.URL 1.81 read "127.0.0.1.evil.example:43510" as the host 127.0.0.1 on port 443 (and
// as plain http allowed for loopback): such a name is refused, naming it (black-box pass).
BOOST_AUTO_TEST_CASE(a_host_name_that_begins_with_an_ipv4_address_is_refused_not_cut_short) {
  for (const char* url : {"https://127.0.0.1.evil.example:43510", "http://127.0.0.1.evil.example:43510/v2",
                          "https://10.0.0.5.nip.io:8443"}) {
    BOOST_TEST_INFO(url);
    const auto parsed = BaseUrl::parse(url);
    BOOST_REQUIRE(!parsed.ok());
    BOOST_TEST(parsed.error().find("begins with an IPv4 address") != std::string::npos, parsed.error());
  }
  const auto address = BaseUrl::parse("https://10.0.0.5:8443/prefix");
  BOOST_REQUIRE(address.ok());
  BOOST_TEST(address->authority() == "10.0.0.5:8443");
}

BOOST_AUTO_TEST_CASE(ids_cannot_change_the_endpoint) {
  const BaseUrl b = base();
  BOOST_TEST(build_path(b, {"v2", "a b/c?d"}).value() == "/prefix/v2/a%20b%2Fc%3Fd");
  BOOST_TEST(!build_path(b, {"v2", ".."}).ok());
  BOOST_TEST(!build_path(b, {"v2", ""}).ok());
  BOOST_TEST(with_query("/p", {{"cursor", "eyJ=+/"}, {"provider", "oura"}}) == "/p?cursor=eyJ%3D%2B%2F&provider=oura");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(fetch_plan)

BOOST_AUTO_TEST_CASE(workout_stream_page) {
  auto plan = plan_next_page(stream_job(), base());
  BOOST_REQUIRE(plan.ok());
  BOOST_TEST(plan->target == "/prefix/v2/timeseries/workouts/fdc70dd0-8cc8-4ec8-8b80-121fd9a3302a/stream");
  BOOST_TEST(plan->message_id == "fetch:12:345:0");
  BOOST_TEST(plan->event_type == "fetch.workout_stream");
  BOOST_TEST(plan->context_json ==
             R"({"kind":"workout_stream","workout_id":"fdc70dd0-8cc8-4ec8-8b80-121fd9a3302a","user_id":"u-1",)"
             R"("provider":"fitbit","url":"https://api.example.test/prefix/v2/timeseries/workouts/)"
             R"(fdc70dd0-8cc8-4ec8-8b80-121fd9a3302a/stream"})");
  auto progress = progress_after(stream_job(), *plan, " {\"time\":[]}");
  BOOST_REQUIRE(progress.ok());
  BOOST_TEST(progress->complete);
  BOOST_TEST(progress->page == 1);
  BOOST_TEST(!progress_after(stream_job(), *plan, "[1,2]").ok());
}

BOOST_AUTO_TEST_CASE(a_requeued_stream_gets_a_new_message_id) {
  auto job = stream_job();
  job.page = 1;
  BOOST_TEST(plan_next_page(job, base())->message_id == "fetch:12:345:1");
}

BOOST_AUTO_TEST_CASE(bad_payloads_are_refused) {
  auto job = stream_job();
  job.workout_id.clear();
  BOOST_TEST(plan_next_page(job, base()).error() == "payload: missing workout_id");
  job = stream_job();
  job.workout_id = "..";
  BOOST_TEST(!plan_next_page(job, base()).ok());
  job = stream_job();
  job.payload_valid = false;
  BOOST_TEST(plan_next_page(job, base()).error() == "payload is not valid JSON");
  auto backfill = backfill_job("sleep");
  backfill.end = "2023-01-01T00:00:00Z";
  BOOST_TEST(plan_next_page(backfill, base()).error() == "payload: the window ends before it starts");
  backfill = backfill_job("sleep");
  backfill.start = "yesterday";
  BOOST_TEST(!plan_next_page(backfill, base()).ok());
}

BOOST_AUTO_TEST_CASE(summary_backfill_reads_the_window_in_slices) {
  auto job = backfill_job("sleep");
  std::vector<std::string> targets;
  for (int guard = 0; guard < 10; ++guard) {
    auto plan = plan_next_page(job, base());
    BOOST_REQUIRE(plan.ok());
    BOOST_TEST(plan->event_type == "fetch.summaries.sleep");
    BOOST_TEST(plan->message_id == "fetch:3:9:" + std::to_string(guard));
    targets.push_back(plan->target);
    auto progress = progress_after(job, *plan, R"({"sleep":[]})");
    BOOST_REQUIRE(progress.ok());
    if (progress->complete) break;
    job.page = progress->page;
    job.next_start_ms = progress->next_start_ms;
  }
  BOOST_REQUIRE_EQUAL(targets.size(), 3u);
  BOOST_TEST(targets[0] ==
             "/prefix/v2/summary/sleep/u-1?start_date=2024-01-01T00%3A00%3A00.000Z&end_date=2024-01-31T00%3A00%3A00.000Z"
             "&provider=oura");
  BOOST_TEST(targets[2] ==
             "/prefix/v2/summary/sleep/u-1?start_date=2024-03-01T00%3A00%3A00.000Z&end_date=2024-03-16T00%3A00%3A00.000Z"
             "&provider=oura");
  auto plan = plan_next_page(backfill_job("sleep"), base());
  BOOST_TEST(plan->context_json ==
             R"({"kind":"summaries","resource":"sleep","user_id":"u-1","provider":"oura","url":"https://api.example.test)" +
                 plan->target + R"("})");
  BOOST_TEST(!progress_after(backfill_job("sleep"), *plan, R"({"activity":[]})").ok());
}

BOOST_AUTO_TEST_CASE(workout_stream_backfill_reads_workouts) {
  auto plan = plan_next_page(backfill_job("workout_stream"), base());
  BOOST_REQUIRE(plan.ok());
  BOOST_TEST(plan->target.starts_with("/prefix/v2/summary/workouts/u-1?start_date="));
  BOOST_TEST(plan->event_type == "fetch.workouts_for_streams");
  BOOST_TEST(plan->context_json.starts_with(R"({"kind":"workouts_for_streams","user_id":"u-1","provider":"oura",)"));
  BOOST_TEST(progress_after(backfill_job("workout_stream"), *plan, R"({"workouts":[{"id":"w"}]})").ok());
}

BOOST_AUTO_TEST_CASE(timeseries_backfill_follows_the_cursor) {
  auto job = backfill_job("heartrate");
  auto plan = plan_next_page(job, base());
  BOOST_REQUIRE(plan.ok());
  BOOST_TEST(plan->target ==
             "/prefix/v2/timeseries/u-1/heartrate/grouped?start_date=2024-01-01T00%3A00%3A00.000Z"
             "&end_date=2024-03-16T00%3A00%3A00.000Z&provider=oura");
  BOOST_TEST(plan->event_type == "fetch.timeseries.heartrate");
  auto progress = progress_after(job, *plan, R"({"groups":{},"next_cursor":"eyJvZmZzZXQiOjF9"})");
  BOOST_REQUIRE(progress.ok());
  BOOST_TEST(!progress->complete);
  BOOST_TEST(progress->cursor.value() == "eyJvZmZzZXQiOjF9");
  job.page = progress->page;
  job.cursor = progress->cursor;
  plan = plan_next_page(job, base());
  BOOST_TEST(plan->target.ends_with("&provider=oura&cursor=eyJvZmZzZXQiOjF9"));
  BOOST_TEST(plan->message_id == "fetch:3:9:1");
  // The same cursor again: read as progress here; the runner sees the cursor come back
  // and ends the job dead once the page is stored (job_runner.cpp, backfill_test).
  BOOST_TEST(progress_after(job, *plan, R"({"groups":{},"next_cursor":"eyJvZmZzZXQiOjF9"})")->cursor.value() ==
             "eyJvZmZzZXQiOjF9");
  BOOST_TEST(!progress_after(job, *plan, R"({"groups":{},"next_cursor":5})").ok());
  BOOST_TEST(!progress_after(job, *plan, R"({"data":[]})").ok());
  auto last = progress_after(job, *plan, R"({"groups":{"oura":[]},"next_cursor":null})");
  BOOST_TEST(last->complete);
  BOOST_TEST(progress_after(job, *plan, R"({"groups":{}})")->complete);
}

// A backfill page about another user or provider is refused before it is stored
// (fetcher/page_owner.h), read as the processor reads it; the refresh check's words.
BOOST_AUTO_TEST_CASE(a_backfill_page_about_another_user_or_provider_is_refused) {
  // The error progress_after gives `body` as a page of `job` ("" when it takes it).
  const auto refusal = [](const store::ClaimedJob& job, const std::string& body) -> std::string {
    auto plan = plan_next_page(job, base());
    BOOST_REQUIRE(plan.ok());
    auto progress = progress_after(job, *plan, body);
    return progress ? std::string() : progress.error();
  };
  const auto sleep = backfill_job("sleep");  // u-1, oura
  const std::string mine = R"({"id":"a","user_id":"u-1","calendar_date":"2024-01-02","source":{"provider":"oura"}})";
  const std::string other_user = "unexpected answer: user_id \"u-2\" is not the user asked for";
  const std::string other_provider = "unexpected answer: provider \"polar\" is not the provider asked for";

  // The service's own answer, and what names nobody (the item gets the job's user and
  // provider), pass; so does an item dated outside the window (items may overlap it).
  BOOST_TEST(refusal(sleep, R"({"sleep":[)" + mine + "]}") == "");
  BOOST_TEST(refusal(sleep, R"({"sleep":[{"id":"a","user_id":null,"source":{"provider":"","type":"ring"}},{"id":"b"}]})") == "");
  BOOST_TEST(refusal(sleep, R"({"sleep":[{"id":"a","user_id":"u-1","calendar_date":"2019-06-01"}]})") == "");
  BOOST_TEST(refusal(sleep, R"({"sleep":[{"id":"a","user_id":"U-1"}]})") == "");  // an id's case is not another user

  // One item of another user refuses the page, whichever way the item names them.
  BOOST_TEST(refusal(sleep, R"({"sleep":[)" + mine + R"(,{"id":"b","user_id":"u-2"}]})") ==
             other_user + ", at sleep[1]");
  BOOST_TEST(refusal(sleep, R"({"sleep":[{"id":"b","user\u005fid":"u-2"}]})") == other_user + ", at sleep[0]");
  BOOST_TEST(refusal(sleep, R"({"sleep":[{"id":"b","user_id":"u-1","user_id":"u-2"}]})") ==
             other_user + ", at sleep[0]");  // the processor keeps the last
  BOOST_TEST(refusal(sleep, R"({"user_id":"u-2","sleep":[]})") == other_user);
  BOOST_TEST(refusal(sleep, R"({"sleep":[{"id":"b","source":{"provider":"polar","type":"watch"}}]})") ==
             other_provider + ", at sleep[0].source.provider");
  BOOST_TEST(refusal(sleep, R"({"sleep":[{"id":"b","source":{"slug":"polar"}}]})") ==
             other_provider + ", at sleep[0].source.slug");
  BOOST_TEST(refusal(sleep, R"({"sleep":[{"id":"b","source":"polar"}]})") == other_provider + ", at sleep[0].source");
  BOOST_TEST(refusal(sleep, R"({"sleep":[{"id":"b","source_provider":"polar"}]})") ==
             other_provider + ", at sleep[0].source_provider");
  // Quoted as JSON, cut short: a control character or a megabyte never reaches the log whole.
  BOOST_TEST(refusal(sleep, R"({"sleep":[{"id":"b","user_id":"\u001b[2J)" + std::string(5000, 'x') + R"("}]})")
                 .size() < 200u);

  BOOST_TEST(refusal(backfill_job("meal"), R"({"meals":[{"id":"m","user_id":"u-2"}]})") == other_user + ", at meals[0]");
  BOOST_TEST(refusal(backfill_job("workout_stream"), R"({"workouts":[{"id":"w","user_id":"u-2"}]})") ==
             other_user + ", at workouts[0]");
  const auto profile = backfill_job("profile");
  BOOST_TEST(refusal(profile, R"({"id":"p","user_id":"u-1","source":{"provider":"oura"}})") == "");
  BOOST_TEST(refusal(profile, R"({"id":"p","user_id":"u-2","source":{"provider":"oura"}})") == other_user);
  BOOST_TEST(refusal(profile, R"({"id":"p","user_id":"u-1","source":{"provider":"polar"}})") ==
             other_provider + ", at source.provider");

  // Grouped timeseries: the group's key is its provider.
  const auto heartrate = backfill_job("heartrate");
  const std::string group = R"([{"source":{"provider":"oura","type":"ring"},"data":[{"timestamp":"2019-01-01T00:00:00+00:00","value":61}]}])";
  BOOST_TEST(refusal(heartrate, R"({"groups":{"oura":)" + group + R"(},"next_cursor":null})") == "");
  BOOST_TEST(refusal(heartrate, R"({"groups":{"polar":[{"source":{"provider":"polar"},"data":[]}]},"next_cursor":null})") ==
             other_provider + ", at groups.polar");
  BOOST_TEST(refusal(heartrate, R"({"groups":{"oura":[{"source":{"provider":"polar"},"data":[]}]}})") ==
             other_provider + ", at groups.oura[0].source.provider");
  BOOST_TEST(refusal(heartrate, R"({"user_id":"u-2","groups":{"oura":)" + group + "}}") == other_user);
  BOOST_TEST(refusal(heartrate, R"({"groups":{"oura":[{"user_id":"u-2","data":[]}]}})") ==
             other_user + ", at groups.oura[0]");

  // A workout stream names no user: its job is not a backfill.
  auto plan = plan_next_page(stream_job(), base());
  BOOST_TEST(progress_after(stream_job(), *plan, R"({"time":[],"user_id":"u-2"})").ok());
}

BOOST_AUTO_TEST_CASE(resource_sources) {
  BOOST_TEST(static_cast<int>(backfill_source("sleep")) == static_cast<int>(BackfillSource::summaries));
  BOOST_TEST(static_cast<int>(backfill_source("meal")) == static_cast<int>(BackfillSource::summaries));
  BOOST_TEST(static_cast<int>(backfill_source("profile")) == static_cast<int>(BackfillSource::single_summary));
  BOOST_TEST(summary_items_key("meal") == "meals");
  BOOST_TEST(summary_items_key("sleep") == "sleep");
  BOOST_TEST(static_cast<int>(backfill_source("workout_stream")) ==
             static_cast<int>(BackfillSource::workouts_for_streams));
  BOOST_TEST(static_cast<int>(backfill_source("glucose")) == static_cast<int>(BackfillSource::timeseries));
  BOOST_TEST(static_cast<int>(backfill_source("brand_new_thing")) == static_cast<int>(BackfillSource::timeseries));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // fetch_units_test
