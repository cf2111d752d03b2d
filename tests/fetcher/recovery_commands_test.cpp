// `healthhook backfill`, `healthhook refresh` and `purge-user --deregister` as processes
// (issue 37, recovery and erasure): the jobs backfill queues are the ones a historical.data
// notice queues (same key, same payload, no second row), a running serve fetches them from
// the fake service, refresh prints what the fake answers and sends the method, path,
// timeout and key the interface names, purge-user erases only after the service
// deregistered the user, and bad input is refused before anything is queued or sent.
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <fstream>
#include <sstream>
#include <thread>

#include <sqlite3.h>

#include "store/sqlite/database.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "tests/fake_service/fake_service.h"
#include "tests/fetcher/fetcher_fixture.h"
#include "tests/support/database_probe.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(recovery_commands_test)

using namespace hh;
using namespace std::chrono_literals;

namespace {

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr const char* kRecoveryKey = "recovery-test-api-key";
// The user, window and provider of schemas/examples/historical-backfill-without-is-final.json.
const std::string kNoticeUser = "e9e072e8-0b39-4e5a-a3b2-9a1c0f6b2d44";
const std::vector<std::string> kNoticeWindow = {"--resource", "heartrate", "--provider", "garmin",
                                                "--since",    "2024-08-04", "--until",  "2024-11-01"};
const std::string kNoticeLine =
    "heartrate from garmin, 2024-08-04T00:00:00.000Z to 2024-11-02T00:00:00.000Z\n";

std::vector<store::JobRow> recovery_jobs(const std::string& database) {
  auto db = store::open_admin_connection(database);
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  return store::list_jobs(*db, std::nullopt).value();
}

// A new, migrated database with no deliveries.
std::string recovery_empty_database(const test::TempDir& dir) {
  const std::string path = dir.file("healthhook.db");
  auto db = store::open_for_writing(path, {});
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  return path;
}

// `healthhook backfill` on `database`, with [service]'s API key set (a key file beside the
// database; backfill only queues, it never reads it) unless `with_api_key` is false.
test::ProcessResult run_backfill(const std::string& database, const std::string& user,
                                 const std::vector<std::string>& flags, bool with_api_key = true) {
  std::vector<std::string> args = {"backfill", user};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back("--database");
  args.push_back(database);
  if (with_api_key) {
    const std::string key_file = (std::filesystem::path(database).parent_path() / "backfill-api-key").string();
    std::ofstream(key_file) << kRecoveryKey << "\n";
    args.push_back("--set");
    args.push_back("service.api_key_file=" + key_file);
  }
  return test::run_healthhook(args);
}

// A configuration whose [service] is `service` (TLS with its CA, or plain).
std::string recovery_config(const test::TempDir& dir, const std::string& base_url, const std::string& ca_pem) {
  dir.write("api-key", std::string(kRecoveryKey) + "\n");
  std::string toml = "database = \"" + dir.file("healthhook.db") + "\"\n[service]\nbase_url = \"" + base_url +
                     "\"\napi_key_file = \"api-key\"\n";
  if (!ca_pem.empty()) {
    dir.write("service-ca.pem", ca_pem);
    toml += "ca_file = \"service-ca.pem\"\n";
  }
  return dir.write("healthhook.toml", toml);
}

fake::FakeOptions recovery_service(fake::TlsMode tls = fake::TlsMode::valid) {
  fake::FakeOptions options;
  options.tls = tls;
  options.api_key = kRecoveryKey;
  return options;
}

size_t recovery_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

}  // namespace

BOOST_AUTO_TEST_CASE(backfill_finds_the_job_a_notice_queued_for_the_same_window) {
  test::TempDir dir;
  test::ServerProcess server(dir);  // no [service]: the job stays queued
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(
      client.post_webhook(server.secret(), "msg_notice", test::example_file("historical-backfill-without-is-final.json"))
          .status,
      200);
  BOOST_REQUIRE(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs", 1));

  const auto result = run_backfill(server.database(), kNoticeUser, kNoticeWindow);
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "already queued job 1 (queued): " + kNoticeLine);
  BOOST_TEST(result.stderr_text == "");
  BOOST_TEST(recovery_jobs(server.database()).size() == 1u);
  BOOST_TEST(server.stop() == 0);
}

