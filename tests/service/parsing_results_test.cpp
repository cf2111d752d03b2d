// The parsing-results follow-up through `serve` (issue 47): a lab_report.parsing_job.*
// delivery that says `completed` without results queues a fetch of
// GET /lab_report/v1/parser/job/{id} (the workout streams' job queue, retries and dead
// state); the fetched job's results go on the parsing job's row with a change-feed entry;
// a 404 or a 500 is retried, then the job is dead; `query parsing-jobs` shows both.
#include <boost/test/unit_test.hpp>

#include "tests/service/service_fixture.h"
#include "tests/support/database_probe.h"
#include "tests/support/examples.h"
#include "tests/support/http_client.h"

BOOST_AUTO_TEST_SUITE(parsing_results_test)

using namespace hh;
using test::has;

namespace {

// The job of schemas/examples/lab-parsing-job-completed.json.
const std::string kJob = "8eb0217f-3c4d-4e5f-9a0b-1c2d3e4f5a6b";
const std::string kResults =
    R"({"metadata":{"lab_name":"Quest Diagnostics"},"results":[{"test_name":"LDL Cholesterol","value":"131",)"
    R"("units":"mg/dL","interpretation":"abnormal","loinc_matches":[],"loinc_match_status":"auto_match"}]})";

// The example's completed job, without its results (data null), as some deliveries come.
std::string completed_without_results() {
  std::string body = test::example_file("lab-parsing-job-completed.json");
  const size_t start = body.find("\"data\": {\n      \"metadata\"");
  BOOST_REQUIRE(start != std::string::npos);
  const size_t end = body.find("\n  },\n  \"user_id\"");
  BOOST_REQUIRE(end != std::string::npos);
  return body.substr(0, start) + "\"data\": null\n  }" + body.substr(end + 4);
}

// GET /lab_report/v1/parser/job/{kJob}'s answer (reference notes §2.8): `failure_reason`
// and `data` as JSON.
std::string job_answer(const std::string& status, const std::string& failure_reason, const std::string& data) {
  return R"({"id":")" + kJob + R"(","status":")" + status + R"(","failure_reason":)" + failure_reason +
         R"(,"needs_human_review":false,"is_reviewed":false,"data":)" + data + "}";
}

std::string serve_toml(const test::ServiceCommands& t, int max_attempts) {
  return "[service]\nbase_url = \"" + t.service.base_url() +
         "\"\napi_key_file = \"api-key\"\nca_file = \"service-ca.pem\"\nmax_attempts = " +
         std::to_string(max_attempts) + "\nbackoff_initial_s = 1\nbackoff_max_s = 1\n";
}

std::string parsing_jobs(const std::string& database) {
  const auto result = test::run_healthhook({"query", "parsing-jobs", "--database", database, "--format", "jsonl"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  return result.stdout_text;
}

std::vector<fake::RecordedRequest> job_fetches(const test::ServiceCommands& t) {
  std::vector<fake::RecordedRequest> out;
  for (auto& request : t.calls()) {
    if (request.path == "/lab_report/v1/parser/job/" + kJob) out.push_back(request);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_completed_job_without_results_gets_them_fetched_and_stored) {
  test::ServiceCommands t;
  t.service.interface().set_parsing_job(kJob, job_answer("completed", "null", kResults));
  test::ServerProcess server(t.dir, serve_toml(t, 3));
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_parsed", completed_without_results()).status, 200);
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE kind = 'parsing_job' AND "
                                                     "state = 'done'", 1));
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM lab_parsing_jobs WHERE results IS NOT NULL", 1));
  BOOST_TEST(test::query_text(server.database(), "SELECT results FROM lab_parsing_jobs") == kResults);
  // Still the user's (the service's ParsingJob names none): purge-user finds it by this column.
  BOOST_TEST(test::query_text(server.database(), "SELECT count(*) FROM lab_parsing_jobs WHERE user_id IS NULL") == "0");
  // The row and its feed: inserted by the webhook, updated by the fetched job.
  BOOST_TEST(test::query_text(server.database(), "SELECT group_concat(op, ',') FROM changes WHERE table_name = "
                                                 "'lab_parsing_jobs' AND row_key = '" + kJob + "'") == "insert,update");
  BOOST_TEST(test::query_text(server.database(), "SELECT family FROM deliveries WHERE origin = 'fetch' AND "
                                                 "event_type = 'fetch.parsing_job'") == "fetched_parsing_job");
  const auto fetches = job_fetches(t);
  BOOST_REQUIRE_EQUAL(fetches.size(), 1u);
  BOOST_TEST(fetches[0].method == "GET");
  BOOST_TEST(fetches[0].api_key == test::kCommandsApiKey);
  const std::string rows = parsing_jobs(server.database());
  BOOST_TEST(has(rows, "\"results\":" + kResults), rows);
  BOOST_TEST(has(rows, "\"job_state\":\"done\",\"job_attempts\":0,\"job_error\":null"), rows);

  // A delivery with results queues nothing; the example carries them.
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_with_results",
                                          test::example_file("lab-parsing-job-completed.json")).status,
                      200);
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM deliveries WHERE status = 'pending'", 0));
  BOOST_TEST(test::query_int(server.database(), "SELECT count(*) FROM jobs") == 1);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_missing_or_failing_job_is_retried_then_dead) {
  for (const unsigned status : {404u, 500u}) {
    BOOST_TEST_CONTEXT("HTTP " << status) {
      test::ServiceCommands t;
      if (status == 500) {
        fake::Fault broken;
        broken.kind = fake::Fault::Kind::status;
        broken.status = 500;
        t.service.inject("/lab_report/v1/parser/job/" + kJob, broken, -1);
      }  // 404: the fake does not know the job
      test::ServerProcess server(t.dir, serve_toml(t, 2));
      test::HttpClient client(server.port());
      BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_parsed", completed_without_results()).status, 200);
      BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE state = 'dead'", 1,
                                      std::chrono::seconds(60)));
      BOOST_TEST(test::query_int(server.database(), "SELECT attempts FROM jobs") == 2);
      BOOST_TEST(job_fetches(t).size() == 2u);  // retried once, then dead
      BOOST_TEST(test::query_text(server.database(), "SELECT results FROM lab_parsing_jobs") == "NULL");
      const std::string rows = parsing_jobs(server.database());
      BOOST_TEST(has(rows, "\"job_state\":\"dead\",\"job_attempts\":2,\"job_error\":\"HTTP " + std::to_string(status)),
                 rows);
      BOOST_TEST(server.stop() == 0);
    }
  }
}

