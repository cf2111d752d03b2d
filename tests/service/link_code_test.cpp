// `healthhook link-code` as a process against the fake service (issue 47): POST
// /v2/link/code/create with the user and expiry as query parameters and no body; an answer
// off the interface's pattern is a failure; input refused before any request; the user's
// team decides where it goes.
#include <boost/test/unit_test.hpp>

#include "tests/service/service_fixture.h"
#include "tests/support/database_probe.h"
#include "tests/support/examples.h"
#include "tests/support/http_client.h"

BOOST_AUTO_TEST_SUITE(link_code_test)

using namespace hh;
using test::has;

namespace {

const std::string kLinkUser = "bf6222fb-5a3c-4d1e-9f2b-7c8d9e0f1a2b";

}  // namespace

BOOST_AUTO_TEST_CASE(prints_the_code_exchange_url_and_expiry) {
  test::ServiceCommands t;
  auto result = t.run({"link-code", kLinkUser, "--expires-at", "2099-01-01T10:00:00Z"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "{\"user_id\":\"" + kLinkUser +
                                       "\",\"code\":\"pkus5eed0001\",\"exchange_url\":\"healthapp://link?code=pkus5eed0001\","
                                       "\"expires_at\":\"2099-01-01T10:00:00+00:00\"}\n");
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_TEST(calls[0].method == "POST");
  BOOST_TEST(calls[0].path == "/v2/link/code/create");
  BOOST_TEST(calls[0].query.at("user_id") == kLinkUser);
  BOOST_TEST(calls[0].query.at("expires_at") == "2099-01-01T10:00:00Z");
  BOOST_TEST(calls[0].body == "");
  BOOST_TEST(calls[0].api_key == test::kCommandsApiKey);

  // Without --expires-at the service's default applies: nothing is sent for it.
  result = t.run({"link-code", kLinkUser});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  calls = t.calls();
  BOOST_TEST(calls.back().query.count("expires_at") == 0u);
  BOOST_TEST(has(result.stdout_text, "\"code\":\"pkus5eed0002\""), result.stdout_text);
}

BOOST_AUTO_TEST_CASE(an_answer_off_the_interfaces_pattern_is_an_error) {
  test::ServiceCommands t;
  for (const char* code : {"zzus12345678", "pkus1234", "PKUS0123ABCD"}) {
    t.service.interface().set_link_code(code);
    const auto result = t.run({"link-code", kLinkUser});
    BOOST_TEST_CONTEXT(code) {
      BOOST_TEST(result.exit_code == 1);
      BOOST_TEST(result.stdout_text == "");
      BOOST_TEST(has(result.stderr_text, std::string("unexpected answer: code \"") + code +
                                             "\" does not match ^(sk|pk)(eu|us)([\\da-f]{8})"),
                 result.stderr_text);
    }
  }
  fake::Fault missing;
  missing.kind = fake::Fault::Kind::status;
  missing.status = 200;
  missing.body = R"({"code":"pkus0123abcd","exchange_url":"healthapp://link?code=pkus0123abcd"})";
  t.service.inject("/v2/link/code/create", missing);
  auto result = t.run({"link-code", kLinkUser});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stderr_text, "expires_at: missing or not a string"), result.stderr_text);
  missing.body = R"({"code":"pkus0123abcd","exchange_url":"healthapp://link?code=other","expires_at":"2099-01-01T00:00:00Z"})";
  t.service.inject("/v2/link/code/create", missing);
  result = t.run({"link-code", kLinkUser});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stderr_text, "exchange_url \"healthapp://link?code=other\" is not"), result.stderr_text);
  // A well-formed exchange URL for another code was passed (black-box pass): the app would
  // link with a code the command did not show.
  missing.body =
      R"({"code":"pkus0123abcd","exchange_url":"healthapp://link?code=pkus99999999","expires_at":"2099-01-01T00:00:00Z"})";
  t.service.inject("/v2/link/code/create", missing);
  result = t.run({"link-code", kLinkUser});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(has(result.stderr_text, "exchange_url \"healthapp://link?code=pkus99999999\" does not carry code=\"pkus0123abcd\""),
             result.stderr_text);
}

BOOST_AUTO_TEST_CASE(input_is_refused_before_any_request) {
  test::ServiceCommands t;
  const std::pair<std::vector<std::string>, std::string> refused[] = {
      {{"link-code", "u1"}, "USER_ID: \"u1\" is not a UUID"},
      {{"link-code", kLinkUser, "--expires-at", "2001-01-01T00:00:00Z"}, "--expires-at: \"2001-01-01T00:00:00Z\" is not in the future"},
      {{"link-code", kLinkUser, "--expires-at", "tomorrow"}, "--expires-at: expected a date-time with an offset"},
      {{"link-code", kLinkUser, "--expires-at", "2099-01-01"}, "--expires-at: expected a date-time with an offset"},
      {{"link-code", kLinkUser, "--expires-at", "2099-01-01T10:00:00"}, "--expires-at: expected a date-time with an offset"},
  };
  for (const auto& [args, reason] : refused) {
    BOOST_TEST_CONTEXT(reason) {
      const auto result = t.run(args);
      BOOST_TEST(result.exit_code == 2);
      BOOST_TEST(result.stderr_text.starts_with("healthhook link-code: " + reason), result.stderr_text);
      BOOST_TEST(test::line_count(result.stderr_text) == 1u);
    }
  }
  BOOST_TEST(t.calls().empty());
}

BOOST_AUTO_TEST_CASE(the_users_team_decides_where_it_goes) {
  // A delivery of the EU team's user in the database (users.team_id), as serve stores it.
  fake::FakeService eu(test::commands_service_options("eu-team-key"));
  test::ServiceCommands t;
  t.dir.write("eu-key", "eu-team-key\n");
  t.dir.write("service-ca.pem", t.service.ca_pem() + eu.ca_pem());
  const std::string eu_team = "6b74423d-0504-4470-9afb-477252ccf67a";  // schemas/examples/workout-stream.json
  {
    test::ServerProcess server(t.dir, "[[service.teams]]\nteam_id = \"" + eu_team + "\"\nbase_url = \"" +
                                          eu.base_url() + "\"\napi_key_file = \"eu-key\"\n");
    test::HttpClient client(server.port());
    BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_eu", test::example_file("workout-stream.json")).status, 200);
    BOOST_REQUIRE(test::wait_for_value(server.database(), "SELECT count(*) FROM users WHERE team_id = '" + eu_team + "'", 1));
    BOOST_TEST(server.stop() == 0);
  }
  t.write_config("[[service.teams]]\nteam_id = \"" + eu_team + "\"\nbase_url = \"" + eu.base_url() +
                 "\"\napi_key_file = \"eu-key\"\n");
  const auto result = t.run({"link-code", kLinkUser});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(t.calls().empty());
  std::vector<fake::RecordedRequest> at_eu;
  for (const auto& request : eu.requests()) {
    if (request.path == "/v2/link/code/create") at_eu.push_back(request);
  }
  BOOST_REQUIRE_EQUAL(at_eu.size(), 1u);
  BOOST_TEST(at_eu[0].api_key == "eu-team-key");
}

BOOST_AUTO_TEST_SUITE_END()