// Black-box pass: a notice with dates alone ("end_date": "2024-11-01") names the same
// window as the full-time form and as `backfill --until 2024-11-01`: one job, not two.
BOOST_AUTO_TEST_CASE(backfill_finds_the_job_a_notice_of_dates_alone_queued) {
  test::TempDir dir;
  test::ServerProcess server(dir);  // no [service]: the job stays queued
  test::HttpClient client(server.port());
  std::string notice = test::example_file("historical-backfill-without-is-final.json");
  for (const auto& [full, date] : {std::pair{"2024-08-04T00:00:00+00:00", "2024-08-04"},
                                   std::pair{"2024-11-02T00:00:00+00:00", "2024-11-01"}}) {
    const size_t at = notice.find(full);
    BOOST_REQUIRE(at != std::string::npos);
    notice.replace(at, std::string_view(full).size(), date);
  }
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_dates", notice).status, 200);
  BOOST_REQUIRE(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs", 1));

  const auto result = run_backfill(server.database(), kNoticeUser, kNoticeWindow);
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "already queued job 1 (queued): " + kNoticeLine);
  BOOST_TEST(recovery_jobs(server.database()).size() == 1u);
  BOOST_TEST(server.stop() == 0);
}

// The last day whose window RFC 3339 can write is queued to its end, not wrapped; a notice
// that ends with the date 9999-12-31 (a whole day, to year 10000) is kept invalid with its
// reason, no job queued (attack bbS: both were queued as ending at 0000-01-01, and died).
BOOST_AUTO_TEST_CASE(a_window_is_never_written_past_the_year_9999) {
  test::TempDir dir;
  const std::string database = recovery_empty_database(dir);
  const auto last = run_backfill(database, kNoticeUser,
                                 {"--resource", "sleep", "--since", "9999-12-30", "--until", "9999-12-30", "--provider", "oura"});
  BOOST_TEST(last.exit_code == 0, last.stderr_text);
  BOOST_TEST(last.stdout_text == "queued job 1: sleep from oura, 9999-12-30T00:00:00.000Z to 9999-12-31T00:00:00.000Z\n");

  test::TempDir served;
  test::ServerProcess server(served);  // no [service]: a job would stay queued
  test::HttpClient client(server.port());
  std::string notice = test::example_file("historical-backfill-without-is-final.json");
  const std::string end = "2024-11-02T00:00:00+00:00";
  const size_t at = notice.find(end);
  BOOST_REQUIRE(at != std::string::npos);
  notice.replace(at, end.size(), "9999-12-31");
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_last_day", notice).status, 200);
  BOOST_REQUIRE(test::wait_for_value(server.database(), "SELECT count(*) FROM deliveries WHERE status = 'invalid'", 1));
  const std::string error = test::query_text(server.database(), "SELECT error FROM deliveries WHERE status = 'invalid'");
  BOOST_TEST(error.find("a window through \"9999-12-31\" would end at its next midnight, past "
                        "9999-12-31T23:59:59.999Z") != std::string::npos,
             error);
  BOOST_TEST(test::query_int(server.database(), "SELECT count(*) FROM jobs") == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(backfill_queues_the_key_and_payload_of_a_notice_once) {
  // The job a notice queues, for comparison.
  test::TempDir notice_dir;
  std::string notice_key, notice_payload;
  {
    test::ServerProcess server(notice_dir);
    test::HttpClient client(server.port());
    BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_notice",
                                            test::example_file("historical-backfill-without-is-final.json"))
                            .status,
                        200);
    BOOST_REQUIRE(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs", 1));
    BOOST_TEST(server.stop() == 0);
    const auto jobs = recovery_jobs(server.database());
    notice_key = jobs.at(0).job_key;
    notice_payload = jobs.at(0).payload;
  }

  test::TempDir dir;
  const std::string database = recovery_empty_database(dir);
  auto result = run_backfill(database, kNoticeUser, kNoticeWindow);
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "queued job 1: " + kNoticeLine);
  auto jobs = recovery_jobs(database);
  BOOST_REQUIRE_EQUAL(jobs.size(), 1u);
  BOOST_TEST(jobs[0].kind == "backfill");
  BOOST_TEST(jobs[0].state == "queued");
  BOOST_TEST(jobs[0].job_key == notice_key);
  BOOST_TEST(jobs[0].payload == notice_payload);
  BOOST_TEST(jobs[0].trigger_seq == 0);  // the newest delivery's seq: there is none

  // The same command again: the same job, not a second one.
  result = run_backfill(database, kNoticeUser, kNoticeWindow);
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "already queued job 1 (queued): " + kNoticeLine);
  BOOST_TEST(recovery_jobs(database).size() == 1u);

  // Once it has ended, the command queues it again.
  {
    auto db = store::open_admin_connection(database);
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(db->exec("UPDATE jobs SET state = 'done', attempts = 3").ok());
  }
  result = run_backfill(database, kNoticeUser, kNoticeWindow);
  BOOST_TEST(result.stdout_text == "requeued job 1 (was done): " + kNoticeLine);
  jobs = recovery_jobs(database);
  BOOST_REQUIRE_EQUAL(jobs.size(), 1u);
  BOOST_TEST(jobs[0].state == "queued");
  BOOST_TEST(jobs[0].attempts == 0);
}