// An answer without its results (data null: the job not readable yet) is retried, and one
// of another shape (data.results not an array) is never stored: both were stored, the job
// `done` with no results or with the wrong ones (black-box pass).
BOOST_AUTO_TEST_CASE(an_answer_without_results_or_of_another_shape_is_retried_not_stored) {
  for (const std::string& data : {std::string("null"), std::string(R"({"results":"nope"})")}) {
    BOOST_TEST_CONTEXT("data " << data) {
      test::ServiceCommands t;
      t.service.interface().set_parsing_job(kJob, job_answer("completed", "null", data));
      test::ServerProcess server(t.dir, serve_toml(t, 2));
      test::HttpClient client(server.port());
      BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_parsed", completed_without_results()).status, 200);
      BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE state = 'dead'", 1,
                                      std::chrono::seconds(60)));
      BOOST_TEST(job_fetches(t).size() == 2u);  // retried once, then dead
      BOOST_TEST(test::query_text(server.database(), "SELECT results FROM lab_parsing_jobs") == "NULL");
      BOOST_TEST(test::query_int(server.database(), "SELECT count(*) FROM deliveries WHERE event_type = 'fetch.parsing_job'") == 0);
      const std::string rows = parsing_jobs(server.database());
      BOOST_TEST(has(rows, data == "null" ? "results are not there yet" : "no \\\"data\\\".\\\"results\\\" array"), rows);
      BOOST_TEST(server.stop() == 0);
    }
  }
}

// A job the service says failed carries no results and never will: its answer is kept and
// the follow-up is done (it was retried as "not there yet" until dead; second attack).
BOOST_AUTO_TEST_CASE(a_failed_job_without_results_is_done) {
  test::ServiceCommands t;
  t.service.interface().set_parsing_job(kJob, job_answer("failed", R"("low_quality")", "null"));
  test::ServerProcess server(t.dir, serve_toml(t, 2));
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_parsed", completed_without_results()).status, 200);
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE state = 'done'", 1,
                                  std::chrono::seconds(60)));
  BOOST_TEST(job_fetches(t).size() == 1u);
  BOOST_TEST(test::query_text(server.database(), "SELECT results FROM lab_parsing_jobs") == "NULL");
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
