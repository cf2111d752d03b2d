// `healthhook serve` with [service] pointing at the fake service over HTTPS: the whole
// path from a signed webhook to stored stream points, stopping with a fetch in flight,
// a crash in the middle of a backfill, meal and profile backfills with the service's
// shapes, and the provider list's sync through faults. The server runs as a child
// process; jobs are observed in its database through read connections.
#include <signal.h>

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "store/sqlite/database.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "tests/fake_service/fake_bodies.h"
#include "tests/fake_service/fake_service.h"
#include "tests/fetcher/fetcher_fixture.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(serve_fetch_test)

using namespace hh;
using namespace std::chrono_literals;
using test::query_int;
using test::wait_for_value;

namespace {

constexpr const char* kKey = "serve-test-api-key";
// serve fetches the provider list at start, beside the jobs these tests follow.
const std::string kProvidersPath = "/v2/providers";

// `text` with the first `from` replaced by `to` (the example stays as written otherwise).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("not in the fixture: " + from);
  return text.replace(at, from.size(), to);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// [service] for `service`, with the API key and the CA in files next to the config.
std::string service_toml(const test::TempDir& dir, const fake::FakeService& service) {
  dir.write("api-key", std::string(kKey) + "\n");
  dir.write("service-ca.pem", service.ca_pem());
  return "[service]\n"
         "base_url = \"" + service.base_url() + "\"\n"
         "api_key_file = \"api-key\"\n"
         "ca_file = \"service-ca.pem\"\n"
         "read_timeout_s = 60\n";
}

fake::FakeOptions tls_service() {
  fake::FakeOptions options;
  options.tls = fake::TlsMode::valid;
  options.api_key = kKey;
  return options;
}

bool wait_for_requests(const fake::FakeService& service, size_t count, std::chrono::seconds timeout = 30s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (service.requests_except(kProvidersPath).size() < count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  return service.requests_except(kProvidersPath).size() >= count;
}

bool wait_for_requests_to(const fake::FakeService& service, const std::string& path, size_t count,
                          std::chrono::seconds timeout = 30s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (service.request_count(path) < count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  return service.request_count(path) >= count;
}

void insert_job(const std::string& database, const std::string& sql) {
  auto db = store::open_admin_connection(database);
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  auto done = db->exec(sql);
  BOOST_REQUIRE_MESSAGE(done.ok(), done.error());
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_signed_workout_stream_webhook_ends_in_stream_points) {
  fake::FakeService service(tls_service());
  test::TempDir dir;
  test::ServerProcess server(dir, service_toml(dir, service));
  const std::string body = read_file(std::string(HEALTHHOOK_SOURCE_DIR) + "/schemas/examples/workout-stream.json");
  test::HttpClient client(server.port());
  const auto response = client.post_webhook(server.secret(), "msg_stream_1", body);
  BOOST_REQUIRE_EQUAL(response.status, 200);

  const std::string workout = "fdc70dd0-8cc8-4ec8-8b80-121fd9a3302a";
  BOOST_TEST(wait_for_value(server.database(), "SELECT count(*) FROM stream_points WHERE workout_id = '" + workout + "'",
                            120));
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM jobs WHERE state = 'done'") == 1);
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM deliveries WHERE origin = 'fetch' AND "
                                          "status = 'processed' AND event_type <> 'fetch.providers'") == 1);
  BOOST_TEST(query_int(server.database(), "SELECT point_count FROM workout_streams WHERE workout_id = '" + workout +
                                              "'") == 120);
  const auto requests = service.requests_except(kProvidersPath);
  BOOST_REQUIRE_EQUAL(requests.size(), 1u);
  BOOST_TEST(requests[0].path == "/v2/timeseries/workouts/" + workout + "/stream");
  BOOST_TEST(requests[0].sni == "localhost");
  BOOST_TEST(server.wait_for_log("\"event\":\"job_done\"", 5s));
  BOOST_TEST(server.stop() == 0);
  for (const auto& line : server.log_lines()) {
    BOOST_TEST_INFO(line);
    BOOST_TEST(line.find(kKey) == std::string::npos);  // the key is never logged
  }
}

BOOST_AUTO_TEST_CASE(sigterm_with_a_fetch_in_flight_exits_cleanly_and_releases_the_job) {
  fake::FakeService service(tls_service());
  fake::Fault stall;
  stall.kind = fake::Fault::Kind::stall_head;
  stall.stall = 120s;
  service.inject("/v2/timeseries/workouts/w-slow/stream", stall);
  test::TempDir dir;
  test::ServerProcess server(dir, service_toml(dir, service));
  insert_job(server.database(),
             "INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, "
             "updated_at) VALUES ('workout_stream', 'w-slow', 'queued', 0, 0, 1, '{\"workout_id\":\"w-slow\"}', 0, 0)");
  BOOST_REQUIRE(wait_for_requests(service, 1));
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM jobs WHERE state = 'running'") == 1);
  BOOST_TEST(server.stop() == 0);
  BOOST_TEST(server.wait_for_log("\"event\":\"job_stopped\"", 1s));
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM jobs WHERE state = 'queued' AND attempts = 0") == 1);
}

BOOST_AUTO_TEST_CASE(a_crash_in_the_middle_of_a_backfill_is_finished_after_restart_without_duplicates) {
  fake::FakeService service(tls_service());  // 3 pages
  const std::string path = "/v2/timeseries/u-1/heartrate/grouped";
  service.inject(path, fake::Fault{});  // page 0 answered
  fake::Fault stall;
  stall.kind = fake::Fault::Kind::stall_head;
  stall.stall = 120s;
  service.inject(path, stall);  // page 1 hangs until we kill the server
  test::TempDir dir;
  test::ServerProcess server(dir, service_toml(dir, service));
  insert_job(server.database(),
             "INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, "
             "updated_at) VALUES ('backfill', 'u-1/heartrate/garmin/1722729600000/1722816000000', 'queued', 0, 0, 1, "
             "'{\"user_id\":\"u-1\",\"resource\":\"heartrate\",\"provider\":\"garmin\","
             "\"start\":\"2024-08-04T00:00:00.000Z\",\"end\":\"2024-08-05T00:00:00.000Z\"}', 0, 0)");
  BOOST_REQUIRE(wait_for_requests(service, 2));
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM deliveries WHERE origin = 'fetch' AND event_type <> 'fetch.providers'") == 1);
  server.kill_hard();
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM jobs WHERE state = 'running'") == 1);

  server.restart();
  BOOST_TEST(wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE state = 'done'", 1));
  BOOST_TEST(server.wait_for_log("\"event\":\"jobs_requeued\"", 1s));
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM deliveries WHERE origin = 'fetch' AND event_type <> 'fetch.providers'") == 3);
  BOOST_TEST(query_int(server.database(), "SELECT count(DISTINCT message_id) FROM deliveries WHERE origin = 'fetch' AND "
                                          "event_type <> 'fetch.providers'") ==
             3);
  BOOST_TEST(wait_for_value(server.database(), "SELECT count(*) FROM samples", 150));
  // The restarted server found the provider list it had stored and did not store it again.
  BOOST_TEST(wait_for_requests_to(service, kProvidersPath, 2));
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM deliveries WHERE event_type = 'fetch.providers'") == 1);
  // Page 0 once; page 1 twice (the hung request, then after the restart); page 2 once.
  const auto requests = service.requests_except(kProvidersPath);
  BOOST_REQUIRE_EQUAL(requests.size(), 4u);
  BOOST_TEST(requests[0].target.find("cursor=") == std::string::npos);
  BOOST_TEST(requests[1].target.ends_with("&cursor=" + fake::make_cursor(1)));
  BOOST_TEST(requests[2].target.ends_with("&cursor=" + fake::make_cursor(1)));
  BOOST_TEST(requests[3].target.ends_with("&cursor=" + fake::make_cursor(2)));
  BOOST_TEST(server.stop() == 0);
}

// Reference notes §3.1, end to end: historical.data.meal / .profile notices (the reference
// example, pretty-printed) are fetched from the fake with the service's shapes, the jobs
// end done, and the summaries are stored.
BOOST_AUTO_TEST_CASE(meal_and_profile_backfills_end_done_with_their_rows) {
  fake::FakeService service(tls_service());
  test::TempDir dir;
  test::ServerProcess server(dir, service_toml(dir, service));
  test::HttpClient client(server.port());
  const std::string notice = test::example_file("historical-backfill-without-is-final.json");  // 2024-08-04 to 2024-11-02
  const std::string user = "e9e072e8-0b39-4e5a-a3b2-9a1c0f6b2d44";
  const std::string meal = replaced(replaced(notice, "historical.data.heartrate.created", "historical.data.meal.created"),
                                    "\"garmin\"", "\"myfitnesspal\"");
  const std::string profile = replaced(
      replaced(notice, "historical.data.heartrate.created", "historical.data.profile.created"), "\"garmin\"", "\"fitbit\"");
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_meal_backfill", meal).status, 200);
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_profile_backfill", profile).status, 200);

  BOOST_TEST(wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE kind = 'backfill' AND state = 'done'", 2));
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM jobs WHERE state = 'dead'") == 0);
  // One meal per day of the 90-day window, read in three slices; one profile.
  BOOST_TEST(wait_for_value(server.database(), "SELECT count(*) FROM summaries WHERE resource = 'meal'", 90));
  BOOST_TEST(wait_for_value(server.database(), "SELECT count(*) FROM summaries WHERE resource = 'profile' AND id = '" +
                                                   fake::profile_id(user, "fitbit") + "' AND user_id = '" + user + "'",
                            1));
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM deliveries WHERE origin = 'fetch' AND "
                                          "status <> 'processed'") == 0);
  BOOST_TEST(service.request_count("/v2/summary/meal/" + user) == 3u);
  BOOST_TEST(service.request_count("/v2/summary/profile/" + user) == 1u);
  for (const auto& request : service.requests()) {
    if (request.path.starts_with("/v2/summary/profile/")) BOOST_TEST(request.target.find("start_date") == std::string::npos);
  }
  const auto backfills = test::run_healthhook({"query", "backfills", "--database", server.database(), "--format", "csv"});
  BOOST_TEST(backfills.exit_code == 0, backfills.stderr_text);
  BOOST_TEST(backfills.stdout_text.find(",meal,myfitnesspal,2024-08-04T00:00:00.000Z,2024-11-02T00:00:00.000Z,,") !=
                 std::string::npos,
             backfills.stdout_text);
  size_t done = 0;
  for (size_t at = backfills.stdout_text.find(",done,"); at != std::string::npos;
       at = backfills.stdout_text.find(",done,", at + 1)) {
    ++done;
  }
  BOOST_TEST(done == 2u, backfills.stdout_text);
  BOOST_TEST(server.stop() == 0);
}

// Spec §4: the provider list comes from GET /v2/providers at start, retried after any
// failure, and never holds up deliveries.
BOOST_AUTO_TEST_CASE(the_provider_list_syncs_through_faults_without_holding_up_processing) {
  fake::FakeService service(tls_service());
  fake::Fault error;
  error.kind = fake::Fault::Kind::status;
  error.status = 500;
  service.inject(kProvidersPath, error);
  fake::Fault malformed;
  malformed.kind = fake::Fault::Kind::malformed_json;
  service.inject(kProvidersPath, malformed);
  fake::Fault slow;
  slow.kind = fake::Fault::Kind::stall_head;
  slow.stall = 60s;  // far past read_timeout_s
  service.inject(kProvidersPath, slow);
  fake::Fault unavailable;
  unavailable.kind = fake::Fault::Kind::status;
  unavailable.status = 503;
  service.inject(kProvidersPath, unavailable, -1);  // until cleared
  test::TempDir dir;
  std::string toml = service_toml(dir, service);
  toml = replaced(toml, "read_timeout_s = 60", "read_timeout_s = 1\nbackoff_initial_s = 1\nbackoff_max_s = 1");
  test::ServerProcess server(dir, toml);
  test::HttpClient client(server.port());

  // Deliveries are applied while every attempt fails.
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_steps", test::example_file("timeseries-steps.json")).status, 200);
  BOOST_TEST(wait_for_value(server.database(), "SELECT count(*) FROM deliveries WHERE status = 'processed'", 1));
  BOOST_TEST(wait_for_requests_to(service, kProvidersPath, 6));
  BOOST_TEST(server.wait_for_log("\"event\":\"providers_sync_failed\"", 5s));
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM providers") == 0);
  std::string failures;
  for (const auto& line : server.log_lines()) {
    if (line.find("providers_sync_failed") != std::string::npos) failures += line + "\n";
  }
  BOOST_TEST(failures.find("HTTP 500") != std::string::npos, failures);
  BOOST_TEST(failures.find("malformed JSON") != std::string::npos, failures);
  BOOST_TEST(failures.find("HTTP 503") != std::string::npos, failures);
  BOOST_TEST(failures.find("no data for 1000 ms") != std::string::npos, failures);
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_more", test::example_file("device.json")).status, 200);
  BOOST_TEST(wait_for_value(server.database(), "SELECT count(*) FROM deliveries WHERE status = 'processed'", 2));

  // The service recovers: the next attempt stores the list, and names come out of it.
  service.clear_faults();
  BOOST_TEST(wait_for_value(server.database(), "SELECT count(*) FROM providers", 4));
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM providers WHERE slug = 'apple_health_kit' AND "
                                          "name = 'Apple HealthKit' AND logo LIKE 'https://%'") == 1);
  const auto samples = test::run_healthhook(
      {"query", "samples", "--database", server.database(), "--with", "identity", "--format", "csv"});
  BOOST_TEST(samples.exit_code == 0, samples.stderr_text);
  BOOST_TEST(samples.stdout_text.find(",source_id,client_user_id,provider_name\r\n") != std::string::npos,
             samples.stdout_text);
  BOOST_TEST(samples.stdout_text.find(",01HW3FSNVCHC3B2QB5N0ZAAAVG,Apple HealthKit\r\n") != std::string::npos,
             samples.stdout_text);
  BOOST_TEST(server.stop() == 0);
}

