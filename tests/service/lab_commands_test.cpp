// `healthhook lab-report upload|show`, `labs`, `lab-accounts`, `markers` and `area` as
// processes against the fake service (issue 47): the upload as a multipart form (docs/
// decisions, lab report upload), the lookups' query parameters, and every input check
// refused before any request.
#include <boost/test/unit_test.hpp>

#include "tests/service/service_fixture.h"

BOOST_AUTO_TEST_SUITE(lab_commands_test)

using namespace hh;
using test::has;

namespace {

const std::string kReportUser = "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2";

std::string job_id_of(const std::string& stdout_text) {
  const std::string key = "\"job_id\":\"";
  const size_t at = stdout_text.find(key);
  if (at == std::string::npos) return {};
  return stdout_text.substr(at + key.size(), 36);
}

}  // namespace

BOOST_AUTO_TEST_CASE(upload_sends_the_report_as_a_form_and_prints_the_job) {
  test::ServiceCommands t;
  const std::string pdf = std::string("%PDF-1.7\n") + std::string(300'000, 'x') + "\n%%EOF\n";
  const std::string path = t.dir.write("blood panel.pdf", pdf);
  auto result = t.run({"lab-report", "upload", path, "--needs-review", "--user", kReportUser});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  const std::string job_id = job_id_of(result.stdout_text);
  BOOST_TEST(job_id.size() == 36u, result.stdout_text);
  BOOST_TEST(result.stdout_text == "{\"job_id\":\"" + job_id + "\",\"status\":\"upload_pending\",\"file\":\"blood panel.pdf\","
                                   "\"content_type\":\"application/pdf\",\"bytes\":" + std::to_string(pdf.size()) +
                                   ",\"needs_human_review\":true}\n");
  const auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_TEST(calls[0].method == "POST");
  BOOST_TEST(calls[0].path == "/lab_report/v1/parser/job");
  BOOST_TEST(calls[0].api_key == test::kCommandsApiKey);
  BOOST_TEST(calls[0].content_type.starts_with("multipart/form-data; boundary="));
  const auto parts = t.service.interface().last_upload();
  BOOST_REQUIRE_EQUAL(parts.size(), 3u);
  BOOST_TEST(parts[0].name == "file");
  BOOST_TEST(parts[0].filename == "blood panel.pdf");
  BOOST_TEST(parts[0].content_type == "application/pdf");
  BOOST_TEST(parts[0].bytes == pdf);
  BOOST_TEST(parts[1].name == "user_id");
  BOOST_TEST(parts[1].bytes == kReportUser);
  BOOST_TEST(parts[2].name == "needs_human_review");
  BOOST_TEST(parts[2].bytes == "true");

  // show: the job as the service answers it.
  result = t.run({"lab-report", "show", job_id});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(has(result.stdout_text, "{\"id\":\"" + job_id + "\",\"status\":\"upload_pending\""), result.stdout_text);
  BOOST_TEST(t.calls().back().path == "/lab_report/v1/parser/job/" + job_id);
  result = t.run({"lab-report", "show", "8eb0217f-4683-4a3c-adca-faf95ac65739"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stderr_text, "HTTP 404: {\"detail\":\"Parsing job not found\"}"), result.stderr_text);
  // An answer about another job is refused as serve's follow-up refuses it, not printed as
  // this job's (it was, black-box pass).
  const std::string other_job = "0b9d8c7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e";
  t.service.interface().set_parsing_job(other_job, R"({"id":")" + job_id + R"(","status":"completed","data":null})");
  result = t.run({"lab-report", "show", other_job});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(has(result.stderr_text, "/lab_report/v1/parser/job/" + other_job + ": unexpected answer: id: not the job "
                                     "fetched \"" + other_job + "\""),
             result.stderr_text);

  // A PNG, without review and without a user.
  const std::string png = t.dir.write("scan.png", std::string("\x89PNG\r\n\x1a\n", 8) + "pixels");
  result = t.run({"lab-report", "upload", png});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  const auto png_parts = t.service.interface().last_upload();
  BOOST_REQUIRE_EQUAL(png_parts.size(), 2u);
  BOOST_TEST(png_parts[0].content_type == "image/png");
  BOOST_TEST(png_parts[1].name == "needs_human_review");
  BOOST_TEST(png_parts[1].bytes == "false");
}

// `lab-report show` read a 73 MB answer, parsed and printed it at about seven times its
// size, while serve's follow-up refuses the same answer as over the parser's limit
// (black-box pass): the command refuses it alike, in the same words, printing nothing.
BOOST_AUTO_TEST_CASE(show_refuses_an_answer_larger_than_the_parser_takes_in_one_document) {
  test::ServiceCommands t;
  const std::string job_id = "0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5";
  constexpr size_t kParserLimit = size_t{64} << 20;  // events::ParseLimits::max_document_bytes
  const std::string head = R"({"id":")" + job_id + R"(","status":"completed","data":{"note":")";
  const std::string tail = R"("}})";
  t.service.interface().set_parsing_job(job_id,
                                        head + std::string(kParserLimit + 1 - head.size() - tail.size(), 'x') + tail);
  auto result = t.run({"lab-report", "show", job_id});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(result.stderr_text == "healthhook lab-report show: GET " + t.service.base_url() +
                                       "/lab_report/v1/parser/job/" + job_id +
                                       ": answer of 67108865 bytes, over the 67108864 the parser takes in one document\n");
}