BOOST_AUTO_TEST_CASE(backfill_queues_one_job_per_resource_and_connected_provider) {
  test::TempDir dir;
  test::ServerProcess server(dir);
  test::HttpClient client(server.port());
  const std::string user = "1449752e-4b3c-4e2b-9f0e-5a7c6d8e9f10";  // schemas/examples/connection-created.json
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_connection", test::example_file("connection-created.json"))
                          .status,
                      200);
  BOOST_REQUIRE(test::wait_for_value(server.database(), "SELECT count(*) FROM connections", 1));

  const auto result = run_backfill(server.database(), user,
                                   {"--resource", "sleep,steps,sleep", "--since", "2024-05-01", "--until", "2024-05-01"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text ==
             "queued job 1: sleep from fitbit, 2024-05-01T00:00:00.000Z to 2024-05-02T00:00:00.000Z\n"
             "queued job 2: steps from fitbit, 2024-05-01T00:00:00.000Z to 2024-05-02T00:00:00.000Z\n");
  const auto jobs = recovery_jobs(server.database());
  BOOST_REQUIRE_EQUAL(jobs.size(), 2u);
  BOOST_TEST(jobs[0].job_key == user + "/sleep/fitbit/1714521600000/1714608000000");
  // Ordered after the deliveries stored so far: a later notice for the window re-queues it.
  BOOST_TEST(jobs[0].trigger_seq == test::query_int(server.database(), "SELECT max(seq) FROM deliveries"));

  // A user without a stored connection: nothing to ask, and nothing queued.
  const auto none = run_backfill(server.database(), "00000000-0000-4000-8000-000000000000",
                                 {"--resource", "sleep", "--since", "2024-05-01"});
  BOOST_TEST(none.exit_code == 1);
  BOOST_TEST(none.stdout_text == "");
  BOOST_TEST(none.stderr_text.find("nothing queued: no connection of user") != std::string::npos, none.stderr_text);
  BOOST_TEST(recovery_lines(none.stderr_text) == 1u);
  BOOST_TEST(recovery_jobs(server.database()).size() == 2u);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_running_serve_fetches_what_backfill_queued) {
  fake::FakeService service(recovery_service());
  test::TempDir dir;
  dir.write("api-key", std::string(kRecoveryKey) + "\n");
  dir.write("service-ca.pem", service.ca_pem());
  test::ServerProcess server(dir, "[service]\nbase_url = \"" + service.base_url() +
                                      "\"\napi_key_file = \"api-key\"\nca_file = \"service-ca.pem\"\n");
  const auto result = run_backfill(server.database(), kNoticeUser,
                                   {"--resource", "heartrate", "--provider", "garmin", "--since", "2024-08-04",
                                    "--until", "2024-08-04"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text ==
             "queued job 1: heartrate from garmin, 2024-08-04T00:00:00.000Z to 2024-08-05T00:00:00.000Z\n");

  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE state = 'done'", 1));
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM samples", 150));  // every sample of the fake's pages
  const std::string path = "/v2/timeseries/" + kNoticeUser + "/heartrate/grouped";
  const auto requests = service.requests_except("/v2/providers");
  BOOST_REQUIRE_EQUAL(requests.size(), 3u);
  for (const auto& request : requests) {
    BOOST_TEST(request.method == "GET");
    BOOST_TEST(request.path == path);
    BOOST_TEST(request.query.at("provider") == "garmin");
    BOOST_TEST(request.query.at("start_date") == "2024-08-04T00:00:00.000Z");
    BOOST_TEST(request.query.at("end_date") == "2024-08-05T00:00:00.000Z");
    BOOST_TEST(request.api_key == kRecoveryKey);
  }
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(backfill_refuses_bad_input_and_queues_nothing) {
  test::TempDir dir;
  const std::string database = recovery_empty_database(dir);
  struct Case {
    std::string user;
    std::vector<std::string> flags;
    std::string names;  // the option the error line names
  };
  const std::vector<Case> cases = {
      {"not-a-uuid", {"--resource", "sleep", "--since", "2024-05-01", "--provider", "oura"}, "USER_ID: "},
      {kNoticeUser, {"--resource", "sleep", "--since", "2024-02-30", "--provider", "oura"}, "--since: "},
      {kNoticeUser, {"--resource", "sleep", "--since", "2024-5-01", "--provider", "oura"}, "--since: "},
      {kNoticeUser, {"--resource", "sleep", "--since", "2024-05-01T00:00:00Z", "--provider", "oura"}, "--since: "},
      {kNoticeUser, {"--resource", "sleep", "--since", "2024-05-02", "--until", "2024-05-01", "--provider", "oura"},
       "--until: "},
      // Without --until the window ends today: the error names --since, which was typed, not
      // an --until that was not (attack of the session of a4c8a9d).
      {kNoticeUser, {"--resource", "sleep", "--since", "9999-12-30", "--provider", "oura"},
       "--since: 9999-12-30 is after today ("},
      {kNoticeUser, {"--resource", "sleep,order", "--since", "2024-05-01", "--provider", "oura"}, "--resource: "},
      // Its notices are ignored (superseded): backfill queued a fetch of it (attack, stop 76).
      {kNoticeUser, {"--resource", "hypnogram", "--since", "2024-05-01", "--provider", "oura"},
       "--resource: \"hypnogram\" is superseded by sleep_cycle"},
      {kNoticeUser, {"--resource", "sleep", "--since", "2024-05-01", "--provider", ""}, "--provider: "},
      // Its window would end in year 10000, which RFC 3339 cannot write: it was queued as
      // ending at 0000-01-01, and the job died (attack bbS).
      {kNoticeUser, {"--resource", "sleep", "--since", "9999-12-30", "--until", "9999-12-31", "--provider", "oura"},
       "--until: a window through 9999-12-31 would end at its next midnight, past 9999-12-31T23:59:59.999Z, the "
       "last time RFC 3339 writes; give 9999-12-30 or earlier"},
  };
  for (const auto& c : cases) {
    const auto result = run_backfill(database, c.user, c.flags);
    BOOST_TEST_INFO(c.names << " " << result.stderr_text);
    BOOST_TEST(result.exit_code == 2);
    BOOST_TEST(result.stdout_text == "");
    BOOST_TEST(result.stderr_text.starts_with("healthhook backfill: " + c.names));
    BOOST_TEST(recovery_lines(result.stderr_text) == 1u);
  }
  BOOST_TEST(recovery_jobs(database).empty());
  // A store that does not exist is a bad configuration (2), with or without --provider (it
  // was a runtime failure, 1, with one).
  for (const bool with_provider : {true, false}) {
    std::vector<std::string> flags = {"--resource", "sleep", "--since", "2024-05-01"};
    if (with_provider) flags.insert(flags.end(), {"--provider", "oura"});
    const auto result = run_backfill(dir.file("missing.db"), kNoticeUser, flags);
    BOOST_TEST_INFO(with_provider << " " << result.stderr_text);
    BOOST_TEST(result.exit_code == 2);
    BOOST_TEST(result.stderr_text.find("missing.db does not exist") != std::string::npos);
  }
}

// Without [service] api_key_file `serve` runs no follow-ups: the jobs wait until it is set.
// Queued, with one warning line that says so (black-box pass: they were queued without a word).
BOOST_AUTO_TEST_CASE(backfill_without_the_api_key_warns_that_its_jobs_wait) {
  test::TempDir dir;
  const std::string database = recovery_empty_database(dir);
  const auto result = run_backfill(database, kNoticeUser, kNoticeWindow, false);
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stderr_text ==
                 "healthhook backfill: warning: service.api_key_file is not set: serve runs no follow-ups without the "
                 "service's API key, so these jobs wait until it is set\n",
             result.stderr_text);
  BOOST_TEST(recovery_jobs(database).size() == 1u);
}

BOOST_AUTO_TEST_CASE(backfill_queues_an_unknown_resource_and_provider_with_warnings) {
  test::TempDir dir;
  const std::string database = recovery_empty_database(dir);
  const auto result = run_backfill(database, kNoticeUser,
                                   {"--resource", "heart_flutter", "--provider", "new_ring", "--since", "2024-05-01",
                                    "--until", "2024-05-01"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text ==
             "queued job 1: heart_flutter from new_ring, 2024-05-01T00:00:00.000Z to 2024-05-02T00:00:00.000Z\n");
  BOOST_TEST(result.stderr_text ==
             "healthhook backfill: warning: --resource: \"heart_flutter\" is not in the service's resource list; "
             "queued anyway (the list is non-exhaustive)\n"
             "healthhook backfill: warning: --provider: \"new_ring\" is not in the service's provider list; "
             "used anyway (the list is non-exhaustive)\n");
  BOOST_TEST(recovery_jobs(database).size() == 1u);
  // But every provider is a slug: a typo with a space is refused, nothing queued.
  const auto typo = run_backfill(database, kNoticeUser, {"--resource", "sleep", "--provider", "nope provider", "--since", "2024-05-01"});
  BOOST_TEST(typo.exit_code == 2);
  BOOST_TEST(typo.stderr_text.find("--provider: \"nope provider\" is not a provider slug") != std::string::npos,
             typo.stderr_text);
  // And every resource: one with a space or a '/' failed at every attempt of its job.
  for (const char* resource : {"heart rate", "sleep/x"}) {
    const auto refused =
        run_backfill(database, kNoticeUser, {"--resource", resource, "--provider", "oura", "--since", "2024-05-01"});
    BOOST_TEST(refused.exit_code == 2);
    BOOST_TEST(refused.stderr_text.find("is not a resource slug") != std::string::npos, refused.stderr_text);
  }
  BOOST_TEST(recovery_jobs(database).size() == 1u);
}

BOOST_AUTO_TEST_CASE(refresh_prints_the_sources_and_sends_what_the_interface_names) {
  fake::FakeService service(recovery_service());
  test::TempDir dir;
  const std::string config = recovery_config(dir, service.base_url(), service.ca_pem());
  auto result = test::run_healthhook({"refresh", kNoticeUser, "--timeout", "20", "--config", config});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text ==
             "refreshed: oura/sleep, oura/activity\n"
             "in progress: fitbit/heartrate\n"
             "failed: garmin/workouts/stream\n");
  BOOST_TEST(result.stderr_text == "");
  auto requests = service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 1u);
  BOOST_TEST(requests[0].method == "POST");
  BOOST_TEST(requests[0].path == "/v2/user/refresh/" + kNoticeUser);
  BOOST_TEST(requests[0].target == "/v2/user/refresh/" + kNoticeUser + "?timeout=20");
  BOOST_TEST(requests[0].api_key == kRecoveryKey);
  BOOST_TEST(requests[0].status == 200u);

  // No --timeout: the interface's default, sent explicitly; empty lists print "none".
  fake::RefreshAnswer answer;
  answer.in_progress_sources.clear();
  answer.failed_sources.clear();
  service.set_refresh_answer(answer);
  result = test::run_healthhook({"refresh", kNoticeUser, "--config", config});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "refreshed: oura/sleep, oura/activity\nin progress: none\nfailed: none\n");
  requests = service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 2u);
  BOOST_TEST(requests[1].query.at("timeout") == "10");

  // A source with a line break and an escape sequence forges no line and drives no
  // terminal (attack, stop 76).
  answer.refreshed_sources = {"oura/sleep\nfailed: none\x1b[2J"};
  service.set_refresh_answer(answer);
  result = test::run_healthhook({"refresh", kNoticeUser, "--config", config});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "refreshed: oura/sleep failed: none [2J\nin progress: none\nfailed: none\n");
  answer.refreshed_sources = {"oura/sleep", "oura/activity"};

  // The service says the refresh did not succeed: the lists, then one error line, exit 1.
  answer.success = false;
  service.set_refresh_answer(answer);
  result = test::run_healthhook({"refresh", kNoticeUser, "--config", config});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text.starts_with("refreshed: "));
  BOOST_TEST(result.stderr_text == "healthhook refresh: the service reported that the refresh did not succeed\n");
}