// Spec §5, "honour Retry-After on 429/503": the provider list answered 429 with a day's
// Retry-After is not asked for again meanwhile, and the service is paused for the jobs too
// (attack bbS: the list was asked again every 4 s and stream jobs went on to the service).
BOOST_AUTO_TEST_CASE(a_429_to_the_provider_list_pauses_the_service_for_its_retry_after) {
  fake::FakeService service(tls_service());
  fake::Fault busy;
  busy.kind = fake::Fault::Kind::status;
  busy.status = 429;
  busy.retry_after = "86400";
  service.inject(kProvidersPath, busy, -1);  // until cleared
  test::TempDir dir;
  std::string toml = service_toml(dir, service);
  toml = replaced(toml, "read_timeout_s = 60", "read_timeout_s = 60\nbackoff_initial_s = 1\nbackoff_max_s = 1");
  test::ServerProcess server(dir, toml);
  BOOST_REQUIRE(server.wait_for_log("\"event\":\"providers_sync_failed\"", 30s));
  std::string failure;
  for (const auto& line : server.log_lines()) {
    if (line.find("providers_sync_failed") != std::string::npos) failure = line;
  }
  BOOST_TEST(failure.find("HTTP 429") != std::string::npos, failure);
  BOOST_TEST(failure.find("\"retry_in_ms\":864") != std::string::npos, failure);  // a day, not the 1 s backoff

  // A stream job to the same service is held back, nothing sent.
  const std::string body = read_file(std::string(HEALTHHOOK_SOURCE_DIR) + "/schemas/examples/workout-stream.json");
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_stream_paused", body).status, 200);
  BOOST_TEST(wait_for_value(server.database(),
                            "SELECT count(*) FROM jobs WHERE last_error LIKE 'held back while the service asks to wait, "
                            "after HTTP 429%' AND attempts = 0",
                            1));
  BOOST_TEST(service.requests_except(kProvidersPath).empty());
  BOOST_TEST(service.request_count(kProvidersPath) == 1u);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // serve_fetch_test