BOOST_AUTO_TEST_CASE(upload_refuses_files_the_service_would_refuse_before_sending) {
  test::ServiceCommands t;
  std::string big = "%PDF-1.7\n";
  big.resize(10 * 1024 * 1024 + 1, 'x');
  const std::pair<std::vector<std::string>, std::string> refused[] = {
      {{"lab-report", "upload", t.dir.write("notes.pdf", "a text file named .pdf")},
       "notes.pdf: not a PDF, JPEG or PNG file (by its first bytes)"},
      {{"lab-report", "upload", t.dir.write("big.pdf", big)}, "over the service's limit of 10 MB"},
      {{"lab-report", "upload", t.dir.file("missing.pdf")}, "missing.pdf: "},
      {{"lab-report", "upload", t.dir.path().string()}, ": is a folder"},
      {{"lab-report", "upload", "/dev/zero"}, "/dev/zero: not a regular file (a PDF, JPEG or PNG file is expected)"},
      {{"lab-report", "upload", t.dir.write("ok.pdf", "%PDF-1"), "--user", "u1"}, "--user: USER_ID: \"u1\" is not a UUID"},
  };
  for (const auto& [args, reason] : refused) {
    BOOST_TEST_CONTEXT(reason) {
      const auto result = t.run(args);
      BOOST_TEST(result.exit_code == 2);
      BOOST_TEST(result.stdout_text == "");
      BOOST_TEST(has(result.stderr_text, reason), result.stderr_text);
      BOOST_TEST(test::line_count(result.stderr_text) == 1u);
    }
  }
  BOOST_TEST(t.calls().empty());
}

