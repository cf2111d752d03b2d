// [[service.teams]] as a user runs it (issue 37, "Regions and teams"): `serve` with a
// primary service and an EU team on a second fake service. A follow-up for a user whose
// deliveries name the EU team goes to the EU base URL with the EU key, any other to the
// primary; refresh and backfill follow the same rule (or --team); /metrics has a silence
// gauge per team; bad team settings are refused at start.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "tests/fake_service/fake_service.h"
#include "tests/fetcher/fetcher_fixture.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(teams_test)

using namespace hh;

namespace {

constexpr const char* kPrimaryKey = "primary-team-api-key";
constexpr const char* kEuKey = "eu-team-api-key";
// The envelope of schemas/examples/workout-stream.json.
const std::string kEuTeam = "6b74423d-0504-4470-9afb-477252ccf67a";
const std::string kEuUser = "bf6222fb-5a3c-4d1e-9f2b-7c8d9e0f1a2b";
const std::string kEuWorkout = "fdc70dd0-8cc8-4ec8-8b80-121fd9a3302a";

// Every occurrence of `from` replaced by `to`.
std::string teams_replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

fake::FakeOptions teams_service(const char* key) {
  fake::FakeOptions options;
  options.tls = fake::TlsMode::valid;
  options.api_key = key;
  return options;
}

// `id` in capitals, as a configuration may write it (deliveries write lower case).
std::string in_capitals(std::string id) {
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return id;
}

// [service] on `primary` and one [[service.teams]] entry, `team_id`, on `eu`; one CA file trusts both.
std::string teams_toml(const test::TempDir& dir, const fake::FakeService& primary, const fake::FakeService& eu,
                       const std::string& team_id = kEuTeam) {
  dir.write("primary-key", std::string(kPrimaryKey) + "\n");
  dir.write("eu-key", std::string(kEuKey) + "\n");
  dir.write("service-ca.pem", primary.ca_pem() + eu.ca_pem());
  return "[service]\n"
         "base_url = \"" + primary.base_url() + "\"\n"
         "api_key_file = \"primary-key\"\n"
         "ca_file = \"service-ca.pem\"\n"
         "[[service.teams]]\n"
         "team_id = \"" + team_id + "\"\n"
         "base_url = \"" + eu.base_url() + "\"\n"
         "api_key_file = \"eu-key\"\n";
}

std::vector<fake::RecordedRequest> follow_ups_at(const fake::FakeService& service) {
  return service.requests_except("/v2/providers");
}

// The example workout-stream delivery of the EU team's user posted: its stream is fetched
// from the EU service with the EU key, nothing from the primary. Returns the body sent.
std::string eu_stream_goes_to_the_eu_service(test::ServerProcess& server, test::HttpClient& client,
                                             const fake::FakeService& primary, const fake::FakeService& eu) {
  const std::string eu_body = test::example_file("workout-stream.json");
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_eu_stream", eu_body).status, 200);
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE state = 'done'", 1));
  const auto at_eu = follow_ups_at(eu);
  BOOST_REQUIRE_EQUAL(at_eu.size(), 1u);
  BOOST_TEST(at_eu[0].path == "/v2/timeseries/workouts/" + kEuWorkout + "/stream");
  BOOST_TEST(at_eu[0].api_key == kEuKey);
  BOOST_TEST(follow_ups_at(primary).empty());
  return eu_body;
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_eu_teams_follow_ups_and_commands_go_to_its_base_url_with_its_key) {
  fake::FakeService primary(teams_service(kPrimaryKey));
  fake::FakeService eu(teams_service(kEuKey));
  test::TempDir dir;
  test::ServerProcess server(dir, teams_toml(dir, primary, eu));
  test::HttpClient client(server.port());

  // A workout of the EU team's user: its stream comes from the EU service.
  const std::string eu_body = eu_stream_goes_to_the_eu_service(server, client, primary, eu);
  // Applied after the job is done (the processor applies the stored page next).
  BOOST_TEST(test::wait_for_value(server.database(),
                                  "SELECT count(*) FROM stream_points WHERE workout_id = '" + kEuWorkout + "'", 120));

  // Another team's user (not configured): the primary service, with the primary key.
  const std::string other_workout = "0a0a0a0a-1111-4222-8333-444444444444";
  std::string other_body = teams_replaced(eu_body, kEuTeam, "11111111-2222-4333-8444-555555555555");
  other_body = teams_replaced(other_body, kEuUser, "22222222-3333-4444-8555-666666666666");
  other_body = teams_replaced(other_body, kEuWorkout, other_workout);
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_other_stream", other_body).status, 200);
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE state = 'done'", 2));
  const auto at_primary = follow_ups_at(primary);
  BOOST_REQUIRE_EQUAL(at_primary.size(), 1u);
  BOOST_TEST(at_primary[0].path == "/v2/timeseries/workouts/" + other_workout + "/stream");
  BOOST_TEST(at_primary[0].api_key == kPrimaryKey);
  BOOST_TEST(follow_ups_at(eu).size() == 1u);

  // A silence gauge of its own for the configured team.
  const auto metrics = client.get("/metrics");
  BOOST_TEST(metrics.status == 200);
  BOOST_TEST(metrics.body.find("healthhook_seconds_since_last_verified_delivery{team=\"" + kEuTeam + "\"} ") !=
                 std::string::npos,
             metrics.body);

  // refresh finds the user's team in the database; --team overrides it.
  auto refreshed = test::run_healthhook({"refresh", kEuUser, "--config", server.config_file()});
  BOOST_TEST(refreshed.exit_code == 0, refreshed.stderr_text);
  auto at_eu = follow_ups_at(eu);
  BOOST_REQUIRE_EQUAL(at_eu.size(), 2u);
  BOOST_TEST(at_eu[1].method == "POST");
  BOOST_TEST(at_eu[1].path == "/v2/user/refresh/" + kEuUser);
  BOOST_TEST(at_eu[1].api_key == kEuKey);
  // A --team no [[service.teams]] entry has is a mistake: refused, sent nowhere (it once
  // went to [service]'s team).
  const size_t primary_before = follow_ups_at(primary).size();
  refreshed = test::run_healthhook({"refresh", kEuUser, "--team", "someone-else", "--config", server.config_file()});
  BOOST_TEST(refreshed.exit_code == 2, refreshed.stderr_text);
  BOOST_TEST(follow_ups_at(primary).size() == primary_before);
  BOOST_TEST(follow_ups_at(eu).size() == 2u);
  // A dry run does not promise the deregistration the real run refuses.
  auto dry = test::run_healthhook({"purge-user", kEuUser, "--deregister", "garmin", "--team", "someone-else",
                                   "--dry-run", "--config", server.config_file()});
  BOOST_TEST(dry.exit_code == 2, dry.stdout_text);
  BOOST_TEST(dry.stderr_text.find("no [[service.teams]] entry has this team id") != std::string::npos,
             dry.stderr_text);
  BOOST_TEST(dry.stdout_text.find("would deregister") == std::string::npos, dry.stdout_text);

  // backfill --team for a user no delivery has named yet: the running serve fetches it from EU.
  const std::string new_user = "33333333-4444-4555-8666-777777777777";
  auto queued = test::run_healthhook({"backfill", new_user, "--resource", "heartrate", "--provider", "garmin",
                                      "--since", "2024-08-04", "--until", "2024-08-04", "--team", kEuTeam,
                                      "--config", server.config_file()});
  BOOST_TEST(queued.exit_code == 0, queued.stderr_text);
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE state = 'done'", 3));
  at_eu = follow_ups_at(eu);
  BOOST_REQUIRE(at_eu.size() > 2u);
  BOOST_TEST(at_eu.back().path == "/v2/timeseries/" + new_user + "/heartrate/grouped");
  BOOST_TEST(at_eu.back().api_key == kEuKey);
  BOOST_TEST(follow_ups_at(primary).size() == primary_before);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(team_settings_are_checked_at_start) {
  test::TempDir dir;
  dir.write("secret", test::random_secret() + "\n");
  const auto check = [&](const std::string& teams) {
    const std::string config = dir.write(
        "teams.toml", "signing_secret_files = [\"secret\"]\n[service]\nbase_url = \"https://api.example\"\n" + teams);
    return test::run_healthhook({"check-config", "--config", config});
  };
  const std::string t1 = "11111111-2222-4333-8444-555555555555";
  auto result = check("[[service.teams]]\nteam_id = \"" + t1 + "\"\nbase_url = \"https://api.eu.example\"\n");
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("service.teams[0].api_key_file: required") != std::string::npos,
             result.stderr_text);
  result = check("[[service.teams]]\nteam_id = \"" + t1 + "\"\nbase_url = \"http://api.eu.example\"\napi_key_file = \"k\"\n");
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("service.teams[0].base_url: must be an https:// URL") != std::string::npos,
             result.stderr_text);
  const auto team_entry = [](const std::string& id) {
    return "[[service.teams]]\nteam_id = \"" + id + "\"\nbase_url = \"https://a.example\"\napi_key_file = \"k\"\n";
  };
  const std::string team = team_entry(t1);
  result = check(team + team);
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("service.teams[1].team_id: given twice: \"" + t1 + "\"") != std::string::npos,
             result.stderr_text);
  result = check("[[service.teams]]\nteam_id = \"" + t1 + "\"\nregion = \"eu\"\n");
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("service.teams[0].region: unknown key") != std::string::npos, result.stderr_text);
  // The key file must exist: read like [service]'s, at start.
  result = check(team);
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("service.teams[0].api_key_file: ") != std::string::npos, result.stderr_text);
  dir.write("k", "team-key\n");
  result = check(team);
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text.find("\"service_teams\":1") != std::string::npos, result.stdout_text);
}