BOOST_AUTO_TEST_CASE(refresh_refuses_bad_input_without_a_request) {
  fake::FakeService service(recovery_service(fake::TlsMode::plain));
  test::TempDir dir;
  const std::string config = recovery_config(dir, service.base_url(), "");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"refresh", "42", "--config", config}, "healthhook refresh: USER_ID: "},
      {{"refresh", kNoticeUser + "x", "--config", config}, "healthhook refresh: USER_ID: "},
      {{"refresh", kNoticeUser, "--timeout", "3", "--config", config}, "healthhook refresh: --timeout: 3 is not between 5 and 60"},
      {{"refresh", kNoticeUser, "--timeout", "61", "--config", config}, "healthhook refresh: --timeout: 61 is not between 5 and 60"},
  };
  for (const auto& [args, expected] : cases) {
    const auto result = test::run_healthhook(args);
    BOOST_TEST_INFO(result.stderr_text);
    BOOST_TEST(result.exit_code == 2);
    BOOST_TEST(result.stderr_text.starts_with(expected));
    BOOST_TEST(recovery_lines(result.stderr_text) == 1u);
    BOOST_TEST(result.stdout_text == "");
  }
  BOOST_TEST(service.requests().empty());
}

BOOST_AUTO_TEST_CASE(refresh_reports_a_failing_service_in_one_line) {
  fake::FakeService service(recovery_service(fake::TlsMode::plain));
  test::TempDir dir;
  const std::string config = recovery_config(dir, service.base_url(), "");
  fake::Fault error;
  error.kind = fake::Fault::Kind::status;
  error.status = 500;
  service.inject("/v2/user/refresh/" + kNoticeUser, error);
  auto result = test::run_healthhook({"refresh", kNoticeUser, "--config", config});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(result.stderr_text == "healthhook refresh: POST " + service.base_url() + "/v2/user/refresh/" + kNoticeUser +
                                       "?timeout=10: HTTP 500: {\"detail\":\"injected fault\"}\n");

  // A key the service does not accept.
  dir.write("api-key", "some-other-key\n");
  result = test::run_healthhook({"refresh", kNoticeUser, "--config", config});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text.find("HTTP 401: the service refused the API key\n") != std::string::npos,
             result.stderr_text);
  BOOST_TEST(result.stderr_text.find("some-other-key") == std::string::npos);
  BOOST_TEST(recovery_lines(result.stderr_text) == 1u);
  BOOST_TEST(service.requests().size() == 2u);

  // Nothing listening: a network error.
  test::TempDir closed_dir;
  const std::string closed = recovery_config(closed_dir, "http://127.0.0.1:1", "");
  result = test::run_healthhook({"refresh", kNoticeUser, "--config", closed});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text.starts_with("healthhook refresh: POST http://127.0.0.1:1/v2/user/refresh/"),
             result.stderr_text);
  BOOST_TEST(recovery_lines(result.stderr_text) == 1u);
}

