// `healthhook serve` with [service] pointing at the fake service over HTTPS: the whole
// path from a signed webhook to stored stream points, stopping with a fetch in flight,
// and a crash in the middle of a backfill. The server runs as a child process; jobs are
// observed in its database through read connections.
#include <signal.h>

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "store/database.h"
#include "store/jobs/job_admin.h"
#include "tests/fake_service/fake_bodies.h"
#include "tests/fake_service/fake_service.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

using namespace hh;
using namespace std::chrono_literals;

namespace {

constexpr const char* kKey = "serve-test-api-key";
// serve fetches the provider list at start, beside the jobs these tests follow.
const std::string kProvidersPath = "/v2/providers";

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

// One integer from the server's database; -1 when there is none (or no database yet).
int64_t query_int(const std::string& database, const std::string& sql) {
  auto db = store::open_for_reading(database);
  if (!db) return -1;
  auto value = db->query_int(sql);
  return value && *value ? **value : -1;
}

// Polls `sql` (one integer) until it equals `expected`; bounded.
bool wait_for_value(const std::string& database, const std::string& sql, int64_t expected,
                    std::chrono::seconds timeout = 30s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (query_int(database, sql) == expected) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
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