// Team ids are the service's UUIDs (black-box pass): `team_id = "team-b"` passed and matched
// no delivery, and one team written in two cases was two entries.
BOOST_AUTO_TEST_CASE(a_team_id_must_be_a_uuid_and_is_one_team_in_either_case) {
  test::TempDir dir;
  dir.write("secret", test::random_secret() + "\n");
  dir.write("k", "team-key\n");
  const auto check = [&](const std::string& teams) {
    const std::string config = dir.write(
        "teams.toml", "signing_secret_files = [\"secret\"]\n[service]\nbase_url = \"https://api.example\"\n" + teams);
    return test::run_healthhook({"check-config", "--config", config});
  };
  const auto team_entry = [](const std::string& id) {
    return "[[service.teams]]\nteam_id = \"" + id + "\"\nbase_url = \"https://a.example\"\napi_key_file = \"k\"\n";
  };
  for (const std::string& not_a_uuid : {std::string("team-b"), kEuTeam + "0", std::string("{") + kEuTeam + "}"}) {
    auto result = check(team_entry(kEuTeam) + team_entry(not_a_uuid));
    BOOST_TEST(result.exit_code == 2, not_a_uuid);
    BOOST_TEST(result.stderr_text.find("service.teams[1].team_id: must be the team's UUID") != std::string::npos,
               result.stderr_text);
    BOOST_TEST(std::count(result.stderr_text.begin(), result.stderr_text.end(), '\n') == 1, result.stderr_text);
  }
  // serve refuses it at start as check-config does (its database in the test's folder, in
  // case it did not).
  auto served = test::run_healthhook({"serve", "--config", dir.file("teams.toml"), "--listen", "127.0.0.1:53800",
                                      "--set", "database=" + dir.file("serve.db")}, "", {}, std::chrono::seconds(60));
  BOOST_TEST(served.exit_code == 2);
  BOOST_TEST(served.stderr_text.find("service.teams[1].team_id: must be the team's UUID") != std::string::npos,
             served.stderr_text);

  // The same UUID in capitals and in lower case is one team, given twice.
  auto result = check(team_entry(in_capitals(kEuTeam)) + team_entry(kEuTeam));
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("service.teams[1].team_id: given twice") != std::string::npos, result.stderr_text);
  // In capitals alone it is fine, and shown as deliveries write it.
  result = check(team_entry(in_capitals(kEuTeam)));
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text.find("\"team_id\":\"" + kEuTeam + "\"") != std::string::npos, result.stdout_text);
}

