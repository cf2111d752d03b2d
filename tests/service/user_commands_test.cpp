// `healthhook user update` and `healthhook user deregister` as processes against the fake
// service (issue 47): the method, path, key and exactly the fields given; every check
// refused before any request; the service's refusals and the SDK providers' caveat.
#include <boost/test/unit_test.hpp>

#include "fetcher/calls/service_request.h"

#include "tests/service/service_fixture.h"
#include "tests/support/database_probe.h"
#include "tests/support/examples.h"
#include "tests/support/http_client.h"

BOOST_AUTO_TEST_SUITE(user_commands_test)

using namespace hh;
using test::has;

namespace {

const std::string kUser = "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2";

}  // namespace

BOOST_AUTO_TEST_CASE(update_sends_exactly_the_fields_given) {
  test::ServiceCommands t;
  auto result = t.run({"user", "update", kUser, "--fallback-time-zone", "Europe/Berlin", "--ingestion-end", "null",
                       "--client-user-id", "01HW3FSNVCHC3B2QB5N0ZAAAVG"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stderr_text == "");
  BOOST_TEST(result.stdout_text ==
             "{\"user_id\":\"" + kUser +
                 "\",\"sent\":{\"fallback_time_zone\":\"Europe/Berlin\",\"ingestion_end\":null,"
                 "\"client_user_id\":\"01HW3FSNVCHC3B2QB5N0ZAAAVG\"},\"answer\":{\"detail\":\"User updated\"}}\n");
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_TEST(calls[0].method == "PATCH");
  BOOST_TEST(calls[0].path == "/v2/user/" + kUser);
  BOOST_TEST(calls[0].query.empty());
  BOOST_TEST(calls[0].api_key == test::kCommandsApiKey);
  BOOST_TEST(calls[0].content_type == "application/json");
  BOOST_TEST(calls[0].body == "{\"fallback_time_zone\":\"Europe/Berlin\",\"ingestion_end\":null,"
                              "\"client_user_id\":\"01HW3FSNVCHC3B2QB5N0ZAAAVG\"}");
  BOOST_TEST(calls[0].status == 200u);

  // Dates, one field, a plain number as a client id (not a phone number).
  result = t.run({"user", "update", kUser, "--fallback-birth-date", "1990-02-28", "--ingestion-start", "2024-01-01",
                  "--ingestion-end", "2024-12-31", "--client-user-id", "12345678"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 2u);
  BOOST_TEST(calls[1].body == "{\"fallback_birth_date\":\"1990-02-28\",\"ingestion_start\":\"2024-01-01\","
                              "\"ingestion_end\":\"2024-12-31\",\"client_user_id\":\"12345678\"}");
  result = t.run({"user", "update", kUser, "--fallback-time-zone", "UTC"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(t.calls().back().body == "{\"fallback_time_zone\":\"UTC\"}");
}

BOOST_AUTO_TEST_CASE(update_input_is_refused_before_any_request) {
  test::ServiceCommands t;
  const std::pair<std::vector<std::string>, std::string> refused[] = {
      {{"--fallback-time-zone", "Mars/Olympus"}, "--fallback-time-zone: \"Mars/Olympus\" is not a time zone of the tz database"},
      {{"--fallback-time-zone", "../../etc/passwd"}, "--fallback-time-zone: \"../../etc/passwd\" is not a time zone"},
      {{"--fallback-time-zone", "Europe/"}, "is not a time zone"},
      {{"--fallback-time-zone", "europe/berlin"}, "is not a time zone"},
      {{"--fallback-birth-date", "1990-02-30"}, "--fallback-birth-date: expected a date YYYY-MM-DD, got \"1990-02-30\""},
      {{"--ingestion-start", "2024-1-01"}, "--ingestion-start: expected a date YYYY-MM-DD"},
      {{"--ingestion-end", "2024-05-01T00:00:00Z"}, "--ingestion-end: expected a date YYYY-MM-DD"},
      {{"--ingestion-start", "2024-06-01", "--ingestion-end", "2024-05-31"},
       "--ingestion-start 2024-06-01 is after --ingestion-end 2024-05-31"},
      {{"--client-user-id", "jane.doe@example.com"}, "--client-user-id: looks like an e-mail address"},
      {{"--client-user-id", "+49 151 12345678"}, "--client-user-id: looks like a phone number"},
      {{"--client-user-id", "+4915112345678"}, "looks like a phone number"},
      {{"--client-user-id", "(555) 123-4567"}, "looks like a phone number"},
      {{"--client-user-id", "015112345678"}, "looks like a phone number"},
      {{"--client-user-id", ""}, "--client-user-id: empty (use null to clear it)"},
      // Sent as JSON, the service would have stored another id (U+FFFD), or a line break.
      {{"--client-user-id", "a\xff" "b"}, "--client-user-id: not valid UTF-8"},
      {{"--client-user-id", "a\x01" "b"}, "--client-user-id: holds a control character"},
      {{"--client-user-id", "a\xC2\x85" "b"}, "--client-user-id: holds a control character"},      // U+0085
      {{"--client-user-id", "a\xE2\x80\xA8" "b"}, "--client-user-id: holds a control character"},  // U+2028
      {{}, "nothing to update: give at least one of"},
  };
  for (const auto& [flags, reason] : refused) {
    std::vector<std::string> args = {"user", "update", kUser};
    args.insert(args.end(), flags.begin(), flags.end());
    BOOST_TEST_CONTEXT(reason) {
      const auto result = t.run(args);
      BOOST_TEST(result.exit_code == 2);
      BOOST_TEST(result.stdout_text == "");
      BOOST_TEST(result.stderr_text.starts_with("healthhook user update: "), result.stderr_text);
      BOOST_TEST(has(result.stderr_text, reason), result.stderr_text);
      BOOST_TEST(test::line_count(result.stderr_text) == 1u);
    }
  }
  const auto bad_user = t.run({"user", "update", "u1", "--fallback-time-zone", "UTC"});
  BOOST_TEST(bad_user.exit_code == 2);
  BOOST_TEST(has(bad_user.stderr_text, "USER_ID: \"u1\" is not a UUID"), bad_user.stderr_text);
  BOOST_TEST(t.calls().empty());
}

BOOST_AUTO_TEST_CASE(a_refused_update_prints_the_services_reason) {
  test::ServiceCommands t;
  fake::Fault refused;
  refused.kind = fake::Fault::Kind::status;
  refused.status = 422;
  refused.body = R"({"detail":"ingestion_start is before the team's data retention"})";
  t.service.inject("/v2/user/" + kUser, refused);
  auto result = t.run({"user", "update", kUser, "--ingestion-start", "2001-01-01"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(result.stderr_text == "healthhook user update: PATCH " + t.service.base_url() + "/v2/user/" + kUser +
                                       ": HTTP 422: {\"detail\":\"ingestion_start is before the team's data retention\"}\n");
  // The fake's own check of the body (the interface's field types), as the service would.
  fake::Fault server_error;
  server_error.kind = fake::Fault::Kind::status;
  server_error.status = 503;
  t.service.inject("/v2/user/" + kUser, server_error);
  result = t.run({"user", "update", kUser, "--ingestion-start", "2001-01-01"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stderr_text, "HTTP 503"), result.stderr_text);
}

// A redirect said only "HTTP 302" (background jobs said what to check), and a 304 was
// taken for a redirect (black-box pass): the commands say the same as the jobs, and a 304
// is unexpected, not a redirect.
BOOST_AUTO_TEST_CASE(a_redirect_names_the_base_url_and_a_304_is_unexpected) {
  test::ServiceCommands t;
  fake::Fault moved;
  moved.kind = fake::Fault::Kind::status;
  moved.status = 302;
  t.service.inject("/v2/user/" + kUser, moved);
  auto result = t.run({"user", "update", kUser, "--ingestion-start", "2001-01-01"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stderr_text, ": HTTP 302"), result.stderr_text);
  BOOST_TEST(has(result.stderr_text, " (redirects are not followed; check service.base_url)\n"), result.stderr_text);

  // A 304 (the fake cannot send one: its status fault carries a body a 304 must not have,
  // which the client reads as a cut stream) is not a redirect.
  BOOST_TEST(fetcher::status_hint(304, "service.base_url") ==
             " (unexpected: \"not modified\" to a request that asked for no cache check)");
  BOOST_TEST(fetcher::status_hint(307, "management.url") == " (redirects are not followed; check management.url)");
  BOOST_TEST(fetcher::status_hint(404, "service.base_url") == "");

  // check-config --online's probe of the base URL says the same.
  moved.status = 307;
  t.service.inject("/v2/providers", moved);
  result = t.run({"check-config", "--online"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stderr_text, "service.base_url: "), result.stderr_text);
  BOOST_TEST(has(result.stderr_text, "HTTP 307 (redirects are not followed; check the base URL)"), result.stderr_text);
}

BOOST_AUTO_TEST_CASE(an_update_goes_to_the_users_team) {
  fake::FakeService eu(test::commands_service_options("eu-team-key"));
  test::ServiceCommands t;
  t.dir.write("eu-key", "eu-team-key\n");
  t.dir.write("service-ca.pem", t.service.ca_pem() + eu.ca_pem());
  const std::string eu_team = "6b74423d-0504-4470-9afb-477252ccf67a";
  t.write_config("[[service.teams]]\nteam_id = \"" + eu_team + "\"\nbase_url = \"" + eu.base_url() +
                 "\"\napi_key_file = \"eu-key\"\n");
  auto result = t.run({"user", "update", kUser, "--fallback-time-zone", "Europe/Paris", "--team", eu_team});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(t.calls().empty());
  const auto at_eu = eu.requests();
  BOOST_REQUIRE_EQUAL(at_eu.size(), 1u);
  BOOST_TEST(at_eu[0].method == "PATCH");
  BOOST_TEST(at_eu[0].api_key == "eu-team-key");
  // Without --team and no delivery naming the user: [service].
  result = t.run({"user", "update", kUser, "--fallback-time-zone", "Europe/Paris"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(t.calls().size() == 1u);
  BOOST_TEST(eu.requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(deregister_calls_delete_and_notes_the_sdk_providers) {
  test::ServiceCommands t;
  auto result = t.run({"user", "deregister", kUser, "oura"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "{\"user_id\":\"" + kUser +
                                       "\",\"provider\":\"oura\",\"deregistered\":true,\"recorded_seq\":null,\"applied\":false}\n");
  // No database yet: nothing to mark, and it says so.
  BOOST_TEST(has(result.stderr_text, "healthhook user deregister: note: "), result.stderr_text);
  BOOST_TEST(has(result.stderr_text, "does not exist: the deregistration is not recorded there"), result.stderr_text);
  BOOST_TEST(!std::filesystem::exists(t.dir.file("healthhook.db")));
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_TEST(calls[0].method == "DELETE");
  BOOST_TEST(calls[0].path == "/v2/user/" + kUser + "/oura");
  BOOST_TEST(calls[0].api_key == test::kCommandsApiKey);
  BOOST_TEST(calls[0].body == "");

  for (const char* provider : {"apple_health_kit", "health_connect", "samsung_health"}) {
    result = t.run({"user", "deregister", kUser, provider});
    BOOST_TEST(result.exit_code == 0, result.stderr_text);
    BOOST_TEST(has(result.stderr_text, std::string("note: ") + provider +
                                           " is connected through the mobile SDK: in its default Auto Connect mode "
                                           "this deregistration has no effect"),
               result.stderr_text);
  }

  t.service.set_deregister_success(false);
  result = t.run({"user", "deregister", kUser, "garmin"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(has(result.stderr_text, "the service answered success=false"), result.stderr_text);

  // Refused before any request.
  const size_t before = t.calls().size();
  BOOST_TEST(t.run({"user", "deregister", "not-a-uuid", "oura"}).exit_code == 2);
  BOOST_TEST(t.run({"user", "deregister", kUser, ""}).exit_code == 2);
  // Named as the command line has it: a word, not an option.
  const auto not_a_slug = t.run({"user", "deregister", kUser, "Oura Ring"});
  BOOST_TEST(not_a_slug.exit_code == 2);
  BOOST_TEST(has(not_a_slug.stderr_text, "provider: \"Oura Ring\" is not a provider slug"), not_a_slug.stderr_text);
  BOOST_TEST(t.calls().size() == before);
  // A provider outside the interface's (non-exhaustive) enum is sent, with a warning.
  result = t.run({"user", "deregister", kUser, "brand_new_ring"});
  BOOST_TEST(has(result.stderr_text, "warning: provider: \"brand_new_ring\" is not in the service's provider list"),
             result.stderr_text);
  BOOST_TEST(t.calls().size() == before + 1);
}

namespace {

// The user and provider of schemas/examples/connection-created.json.
const std::string kConnectedUser = "1449752e-4b3c-4e2b-9f0e-5a7c6d8e9f10";

std::string connection_row(const std::string& database) {
  return test::query_text(database, "SELECT status || '|' || coalesce(deregistered_at, 'NULL') || '|' || "
                                    "coalesce(external_user_id, 'NULL') || '|' || event_type FROM connections "
                                    "WHERE user_id = '" + kConnectedUser + "' AND provider = 'fitbit'");
}

}  // namespace

// Deregistering erases nothing: the connection row is marked (status and time), its other
// fields stay, the change goes to the feed, and a later connection event clears the mark.
BOOST_AUTO_TEST_CASE(deregister_marks_the_connection_row_and_the_change_feed) {
  test::ServiceCommands t;
  {
    test::ServerProcess server(t.dir);
    test::HttpClient client(server.port());
    BOOST_REQUIRE_EQUAL(
        client.post_webhook(server.secret(), "msg_connected", test::example_file("connection-created.json")).status, 200);
    BOOST_REQUIRE(test::wait_for_value(server.database(), "SELECT count(*) FROM connections", 1));
    BOOST_TEST(server.stop() == 0);
  }
  t.write_config();  // ServerProcess wrote its own healthhook.toml
  const std::string database = t.dir.file("healthhook.db");
  const int64_t changes_before = test::query_int(database, "SELECT count(*) FROM changes");
  const int64_t before_ms = test::query_int(database, "SELECT max(received_at) FROM inbox");

  const auto result = t.run({"user", "deregister", kConnectedUser, "fitbit"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stderr_text == "");
  const int64_t seq = test::query_int(database, "SELECT max(seq) FROM inbox");
  BOOST_TEST(result.stdout_text == "{\"user_id\":\"" + kConnectedUser + "\",\"provider\":\"fitbit\","
                                   "\"deregistered\":true,\"recorded_seq\":" + std::to_string(seq) + ",\"applied\":true}\n");
  const int64_t at_ms = test::query_int(database, "SELECT deregistered_at FROM connections");
  BOOST_TEST(at_ms >= before_ms);
  BOOST_TEST(connection_row(database) == "deregistered|" + std::to_string(at_ms) + "|BX7Q2K|fetch.deregistration");
  BOOST_TEST(test::query_int(database, "SELECT count(*) FROM changes") == changes_before + 1);
  BOOST_TEST(test::query_text(database, "SELECT table_name || '|' || row_key || '|' || op || '|' || seq FROM changes "
                                        "ORDER BY change_id DESC LIMIT 1") ==
             "connections|" + kConnectedUser + "/fitbit|update|" + std::to_string(seq));
  BOOST_TEST(test::query_text(database, "SELECT origin || '|' || event_type || '|' || status || '|' || family FROM "
                                        "deliveries WHERE seq = " + std::to_string(seq)) ==
             "fetch|fetch.deregistration|processed|fetched_deregistration");
  const auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_TEST(calls[0].path == "/v2/user/" + kConnectedUser + "/fitbit");

  // What query and rebuild show.
  auto query = test::run_healthhook({"query", "connections", "--database", database, "--format", "jsonl"});
  BOOST_TEST(query.exit_code == 0, query.stderr_text);
  BOOST_TEST(has(query.stdout_text, "\"status\":\"deregistered\",\"deregistered_at\":\""), query.stdout_text);
  auto rebuilt = test::run_healthhook({"rebuild", "--database", database});
  BOOST_TEST(rebuilt.exit_code == 0, rebuilt.stderr_text);
  BOOST_TEST(connection_row(database) == "deregistered|" + std::to_string(at_ms) + "|BX7Q2K|fetch.deregistration");

  // The user connects again: the provider's event replaces the row, mark and all.
  {
    test::ServerProcess server(t.dir);
    test::HttpClient client(server.port());
    BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_connected_again",
                                            test::example_file("connection-created.json")).status,
                        200);
    BOOST_TEST(test::wait_for_value(database, "SELECT count(*) FROM connections WHERE status = 'connected'", 1));
    BOOST_TEST(server.stop() == 0);
  }
  BOOST_TEST(connection_row(database) == "connected|NULL|BX7Q2K|provider.connection.created");
}

// With `serve` running, the server applies the stored row (with its next step).
BOOST_AUTO_TEST_CASE(deregister_beside_a_running_server_is_applied_by_it) {
  test::ServiceCommands t;
  test::ServerProcess server(t.dir);
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(
      client.post_webhook(server.secret(), "msg_connected", test::example_file("connection-created.json")).status, 200);
  BOOST_REQUIRE(test::wait_for_value(server.database(), "SELECT count(*) FROM connections", 1));
  const std::string config = t.dir.write(
      "cli.toml", "database = \"" + server.database() + "\"\n[service]\nbase_url = \"" + t.service.base_url() +
                      "\"\napi_key_file = \"api-key\"\nca_file = \"service-ca.pem\"\n");
  const auto result = test::run_healthhook({"user", "deregister", kConnectedUser, "fitbit", "--config", config});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(has(result.stdout_text, "\"applied\":false}"), result.stdout_text);
  BOOST_TEST(has(result.stderr_text, "note: another healthhook process applies this database's inbox"),
             result.stderr_text);
  // The server's next delivery moves its processor past the stored row.
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_ping", test::example_file("ping.json")).status, 200);
  BOOST_TEST(test::wait_for_value(server.database(), "SELECT count(*) FROM connections WHERE status = 'deregistered'", 1));
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