BOOST_AUTO_TEST_CASE(purge_user_deregisters_at_the_service_before_it_erases) {
  fake::FakeService service(recovery_service());
  test::TempDir dir;
  const std::string database = recovery_empty_database(dir);
  const std::string config = recovery_config(dir, service.base_url(), service.ca_pem());
  const std::string erasures = "SELECT count(*) FROM erasures";

  // --dry-run without the API key the real run needs: refused as the real run would be.
  std::filesystem::rename(dir.file("api-key"), dir.file("api-key.away"));
  auto result = test::run_healthhook({"purge-user", kNoticeUser, "--deregister", "garmin", "--dry-run", "--config", config});
  BOOST_TEST(result.exit_code == 2, result.stdout_text);
  BOOST_TEST(result.stderr_text.find("service.api_key_file") != std::string::npos, result.stderr_text);
  BOOST_TEST(result.stdout_text.find("would deregister") == std::string::npos, result.stdout_text);
  std::filesystem::rename(dir.file("api-key.away"), dir.file("api-key"));

  // --dry-run: nothing is sent, nothing erased.
  result = test::run_healthhook({"purge-user", kNoticeUser, "--deregister", "garmin", "--dry-run", "--config", config});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text.find("would deregister from garmin first") != std::string::npos, result.stdout_text);
  BOOST_TEST(service.requests().empty());
  BOOST_TEST(test::query_int(database, erasures) == 0);

  result = test::run_healthhook({"purge-user", kNoticeUser, "--deregister", "garmin", "--config", config});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text.starts_with("deregistered " + kNoticeUser + " from garmin at the service."),
             result.stdout_text);
  BOOST_TEST(result.stdout_text.find("apple_health_kit, health_connect and samsung_health") != std::string::npos);
  const auto requests = service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 1u);
  BOOST_TEST(requests[0].method == "DELETE");
  BOOST_TEST(requests[0].path == "/v2/user/" + kNoticeUser + "/garmin");
  BOOST_TEST(requests[0].api_key == kRecoveryKey);
  BOOST_TEST(test::query_int(database, erasures) == 1);
}

