// `healthhook teams` and `check-config --online` with [management] (issue 47): every page
// of GET /v1/org/{org_id}/team with the management key (never a team's API key), the
// filters as the interface names them, --as-config blocks, input refused before any
// request, and configured teams the organization does not have.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cctype>

#include "fetcher/calls/org_teams.h"
#include "tests/service/service_fixture.h"

BOOST_AUTO_TEST_SUITE(teams_command_test)

using namespace hh;
using test::has;

namespace {

const std::string kOrg = "0c0ffee0-1234-4abc-8def-0123456789ab";
const std::vector<fake::OrgTeamEntry> kTeams = {
    {"6b74423d-0504-4470-9afb-477252ccf67a", "Acme EU", "2024-01-02T03:04:05+00:00", "eu"},
    {"11111111-2222-4333-8444-555555555555", "Acme US", "2024-02-03T04:05:06+00:00", "us"},
    {"22222222-3333-4444-8555-666666666666", "Zürich Research", "2024-03-04T05:06:07+00:00", "eu"},
    {"33333333-4444-4555-8666-777777777777", "Acme Sandbox", "2024-04-05T06:07:08+00:00", "us"},
    {"44444444-5555-4666-8777-888888888888", "Beta", "2024-05-06T07:08:09+00:00", "us"},
};

// [management] on the fake (the same host answers the management endpoint).
std::string management_toml(const test::ServiceCommands& t, const std::string& base_urls = "") {
  t.dir.write("management-key", std::string(test::kCommandsManagementKey) + "\n");
  return "[management]\nurl = \"" + t.service.base_url() + "\"\nkey_file = \"management-key\"\norg_id = \"" + kOrg +
         "\"\n" + base_urls;
}

std::vector<fake::RecordedRequest> team_calls(const test::ServiceCommands& t) {
  std::vector<fake::RecordedRequest> out;
  for (auto& request : t.calls()) {
    if (request.path == "/v1/org/" + kOrg + "/team") out.push_back(request);
  }
  return out;
}

// The management endpoint's access, as `teams` builds it from management_toml().
fetcher::ServiceAccess management_access(const test::ServiceCommands& t) {
  fetcher::ServiceAccess access;
  access.service.base_url = t.service.base_url();
  access.service.api_key_header = std::string(fetcher::kManagementKeyHeader);
  access.service.ca_file = "service-ca.pem";
  access.api_key = test::kCommandsManagementKey;
  access.base_dir = t.dir.path().string();
  access.key_name = "management key";
  return access;
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

}  // namespace

BOOST_AUTO_TEST_CASE(lists_every_page_with_the_management_key) {
  test::ServiceCommands t;
  t.service.interface().set_organization(kOrg, kTeams, 2);
  t.write_config(management_toml(t));
  auto result = t.run({"teams"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(test::line_count(result.stdout_text) == 6u);  // header + five teams
  for (const auto& team : kTeams) {
    BOOST_TEST(has(result.stdout_text, team.id), result.stdout_text);
    BOOST_TEST(has(result.stdout_text, team.name), result.stdout_text);
  }
  auto calls = team_calls(t);
  BOOST_REQUIRE_EQUAL(calls.size(), 3u);  // pages of 2, 2 and 1
  BOOST_TEST(calls[0].query.count("next_cursor") == 0u);
  BOOST_TEST(calls[1].query.at("next_cursor") == "teams-after-2");
  BOOST_TEST(calls[2].query.at("next_cursor") == "teams-after-4");
  for (const auto& call : calls) {
    BOOST_TEST(call.method == "GET");
    BOOST_TEST(call.management_key == test::kCommandsManagementKey);
    BOOST_TEST(call.api_key == "");  // the team's key never goes to the management endpoint
    BOOST_TEST(call.authorized);
  }

  // Filters: the regions as a repeated parameter, the search text as sent.
  result = t.run({"teams", "--region", "us,eu", "--search", "acme", "--format", "jsonl"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text ==
             "{\"id\":\"6b74423d-0504-4470-9afb-477252ccf67a\",\"name\":\"Acme EU\",\"created_on\":\"2024-01-02T03:04:05+00:00\",\"region\":\"eu\"}\n"
             "{\"id\":\"11111111-2222-4333-8444-555555555555\",\"name\":\"Acme US\",\"created_on\":\"2024-02-03T04:05:06+00:00\",\"region\":\"us\"}\n"
             "{\"id\":\"33333333-4444-4555-8666-777777777777\",\"name\":\"Acme Sandbox\",\"created_on\":\"2024-04-05T06:07:08+00:00\",\"region\":\"us\"}\n");
  calls = team_calls(t);
  BOOST_TEST(calls[3].query_list == (std::vector<std::pair<std::string, std::string>>{
                                        {"region", "us"}, {"region", "eu"}, {"search_query", "acme"}}));
  result = t.run({"teams", "--region", "eu", "--search", "Zürich", "--format", "jsonl"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(test::line_count(result.stdout_text) == 1u);
  BOOST_TEST(has(result.stdout_text, "Zürich Research"), result.stdout_text);
}

BOOST_AUTO_TEST_CASE(as_config_prints_a_block_per_team_with_its_regions_base_url) {
  test::ServiceCommands t;
  t.service.interface().set_organization(kOrg, {kTeams[0], kTeams[1]}, 5);
  t.write_config(management_toml(t, "[management.base_urls]\nus = \"https://api.us.example\"\n"
                                    "eu = \"https://api.eu.example\"\n"));
  auto result = t.run({"teams", "--as-config"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text ==
             "# Acme EU (region eu, created 2024-01-02T03:04:05+00:00); put the team's API key in the file below\n"
             "[[service.teams]]\nteam_id = \"6b74423d-0504-4470-9afb-477252ccf67a\"\n"
             "base_url = \"https://api.eu.example\"\napi_key_file = \"team-6b74423d-0504-4470-9afb-477252ccf67a.api-key\"\n\n"
             "# Acme US (region us, created 2024-02-03T04:05:06+00:00); put the team's API key in the file below\n"
             "[[service.teams]]\nteam_id = \"11111111-2222-4333-8444-555555555555\"\n"
             "base_url = \"https://api.us.example\"\napi_key_file = \"team-11111111-2222-4333-8444-555555555555.api-key\"\n\n");
  // The printed blocks are a configuration healthhook accepts.
  t.dir.write("printed.toml", "signing_secret_files = [\"secret\"]\n[service]\nbase_url = \"https://api.us.example\"\n" +
                                  result.stdout_text);
  for (const auto& team : {kTeams[0], kTeams[1]}) t.dir.write("team-" + team.id + ".api-key", "a-key\n");
  const auto check = test::run_healthhook({"check-config", "--config", t.dir.file("printed.toml")});
  BOOST_TEST(check.exit_code == 0, check.stderr_text);
  BOOST_TEST(has(check.stdout_text, "\"service_teams\":2"), check.stdout_text);

  // A region without a base URL: nothing printed.
  t.write_config(management_toml(t, "[management.base_urls]\nus = \"https://api.us.example\"\n"));
  result = t.run({"teams", "--as-config"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(has(result.stderr_text, "management.base_urls has no entry for region \"eu\""), result.stderr_text);
  // A team id that is not a UUID is a bad answer, never a file name: "../../etc" became
  // api_key_file = "team-../../etc.api-key" (black-box pass).
  t.write_config(management_toml(t, "[management.base_urls]\nus = \"https://api.us.example\"\n"));
  t.service.interface().set_organization(kOrg, {kTeams[1], {"../../etc", "Sly", "2024-02-03T04:05:06+00:00", "us"}}, 5);
  result = t.run({"teams", "--as-config"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(has(result.stderr_text, "/team: unexpected answer: teams[1].id: \"../../etc\" is not a UUID"), result.stderr_text);
}

// A team on two pages (pages that overlap while teams are added): --as-config printed two
// blocks with one team_id, which check-config then refused (black-box pass). The same team
// twice is printed once; twice with different fields fails and prints nothing.
BOOST_AUTO_TEST_CASE(a_team_listed_twice_is_printed_once_or_refused_when_it_differs) {
  test::ServiceCommands t;
  t.service.interface().set_organization(kOrg, {kTeams[0], kTeams[1], kTeams[0]}, 2);
  t.write_config(management_toml(t, "[management.base_urls]\nus = \"https://api.us.example\"\neu = \"https://api.eu.example\"\n"));
  auto result = t.run({"teams", "--as-config"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(occurrences(result.stdout_text, "[[service.teams]]") == 2u, result.stdout_text);
  BOOST_TEST(occurrences(result.stdout_text, "team_id = \"" + kTeams[0].id + "\"") == 1u, result.stdout_text);

  auto renamed = kTeams[0];
  renamed.name = "Acme EU (renamed)";
  t.service.interface().set_organization(kOrg, {kTeams[0], kTeams[1], renamed}, 2);
  result = t.run({"teams", "--as-config"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(has(result.stderr_text, "teams[0]: team \"" + kTeams[0].id +
                                         "\" came twice with different fields (the list changed while paging; run it again)"),
             result.stderr_text);
}

BOOST_AUTO_TEST_CASE(input_and_settings_are_refused_before_any_request) {
  test::ServiceCommands t;
  t.service.interface().set_organization(kOrg, kTeams);
  t.write_config(management_toml(t));
  const std::pair<std::vector<std::string>, std::string> refused[] = {
      {{"teams", "--region", "asia"}, "--region: \"asia\" is not us or eu"},
      {{"teams", "--search", std::string(81, 'a')}, "--search: 81 characters, at most 80"},
      {{"teams", "--search", "acme%"}, "--search: character 5 is not allowed"},
      {{"teams", "--search", "\"quoted\""}, "--search: character 1 is not allowed"},
  };
  for (const auto& [args, reason] : refused) {
    BOOST_TEST_CONTEXT(reason) {
      const auto result = t.run(args);
      BOOST_TEST(result.exit_code == 2);
      BOOST_TEST(has(result.stderr_text, "healthhook teams: " + reason), result.stderr_text);
    }
  }
  std::string wrong_org = management_toml(t);
  wrong_org.replace(wrong_org.find(kOrg), kOrg.size(), "org-1");
  t.write_config(wrong_org);
  auto result = t.run({"teams"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, "management.org_id: must be the organization's UUID"), result.stderr_text);
  // As the configuration's other mistakes, check-config finds it (it passed).
  result = t.run({"check-config"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, "management.org_id: must be the organization's UUID"), result.stderr_text);
  t.write_config();  // no [management]
  result = t.run({"teams"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, "management.url is not set"), result.stderr_text);
  t.write_config("[management]\nurl = \"http://example.com\"\nkey_file = \"k\"\norg_id = \"" + kOrg + "\"\n");
  result = t.run({"teams"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, "management.url: must be an https:// URL"), result.stderr_text);
  t.write_config("[management]\nurl = \"https://example.com\"\norg_id = \"" + kOrg + "\"\n");
  result = t.run({"teams"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, "management.url: management.key_file is not set (required with management.url)"), result.stderr_text);
  BOOST_TEST(t.calls().empty());
}

// management.key_file naming a missing file passed check-config without a word and only
// `teams` refused it (black-box pass): check-config reads it as `teams` does, with the same
// line: a warning offline (serve, which never reads it, runs with this configuration; a
// refusal failed the service user's check, review), a refusal with --online.
BOOST_AUTO_TEST_CASE(check_config_warns_of_a_missing_management_key_file_and_online_refuses_it) {
  test::ServiceCommands t;
  std::string toml = management_toml(t);
  toml.replace(toml.find("\"management-key\""), std::string("\"management-key\"").size(), "\"missing-key\"");
  t.write_config(toml);
  const auto listed = t.run({"teams"});
  BOOST_TEST(listed.exit_code == 2);
  const std::string prefix = "healthhook teams: ";
  BOOST_REQUIRE_MESSAGE(listed.stderr_text.starts_with(prefix + "management.key_file: "), listed.stderr_text);
  const std::string line = listed.stderr_text.substr(prefix.size());
  const auto checked = t.run({"check-config"});
  BOOST_TEST(checked.exit_code == 0, checked.stderr_text);
  const std::string line_text = line.substr(0, line.find_last_not_of('\n') + 1);
  BOOST_TEST(has(checked.stderr_text, "healthhook check-config: warning: " + line_text +
                                          " (serve does not read it; `teams` and `check-config --online` need it)"),
             checked.stderr_text);
  BOOST_TEST(t.calls().empty());  // offline: nothing asked
  const auto online = t.run({"check-config", "--online"});
  BOOST_TEST(online.exit_code == 2);
  BOOST_TEST(has(online.stderr_text, "healthhook check-config: " + line), online.stderr_text);
  t.write_config(management_toml(t));  // the key file there
  const auto passed = t.run({"check-config"});
  BOOST_TEST(passed.exit_code == 0, passed.stderr_text);
}

BOOST_AUTO_TEST_CASE(a_team_api_key_is_refused_at_the_management_endpoint) {
  test::ServiceCommands t;
  t.service.interface().set_organization(kOrg, kTeams);
  t.write_config(management_toml(t));
  t.dir.write("management-key", std::string(test::kCommandsApiKey) + "\n");  // the team's key by mistake
  const auto result = t.run({"teams"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(has(result.stderr_text, "HTTP 401: the service refused the management key"), result.stderr_text);
  BOOST_TEST(!has(result.stderr_text, test::kCommandsApiKey));
}

BOOST_AUTO_TEST_CASE(check_config_online_names_teams_the_organization_does_not_have) {
  test::ServiceCommands t;
  t.service.interface().set_organization(kOrg, kTeams, 2);
  t.dir.write("eu-key", std::string(test::kCommandsApiKey) + "\n");
  // Both teams on the same fake (it takes one key): what is compared is the ids.
  const auto teams = [&](const std::string& first, const std::string& second) {
    return management_toml(t) + "[[service.teams]]\nteam_id = \"" + first +
           "\"\nbase_url = \"" + t.service.base_url() + "\"\napi_key_file = \"eu-key\"\n[[service.teams]]\nteam_id = \"" +
           second + "\"\nbase_url = \"" + t.service.base_url() + "\"\napi_key_file = \"eu-key\"\n";
  };
  t.write_config(teams(kTeams[0].id, kTeams[4].id));  // the second is on the last page
  auto result = t.run({"check-config", "--online"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(has(result.stdout_text, "\"management_teams\":5"), result.stdout_text);
  // A team id written in capitals is the same team (it was "not a team of organization").
  std::string in_capitals = kTeams[0].id;
  std::transform(in_capitals.begin(), in_capitals.end(), in_capitals.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  t.write_config(teams(in_capitals, kTeams[4].id));
  result = t.run({"check-config", "--online"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);

  const std::string stranger = "99999999-8888-4777-8666-555555555555";
  t.write_config(teams(stranger, kTeams[1].id));
  result = t.run({"check-config", "--online"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(result.stderr_text == "healthhook check-config: service.teams[0].team_id: \"" + stranger +
                                       "\" is not a team of organization " + kOrg + "\n");

  // Without [management] nothing is listed.
  t.write_config();
  const size_t before = team_calls(t).size();
  result = t.run({"check-config", "--online"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(!has(result.stdout_text, "management_teams"));
  BOOST_TEST(team_calls(t).size() == before);
}

// A service whose pages never end (a new next_cursor on every page, none that came before)
// is followed for at most max_pages (10,000 in `teams` and `check-config --online`, as a
// backfill; 5 here), then the listing fails saying so. It had no useful bound (black-box
// pass: 13,696 requests in 10 minutes).
BOOST_AUTO_TEST_CASE(a_team_listing_whose_pages_never_end_stops_at_max_pages) {
  test::ServiceCommands t;
  t.service.interface().set_organization(kOrg, kTeams, 2);
  t.service.interface().set_endless_pages(true);
  fetcher::TeamListing listing;
  BOOST_TEST(listing.max_pages == fetcher::kMaxCursorPages);
  BOOST_TEST(fetcher::kMaxCursorPages == 10'000);
  listing.max_pages = 5;
  const auto teams = fetcher::list_org_teams(management_access(t), kOrg, listing);
  BOOST_REQUIRE(!teams);
  BOOST_TEST((teams.error_kind() == ErrorKind::other));  // a failure: exit 1
  BOOST_TEST(has(teams.error(), "/v1/org/" + kOrg + "/team?next_cursor=n4: more than 5 pages, each with a new "
                                "next_cursor: the service's pages never end"),
             teams.error());
  BOOST_TEST(team_calls(t).size() == 5u);
}

BOOST_AUTO_TEST_SUITE_END()