// A [[service.teams]] id written in capitals matched no delivery (they write lower case):
// the team's follow-ups went to [service] with [service]'s key, and `refresh --team` in
// capitals was refused (black-box pass). Either case is the same team everywhere.
BOOST_AUTO_TEST_CASE(a_team_id_in_capitals_is_the_team_its_deliveries_name) {
  fake::FakeService primary(teams_service(kPrimaryKey));
  fake::FakeService eu(teams_service(kEuKey));
  test::TempDir dir;
  test::ServerProcess server(dir, teams_toml(dir, primary, eu, in_capitals(kEuTeam)));
  test::HttpClient client(server.port());

  // The example names the team in lower case; the config, in capitals.
  const std::string eu_body = eu_stream_goes_to_the_eu_service(server, client, primary, eu);
  BOOST_REQUIRE(eu_body.find("\"team_id\": \"" + kEuTeam + "\"") != std::string::npos ||
                eu_body.find("\"team_id\":\"" + kEuTeam + "\"") != std::string::npos);

  // A delivery that writes the team in capitals is the same team too.
  const std::string second_user = "44444444-5555-4666-8777-888888888888";
  const std::string second_workout = "0b0b0b0b-1111-4222-8333-444444444444";
  std::string capitals_body = teams_replaced(eu_body, kEuTeam, in_capitals(kEuTeam));
  capitals_body = teams_replaced(capitals_body, kEuUser, second_user);
  capitals_body = teams_replaced(capitals_body, kEuWorkout, second_workout);
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_capitals_stream", capitals_body).status, 200);
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE state = 'done'", 2));
  auto at_eu = follow_ups_at(eu);
  BOOST_REQUIRE_EQUAL(at_eu.size(), 2u);
  BOOST_TEST(at_eu[1].path == "/v2/timeseries/workouts/" + second_workout + "/stream");
  BOOST_TEST(at_eu[1].api_key == kEuKey);
  BOOST_TEST(follow_ups_at(primary).empty());

  // --team in either case names the entry; the user's stored team (in capitals) finds it too.
  for (const std::string& team : {kEuTeam, in_capitals(kEuTeam)}) {
    auto refreshed = test::run_healthhook({"refresh", kEuUser, "--team", team, "--config", server.config_file()});
    BOOST_TEST(refreshed.exit_code == 0, refreshed.stderr_text);
  }
  auto refreshed = test::run_healthhook({"refresh", second_user, "--config", server.config_file()});
  BOOST_TEST(refreshed.exit_code == 0, refreshed.stderr_text);
  at_eu = follow_ups_at(eu);
  BOOST_REQUIRE_EQUAL(at_eu.size(), 5u);
  for (size_t i = 2; i < at_eu.size(); ++i) {
    BOOST_TEST(at_eu[i].method == "POST");
    BOOST_TEST(at_eu[i].api_key == kEuKey);
  }
  BOOST_TEST(at_eu[4].path == "/v2/user/refresh/" + second_user);
  BOOST_TEST(follow_ups_at(primary).empty());
  BOOST_TEST(server.stop() == 0);
}

// A team's background job answered with a redirect said "check service.base_url", which
// was not where its base URL came from (black-box pass): it names the team's entry, as the
// commands do.
BOOST_AUTO_TEST_CASE(a_teams_job_answered_with_a_redirect_names_the_teams_base_url) {
  fake::FakeService primary(teams_service(kPrimaryKey));
  fake::FakeService eu(teams_service(kEuKey));
  fake::Fault moved;
  moved.kind = fake::Fault::Kind::status;
  moved.status = 302;
  eu.inject("/v2/timeseries/workouts/" + kEuWorkout + "/stream", moved, -1);
  test::TempDir dir;
  test::ServerProcess server(dir, teams_toml(dir, primary, eu));
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(
      client.post_webhook(server.secret(), "msg_eu_stream", test::example_file("workout-stream.json")).status, 200);
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM jobs WHERE state = 'dead'", 1));
  const std::string error = test::query_text(server.database(), "SELECT last_error FROM jobs WHERE state = 'dead'");
  BOOST_TEST(error.find("HTTP 302") != std::string::npos, error);
  BOOST_TEST(error.find("(redirects are not followed; check service.teams[0].base_url)") != std::string::npos, error);
  BOOST_TEST(follow_ups_at(primary).empty());
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