BOOST_AUTO_TEST_CASE(purge_user_erases_nothing_when_deregistering_fails) {
  fake::FakeService service(recovery_service(fake::TlsMode::plain));
  test::TempDir dir;
  const std::string database = recovery_empty_database(dir);
  const std::string config = recovery_config(dir, service.base_url(), "");
  const std::string erasures = "SELECT count(*) FROM erasures";

  // Bad input: refused before any request.
  auto result = test::run_healthhook({"purge-user", "u1", "--deregister", "garmin", "--config", config});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.starts_with("healthhook purge-user: USER_ID: "), result.stderr_text);
  BOOST_TEST(service.requests().empty());

  // The service says no.
  service.set_deregister_success(false);
  result = test::run_healthhook({"purge-user", kNoticeUser, "--deregister", "garmin", "--config", config});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text.find("success=false") != std::string::npos, result.stderr_text);
  BOOST_TEST(result.stderr_text.find("nothing was erased") != std::string::npos, result.stderr_text);
  BOOST_TEST(test::query_int(database, erasures) == 0);

  // The service fails.
  service.set_deregister_success(true);
  fake::Fault error;
  error.kind = fake::Fault::Kind::status;
  error.status = 500;
  service.inject("/v2/user/" + kNoticeUser + "/garmin", error);
  result = test::run_healthhook({"purge-user", kNoticeUser, "--deregister", "garmin", "--config", config});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text.find("HTTP 500") != std::string::npos, result.stderr_text);
  BOOST_TEST(result.stderr_text.find("before its answer was lost") == std::string::npos, result.stderr_text);
  BOOST_TEST(test::query_int(database, erasures) == 0);

  // A gateway's 504: the service may have acted; the user is told how to erase the rows.
  error.status = 504;
  service.inject("/v2/user/" + kNoticeUser + "/garmin", error);
  result = test::run_healthhook({"purge-user", kNoticeUser, "--deregister", "garmin", "--config", config});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text.find("before its answer was lost, purge-user without --deregister erases the stored "
                                     "rows") != std::string::npos,
             result.stderr_text);
  BOOST_TEST(test::query_int(database, erasures) == 0);
}

