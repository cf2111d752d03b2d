// Back-pressure on a nearly full disk, without filling a disk: min_free_disk_mib set above
// any real free space makes the inbox writer see a "nearly full" disk at once. Deliveries
// then get 503 + Retry-After before SQLite could fail, /readyz says why, /metrics shows it,
// nothing is stored; the threshold is read at start-up only (SIGHUP does not change it),
// and a start with a normal value takes deliveries again.
#include <boost/test/unit_test.hpp>
#include <signal.h>

#include "store/sqlite/database.h"
#include "tests/ops/prometheus_parser.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(back_pressure_test)

using namespace hh::test;

namespace {

const std::string kSteps =
    R"({"event_type":"daily.data.steps.created","data":{"data":[{"timestamp":"2023-05-16T10:00:00+00:00","unit":"count","value":237}],"source":{"provider":"oura","type":"ring"},"user_id":"u1"},"user_id":"u1"})";

// 2^30 - 1 MiB (1 PiB), the largest value settings accept: more than any test disk has free.
const std::string kDiskNearlyFull = "min_free_disk_mib = 1073741823\nretry_after_s = 7\n";
const std::string kDiskNormal = "min_free_disk_mib = 1\nretry_after_s = 7\n";

int64_t stored(const ServerProcess& server) {
  auto db = hh::store::open_for_reading(server.database());
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  return db->query_int("SELECT count(*) FROM deliveries")->value_or(-1);
}

double metric(unsigned short port, const std::string& name, const std::map<std::string, std::string>& labels = {}) {
  HttpClient client(port);
  const auto metrics = PromExposition::parse(client.get("/metrics").body);
  const auto value = metrics.value(name, labels);
  BOOST_REQUIRE_MESSAGE(value.has_value(), "no sample " + name);
  return *value;
}

// Rewrites the server's config with `extra_toml` (same listen, database and secret).
void rewrite_config(const TempDir& dir, const ServerProcess& server, const std::string& extra_toml) {
  dir.write("healthhook.toml", "listen = \"127.0.0.1:0\"\ndatabase = \"" + server.database() +
                                   "\"\nsigning_secret_files = [\"secret\"]\n" + extra_toml + "\n");
}

}  // namespace

BOOST_AUTO_TEST_CASE(nearly_full_disk_answers_503_with_retry_after_and_not_ready) {
  TempDir dir;
  ServerProcess server(dir, kDiskNearlyFull);
  HttpClient client(server.port());

  const auto refused = client.post_webhook(server.secret(), "msg_1", kSteps);
  BOOST_TEST(refused.status == 503);
  BOOST_TEST(refused.header("retry-after") == "7");
  BOOST_TEST(refused.body.find("disk nearly full") != std::string::npos);

  const auto ready = client.get("/readyz");
  BOOST_TEST(ready.status == 503);
  BOOST_TEST(ready.body.find("\"reason\":\"disk nearly full\"") != std::string::npos);
  BOOST_TEST(client.get("/healthz").status == 200);  // alive, just not taking deliveries

  BOOST_TEST(metric(server.port(), "healthhook_inbox_disk_low") == 1);
  BOOST_TEST(metric(server.port(), "healthhook_ready") == 0);
  BOOST_TEST(metric(server.port(), "healthhook_deliveries_total", {{"outcome", "unavailable"}}) == 1);
  BOOST_TEST(metric(server.port(), "healthhook_disk_min_free_bytes") == 1073741823.0 * 1024 * 1024);
  BOOST_TEST(stored(server) == 0);

  // min_free_disk_mib is read at start-up only: a reload leaves the guard as it was.
  rewrite_config(dir, server, kDiskNormal);
  server.signal(SIGHUP);
  BOOST_REQUIRE(server.wait_for_log("\"event\":\"reloaded\"", std::chrono::seconds(20)));
  BOOST_TEST(client.post_webhook(server.secret(), "msg_1", kSteps).status == 503);

  // A configuration that does not load: the running one stays, and the log (JSON lines
  // only) says why in reload_failed's reason: the file, line and key.
  rewrite_config(dir, server, "max_body_bytes = 1");
  server.signal(SIGHUP);
  BOOST_REQUIRE(server.wait_for_log("\"event\":\"reload_failed\"", std::chrono::seconds(20)));
  BOOST_TEST(server.wait_for_log("healthhook.toml:4: max_body_bytes: must be between", std::chrono::seconds(1)));
  for (const std::string& line : server.log_lines()) BOOST_TEST(line.starts_with("{"), line);
  rewrite_config(dir, server, kDiskNormal);

  // A restart with the normal value takes the same delivery (the service's retry).
  BOOST_TEST(server.stop() == 0);
  server.restart();
  HttpClient again(server.port());
  const auto accepted = again.post_webhook(server.secret(), "msg_1", kSteps);
  BOOST_TEST(accepted.status == 200);
  BOOST_TEST(accepted.body.find("\"status\":\"stored\"") != std::string::npos);
  BOOST_TEST(again.get("/readyz").status == 200);
  BOOST_TEST(metric(server.port(), "healthhook_inbox_disk_low") == 0);
  BOOST_TEST(stored(server) == 1);
  BOOST_TEST(server.stop() == 0);
}

// A reload that fails on a secret (or a TLS file) after the file itself loaded changes
// nothing, log_level included: the operator is told the running configuration was kept.
BOOST_AUTO_TEST_CASE(a_reload_that_fails_changes_nothing_not_even_the_log_level) {
  TempDir dir;
  ServerProcess server(dir, kDiskNormal);
  dir.write("not-a-secret", "hunter2\n");
  dir.write("healthhook.toml", "listen = \"127.0.0.1:0\"\ndatabase = \"" + server.database() +
                                   "\"\nsigning_secret_files = [\"not-a-secret\"]\nlog_level = \"error\"\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(server.wait_for_log("\"event\":\"reload_failed\"", std::chrono::seconds(20)));
  BOOST_TEST(server.stop() == 0);
  // Still at info: serve's last lines are there.
  BOOST_TEST(server.wait_for_log("\"event\":\"stopped\"", std::chrono::seconds(1)));
}

BOOST_AUTO_TEST_SUITE_END()  // back_pressure_test