BOOST_AUTO_TEST_CASE(lookups_print_the_services_answers) {
  test::ServiceCommands t;
  auto result = t.run({"labs"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(test::line_count(result.stdout_text) == 3u, result.stdout_text);
  BOOST_TEST(has(result.stdout_text, "quest"), result.stdout_text);
  BOOST_TEST(has(result.stdout_text, "walk_in_test,at_home_phlebotomy"), result.stdout_text);
  result = t.run({"labs", "--format", "json"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  // The service's array, one lab a line (every command prints one JSON object per line).
  BOOST_TEST(result.stdout_text.starts_with("{\"id\":1,\"slug\":\"quest\""), result.stdout_text);
  BOOST_TEST(test::line_count(result.stdout_text) == 2u, result.stdout_text);  // the table's two labs
  BOOST_TEST(t.calls().back().path == "/v3/lab_tests/labs");

  result = t.run({"lab-accounts", "--status", "ACTIVE"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text ==
             "{\"data\":[{\"id\":\"0b1c2d3e-4f50-4a61-8b72-93a4b5c6d7e8\",\"lab\":\"quest\",\"status\":\"ACTIVE\"}]}\n");
  BOOST_TEST(t.calls().back().path == "/v3/lab_test/lab_account");
  BOOST_TEST(t.calls().back().query.at("status") == "ACTIVE");

  result = t.run({"markers", "--lab-slug", "labcorp"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "{\"markers\":[{\"slug\":\"hba1c\",\"name\":\"Hemoglobin A1c\",\"lab_slug\":\"labcorp\"}]}\n");
  BOOST_TEST(t.calls().back().query.at("lab_slug") == "labcorp");

  result = t.run({"area", "10001", "--radius", "50", "--labs", "quest,labcorp"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text.starts_with("{\"zip_code\":\"10001\",\"phlebotomy\":{\"is_served\":true"), result.stdout_text);
  BOOST_TEST(has(result.stdout_text, "\"quest\":{\"patient_service_centers\":{\"within_radius\":3,\"radius\":\"50\""),
             result.stdout_text);
  const auto area = t.calls().back();
  BOOST_TEST(area.path == "/v3/order/area/info");
  BOOST_TEST(area.query_list == (std::vector<std::pair<std::string, std::string>>{
                                    {"zip_code", "10001"}, {"radius", "50"}, {"labs", "quest"}, {"labs", "labcorp"}}));
  BOOST_TEST(area.api_key == test::kCommandsApiKey);

  // A lab outside the interface's (non-exhaustive) list: sent, with a warning.
  result = t.run({"area", "10001", "--labs", "new_lab"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(has(result.stderr_text, "warning: --labs: \"new_lab\" is not in the interface's list"), result.stderr_text);

  // An answer for another zip code, or whose is_served is not a boolean, was printed as it
  // came (black-box pass): refused, nothing printed. A ZIP+4 of the zip asked for is one.
  const std::pair<std::string, std::string> refused_answers[] = {
      {R"({"zip_code":"90210","phlebotomy":{"is_served":true},"central_labs":{}})",
       "unexpected answer: zip_code \"90210\" is not the one asked for (10001)"},
      {R"({"zip_code":"10001","phlebotomy":{"is_served":"yes"},"central_labs":{}})",
       "unexpected answer: phlebotomy.is_served: missing or not a boolean"},
      {R"({"zip_code":"10001","phlebotomy":{},"central_labs":{}})",
       "unexpected answer: phlebotomy.is_served: missing or not a boolean"},
  };
  for (const auto& [body, error] : refused_answers) {
    fake::Fault lying;
    lying.kind = fake::Fault::Kind::status;
    lying.status = 200;
    lying.body = body;
    t.service.inject("/v3/order/area/info", lying);
    result = t.run({"area", "10001"});
    BOOST_TEST(result.exit_code == 1, body);
    BOOST_TEST(result.stdout_text == "", body);
    BOOST_TEST(has(result.stderr_text, error), result.stderr_text);
  }
  fake::Fault zip_plus_four;
  zip_plus_four.kind = fake::Fault::Kind::status;
  zip_plus_four.status = 200;
  zip_plus_four.body = R"({"zip_code":"10001-1234","phlebotomy":{"is_served":false},"central_labs":{}})";
  t.service.inject("/v3/order/area/info", zip_plus_four);
  result = t.run({"area", "10001"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
}

BOOST_AUTO_TEST_CASE(lookup_input_is_refused_before_any_request) {
  test::ServiceCommands t;
  const std::pair<std::vector<std::string>, std::string> refused[] = {
      {{"area", "1000"}, "healthhook area: ZIP: \"1000\" is not a five-digit zip code"},
      {{"area", "10001-1234"}, "ZIP: \"10001-1234\" is not a five-digit zip code"},
      {{"area", "ABCDE"}, "is not a five-digit zip code"},
      {{"area", "10001", "--radius", "30"}, "healthhook area: --radius: 30 miles is not one of 10, 20, 25, 50, 100"},
      {{"area", "10001", "--lab-account-id", "acct-1"}, "--lab-account-id: \"acct-1\" is not a UUID"},
      {{"lab-accounts", "--lab-account-id", "acct-1"}, "--lab-account-id: \"acct-1\" is not a UUID"},
      {{"markers", "--lab-slug", ""}, "--lab-slug: empty"},
  };
  for (const auto& [args, reason] : refused) {
    BOOST_TEST_CONTEXT(reason) {
      const auto result = t.run(args);
      BOOST_TEST(result.exit_code == 2);
      BOOST_TEST(has(result.stderr_text, reason), result.stderr_text);
    }
  }
  BOOST_TEST(t.calls().empty());
  // The service's own refusal of what passed here reaches the user as one line.
  fake::Fault unavailable;
  unavailable.kind = fake::Fault::Kind::status;
  unavailable.status = 503;
  t.service.inject("/v3/lab_tests/labs", unavailable);
  const auto result = t.run({"labs"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text == "healthhook labs: GET " + t.service.base_url() +
                                       "/v3/lab_tests/labs: HTTP 503: {\"detail\":\"injected fault\"}\n");
  // A 403 with a reason (a feature not enabled for the team) shows it, not only "the key".
  fake::Fault forbidden;
  forbidden.kind = fake::Fault::Kind::status;
  forbidden.status = 403;
  forbidden.body = "{\"detail\":\"Lab testing is not enabled for this team; contact support\"}";
  t.service.inject("/v3/lab_tests/labs", forbidden);
  const auto refused_403 = t.run({"labs"});
  BOOST_TEST(refused_403.exit_code == 1);
  BOOST_TEST(has(refused_403.stderr_text, "HTTP 403: {\"detail\":\"Lab testing is not enabled for this team"),
             refused_403.stderr_text);
}

// Without [[service.teams]], every --team is [service]'s (a configuration without teams
// works as it always did).
BOOST_AUTO_TEST_CASE(without_teams_any_team_goes_to_service) {
  test::ServiceCommands t;
  const auto result = t.run({"labs", "--team", "6b74423d-0504-4470-9afb-477252ccf67a"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(t.calls().size() == 1u);
}

// Team-level calls go to [service], or with --team to that [[service.teams]] entry.
BOOST_AUTO_TEST_CASE(team_level_calls_follow_team) {
  fake::FakeService eu(test::commands_service_options("eu-team-key"));
  test::ServiceCommands t;
  t.dir.write("eu-key", "eu-team-key\n");
  t.dir.write("service-ca.pem", t.service.ca_pem() + eu.ca_pem());
  const std::string eu_team = "6b74423d-0504-4470-9afb-477252ccf67a";
  t.write_config("[[service.teams]]\nteam_id = \"" + eu_team + "\"\nbase_url = \"" + eu.base_url() +
                 "\"\napi_key_file = \"eu-key\"\n");
  // A --team no entry has (a typo, not a UUID): refused, nothing sent anywhere.
  for (const std::string wrong : {"6b74423d-0504-4470-9afb-477252ccf67b", "notauuid"}) {
    const auto refused = t.run({"labs", "--team", wrong});
    BOOST_TEST(refused.exit_code == 2, refused.stderr_text);
    BOOST_TEST(has(refused.stderr_text, "--team " + wrong + ": no [[service.teams]] entry has this team id"),
               refused.stderr_text);
    const auto refreshed = t.run({"refresh", "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2", "--team", wrong});
    BOOST_TEST(refreshed.exit_code == 2, refreshed.stderr_text);
    const auto queued = t.run({"backfill", "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2", "--provider", "oura", "--resource",
                               "sleep", "--since", "2024-05-01", "--until", "2024-05-02", "--team", wrong});
    BOOST_TEST(queued.exit_code == 2, queued.stderr_text);
    BOOST_TEST(has(queued.stderr_text, "no [[service.teams]] entry has this team id"), queued.stderr_text);
  }
  BOOST_TEST(t.calls().empty());
  BOOST_TEST(eu.requests().empty());
  auto result = t.run({"labs", "--format", "json", "--team", eu_team});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  result = t.run({"area", "10001", "--team", eu_team});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  const auto at_eu = eu.requests();
  BOOST_REQUIRE_EQUAL(at_eu.size(), 2u);
  BOOST_TEST(at_eu[0].path == "/v3/lab_tests/labs");
  BOOST_TEST(at_eu[1].path == "/v3/order/area/info");
  for (const auto& request : at_eu) BOOST_TEST(request.api_key == "eu-team-key");
  BOOST_TEST(t.calls().empty());
  result = t.run({"labs", "--format", "json"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(t.calls().size() == 1u);
  BOOST_TEST(t.calls()[0].api_key == test::kCommandsApiKey);
}

// A service that does not answer within service.read_timeout_s: one line, exit 1.
BOOST_AUTO_TEST_CASE(a_slow_service_ends_in_one_line) {
  test::ServiceCommands t;
  t.write_config("read_timeout_s = 1\n");
  fake::Fault slow;
  slow.kind = fake::Fault::Kind::stall_head;
  slow.stall = std::chrono::milliseconds(3000);
  t.service.inject("/v3/lab_tests/labs", slow);
  const auto result = t.run({"labs"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(result.stderr_text.starts_with("healthhook labs: GET " + t.service.base_url() + "/v3/lab_tests/labs: "),
             result.stderr_text);
  BOOST_TEST(test::line_count(result.stderr_text) == 1u);
}

// The command list of --help names every command of the interface.
BOOST_AUTO_TEST_CASE(help_lists_every_command) {
  const auto result = test::run_healthhook({"--help"});
  BOOST_TEST(result.exit_code == 0);
  for (const char* command : {"user", "link-code", "teams", "connections", "lab-report", "labs", "lab-accounts",
                              "markers", "area", "refresh", "purge-user", "check-config"}) {
    BOOST_TEST(has(result.stdout_text, std::string("  ") + command + " "), command);
  }
  const auto user = test::run_healthhook({"user", "--help"});
  BOOST_TEST(has(user.stdout_text, "update"), user.stdout_text);
  BOOST_TEST(has(user.stdout_text, "deregister"), user.stdout_text);
}

BOOST_AUTO_TEST_SUITE_END()