// While another process applies the inbox, or holds the write lock, the erasure is refused:
// --deregister must not call the service first (the user would be deregistered there and
// left whole here).
BOOST_AUTO_TEST_CASE(purge_user_calls_the_service_only_when_it_can_erase) {
  fake::FakeService service(recovery_service(fake::TlsMode::plain));
  test::TempDir dir;
  const std::string database = recovery_empty_database(dir);
  const std::string config = recovery_config(dir, service.base_url(), "");
  {
    // The processing lock as a running `serve` holds it (store/sqlite/processing_lock.cpp).
    const int fd = ::open((database + "-processor.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    BOOST_REQUIRE(fd >= 0);
    BOOST_REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
    auto refused = test::run_healthhook({"purge-user", kNoticeUser, "--deregister", "garmin", "--config", config});
    ::close(fd);
    BOOST_TEST(refused.exit_code == 1);
    BOOST_TEST(refused.stderr_text.find("let it finish first (nothing was sent to the service or erased)") !=
                   std::string::npos,
               refused.stderr_text);
    BOOST_TEST(service.requests().empty());
  }
  {
    // Another process holds the database's write lock (any writer's BEGIN IMMEDIATE) past
    // the busy timeout: the erasure cannot start, and the service is not called.
    const std::string quick = dir.write("quick.toml", "commit_deadline_ms = 200\n" + text_of(config));
    sqlite3* holder = nullptr;
    BOOST_REQUIRE(sqlite3_open(database.c_str(), &holder) == SQLITE_OK);
    BOOST_REQUIRE(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
    auto busy = test::run_healthhook({"purge-user", kNoticeUser, "--deregister", "garmin", "--config", quick});
    sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(holder);
    BOOST_TEST(busy.exit_code == 1);
    BOOST_TEST(busy.stderr_text.find("is busy: another process held its write lock") != std::string::npos,
               busy.stderr_text);
    BOOST_TEST(busy.stderr_text.find("nothing was removed or sent to the service") != std::string::npos,
               busy.stderr_text);
    BOOST_TEST(service.requests().empty());
    BOOST_TEST(test::query_int(database, "SELECT count(*) FROM erasures") == 0);
  }
  auto done = test::run_healthhook({"purge-user", kNoticeUser, "--deregister", "garmin", "--config", config});
  BOOST_TEST(done.exit_code == 0, done.stderr_text);
  BOOST_TEST(service.requests().size() == 1u);
  BOOST_TEST(done.stdout_text.find("note: no row names " + kNoticeUser) != std::string::npos, done.stdout_text);
}

// While the service takes its time to answer the DELETE, the store's write lock is free:
// other writers go on (a slow service does not hold the database).
BOOST_AUTO_TEST_CASE(purge_user_holds_no_write_lock_while_the_service_answers) {
  fake::FakeService service(recovery_service(fake::TlsMode::plain));
  test::TempDir dir;
  const std::string database = recovery_empty_database(dir);
  const std::string config = recovery_config(dir, service.base_url(), "");
  fake::Fault slow;
  slow.kind = fake::Fault::Kind::stall_head;
  slow.stall = std::chrono::seconds(3);
  service.inject("/v2/user/" + kNoticeUser + "/garmin", slow);
  test::ProcessResult purged;
  std::thread purge([&] {
    purged = test::run_healthhook({"purge-user", kNoticeUser, "--deregister", "garmin", "--config", config});
  });
  // The DELETE has arrived and waits for its answer.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (service.requests().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_TEST(service.requests().size() == 1u);
  sqlite3* writer = nullptr;
  BOOST_REQUIRE(sqlite3_open(database.c_str(), &writer) == SQLITE_OK);
  sqlite3_busy_timeout(writer, 200);
  BOOST_TEST(sqlite3_exec(writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_exec(writer, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
  purge.join();
  BOOST_TEST(purged.exit_code == 0, purged.stderr_text);
  BOOST_TEST(test::query_int(database, "SELECT count(*) FROM erasures") == 1);
}

BOOST_AUTO_TEST_SUITE_END()  // recovery_commands_test
