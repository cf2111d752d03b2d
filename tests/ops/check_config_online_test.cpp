// `healthhook check-config --online` against the fake service on 127.0.0.1: one GET of
// /v2/providers with the API key; a refused key, an unreachable service and a missing key
// each end with their own message and exit status.
#include <boost/test/unit_test.hpp>
#include <fstream>

#include "tests/fake_service/fake_service.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(check_config_online_test)

using namespace hh::test;

namespace {

// The fake serves the read endpoints only; /v2/providers is answered by an injected reply.
void serve_providers(hh::fake::FakeService& service) {
  hh::fake::Fault providers;
  providers.kind = hh::fake::Fault::Kind::status;
  providers.status = 200;
  providers.body = R"([{"name":"Oura","slug":"oura"},{"name":"Garmin","slug":"garmin"}])";
  service.inject("/v2/providers", providers, -1);
}

// A config in `dir` for `base_url`, with `api_key` in the api-key file ("" = no key file).
std::string write_config(const TempDir& dir, const std::string& base_url, const std::string& api_key) {
  dir.write("secret", random_secret() + "\n");
  std::string toml = "database = \"" + dir.file("healthhook.db") + "\"\nsigning_secret_files = [\"secret\"]\n" +
                     "[service]\nbase_url = \"" + base_url + "\"\n";
  if (!api_key.empty()) {
    dir.write("api-key", api_key + "\n");
    toml += "api_key_file = \"api-key\"\n";
  }
  return dir.write("healthhook.toml", toml);
}

ProcessResult check_online(const std::string& config) {
  return run_healthhook({"check-config", "--online", "--config", config}, "", {}, std::chrono::seconds(60));
}

}  // namespace

BOOST_AUTO_TEST_CASE(reachable_service_with_accepted_key_passes) {
  hh::fake::FakeService service;
  serve_providers(service);
  TempDir dir;
  const auto result = check_online(write_config(dir, service.base_url(), "test-api-key"));
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text.find("\"service_checked\":\"" + service.base_url() + "/v2/providers\"") !=
                 std::string::npos,
             result.stdout_text);
  BOOST_TEST(result.stdout_text.find("\"service_status\":200") != std::string::npos, result.stdout_text);
  const auto requests = service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 1u);  // one GET, nothing else
  BOOST_TEST(requests[0].path == "/v2/providers");
  BOOST_TEST(requests[0].authorized);
}

BOOST_AUTO_TEST_CASE(refused_key_is_a_configuration_error) {
  hh::fake::FakeService service;
  serve_providers(service);
  TempDir dir;
  const auto result = check_online(write_config(dir, service.base_url(), "not-the-key"));
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("service.api_key_file: the service refused the API key (HTTP 401) at " +
                                     service.base_url() + "/v2/providers") != std::string::npos,
             result.stderr_text);
  BOOST_TEST(result.stderr_text.find("not-the-key") == std::string::npos);  // never print the key
}

// A 200 that is not the providers' array (a proxy's or a captive portal's page) is not the
// service: the base URL is named, as a follow-up would fail on it.
BOOST_AUTO_TEST_CASE(a_2xx_that_is_not_the_providers_array_is_a_failure) {
  hh::fake::FakeService service;
  hh::fake::Fault page;
  page.kind = hh::fake::Fault::Kind::status;
  page.status = 200;
  page.body = "<html><body>Sign in to the network</body></html>";
  service.inject("/v2/providers", page, -1);
  TempDir dir;
  const auto result = check_online(write_config(dir, service.base_url(), "test-api-key"));
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text.find("service.base_url: " + service.base_url() +
                                     "/v2/providers: HTTP 200 with an answer that is not a JSON array of providers") !=
                 std::string::npos,
             result.stderr_text);
  BOOST_TEST(result.stdout_text.find("\"status\":\"ok\"") == std::string::npos, result.stdout_text);
}

BOOST_AUTO_TEST_CASE(unreachable_service_is_a_runtime_failure) {
  // Port 1 (tcpmux): privileged and unused, so the connection is refused at once.
  const std::string base_url = "http://127.0.0.1:1";
  TempDir dir;
  const auto result = check_online(write_config(dir, base_url, "test-api-key"));
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text.find("service.base_url: " + base_url + "/v2/providers: connect: ") !=
                 std::string::npos,
             result.stderr_text);
}

BOOST_AUTO_TEST_CASE(online_without_an_api_key_says_so) {
  TempDir dir;
  const auto result = check_online(write_config(dir, "http://127.0.0.1:9", ""));
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("--online: service.api_key_file is not set") != std::string::npos,
             result.stderr_text);
}

BOOST_AUTO_TEST_CASE(without_online_no_request_is_made) {
  hh::fake::FakeService service;
  TempDir dir;
  const auto result =
      run_healthhook({"check-config", "--config", write_config(dir, service.base_url(), "test-api-key")});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text.find("service_status") == std::string::npos);
  BOOST_TEST(service.requests().empty());
}

// Each [[service.teams]] entry is checked too, with its own base URL and key, and named
// when it fails.
BOOST_AUTO_TEST_CASE(each_team_is_checked_with_its_own_base_url_and_key) {
  hh::fake::FakeService primary;
  serve_providers(primary);
  hh::fake::FakeOptions eu_options;
  eu_options.api_key = "eu-team-key";
  hh::fake::FakeService eu(eu_options);
  serve_providers(eu);
  TempDir dir;
  const std::string config = write_config(dir, primary.base_url(), "test-api-key");
  const auto add_eu_team = [&](const std::string& key) {
    dir.write("eu-key", key + "\n");
    std::ofstream(config, std::ios::app) << "[[service.teams]]\nteam_id = \"6b74423d-0504-4470-9afb-477252ccf67a\"\n"
                                         << "base_url = \"" << eu.base_url()
                                         << "\"\napi_key_file = \"eu-key\"\n";
  };
  add_eu_team("eu-team-key");
  auto result = check_online(config);
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_REQUIRE_EQUAL(eu.requests().size(), 1u);
  BOOST_TEST(eu.requests()[0].api_key == "eu-team-key");
  BOOST_TEST(primary.requests()[0].api_key == "test-api-key");

  dir.write("eu-key", "wrong-team-key\n");
  result = check_online(config);
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("service.teams[0].api_key_file: the service refused the API key (HTTP 401) at " +
                                     eu.base_url() + "/v2/providers") != std::string::npos,
             result.stderr_text);
}

BOOST_AUTO_TEST_SUITE_END()  // check_config_online_test
