// healthhook sign: its three header lines verify with the receiver's verifier, and a POST
// carrying them, the way curl -H sends them, is accepted by a running receiver.
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "receiver/signature/webhook_signature.h"
#include "tests/io/io_fixtures.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(sign_test)

using namespace hh::test;

namespace {

const std::string kBody = R"({"event_type":"daily.data.steps.created","data":{"user_id":"u1","source":{"provider":"oura","type":"ring"},"data":[{"timestamp":"2024-05-16T10:00:00+00:00","unit":"count","value":237}]}})";

// "name: value" lines → header pairs.
Headers parse_lines(const std::string& text) {
  Headers headers;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(": ");
    BOOST_REQUIRE_MESSAGE(colon != std::string::npos, "not a header line: " << line);
    headers.emplace_back(line.substr(0, colon), line.substr(colon + 2));
  }
  return headers;
}

}  // namespace

BOOST_AUTO_TEST_CASE(signature_lines_verify) {
  TempDir dir;
  const std::string secret = random_secret();
  const std::string secret_file = dir.write("secret", secret + "\n");
  auto result = run_healthhook({"sign", "--secret-file", secret_file, "--id", "msg_fixed", "--timestamp", "1715853600"}, kBody);
  BOOST_TEST_REQUIRE(result.exit_code == 0, result.stderr_text);
  const Headers headers = parse_lines(result.stdout_text);
  BOOST_REQUIRE_EQUAL(headers.size(), 3u);
  BOOST_TEST(headers[0].first == "svix-id");
  BOOST_TEST(headers[0].second == "msg_fixed");
  BOOST_TEST(headers[1].first == "svix-timestamp");
  BOOST_TEST(headers[1].second == "1715853600");
  BOOST_TEST(headers[2].first == "svix-signature");
  BOOST_TEST(headers[2].second == hh::signature::sign(secret, "msg_fixed", "1715853600", kBody).value());

  auto verifier = hh::signature::Verifier::create(std::vector<std::string>{secret}, 300);
  BOOST_REQUIRE(verifier.ok());
  const hh::signature::SignedHeaders signed_headers{headers[0].second, headers[1].second, headers[2].second};
  BOOST_TEST(((*verifier)->verify(signed_headers, kBody, 1715853600) == hh::signature::Verdict::ok));
  BOOST_TEST(((*verifier)->verify(signed_headers, kBody + " ", 1715853600) != hh::signature::Verdict::ok));

  // RFC 3339 timestamps are accepted too; the default id has the service's shape.
  auto dated = run_healthhook({"sign", "--secret-file", secret_file, "--timestamp", "2024-05-16T10:00:00Z"}, kBody);
  const Headers dated_headers = parse_lines(dated.stdout_text);
  BOOST_REQUIRE_EQUAL(dated_headers.size(), 3u);
  BOOST_TEST(dated_headers[1].second == "1715853600");
  BOOST_TEST(dated_headers[0].second.size() == 31u);
  BOOST_TEST(dated_headers[0].second.starts_with("msg_"));
}

BOOST_AUTO_TEST_CASE(bad_input_is_named) {
  TempDir dir;
  const std::string secret_file = dir.write("secret", random_secret() + "\n");
  auto bad_time = run_healthhook({"sign", "--secret-file", secret_file, "--timestamp", "later"}, kBody);
  BOOST_TEST(bad_time.exit_code == 2);
  BOOST_TEST(bad_time.stderr_text ==
             "healthhook sign: --timestamp: expected Unix seconds, RFC 3339 or a date, got \"later\"\n");
  // CLI11 would take "-5" for an option: the = form passes it as the value.
  auto before_1970 = run_healthhook({"sign", "--secret-file", secret_file, "--timestamp=-5"}, kBody);
  BOOST_TEST(before_1970.exit_code == 2);
  BOOST_TEST(before_1970.stderr_text ==
             "healthhook sign: --timestamp: must not be before 1970-01-01, got \"-5\"\n");
  auto no_secret = run_healthhook({"sign"}, kBody);
  BOOST_TEST(no_secret.exit_code == 2);
  BOOST_TEST(no_secret.stderr_text.find("--secret-file") != std::string::npos, no_secret.stderr_text);
  const std::string garbage = dir.write("garbage", "whsec_%%%\n");
  auto bad_secret = run_healthhook({"sign", "--secret-file", garbage}, kBody);
  BOOST_TEST(bad_secret.exit_code == 2);
  BOOST_TEST(bad_secret.stderr_text.find("healthhook sign: --secret-file: ") == 0u, bad_secret.stderr_text);
}

BOOST_AUTO_TEST_CASE(a_post_with_the_printed_headers_is_accepted) {
  TempDir dir;
  ServerProcess server(dir);
  auto signed_headers = run_healthhook({"sign", "--secret-file", dir.file("secret")}, kBody);  // now, random id
  BOOST_TEST_REQUIRE(signed_headers.exit_code == 0, signed_headers.stderr_text);
  Headers headers = parse_lines(signed_headers.stdout_text);
  headers.emplace_back("content-type", "application/json");
  HttpClient client(server.port());
  const auto response = client.request("POST", "/webhooks", kBody, headers);
  BOOST_TEST(response.status == 200, response.body);
  BOOST_TEST(response.body.find("\"status\":\"stored\"") != std::string::npos);
  BOOST_TEST(io::query_int(server.database(), "SELECT count(*) FROM deliveries WHERE message_id = '" + headers[0].second + "'") == 1);

  // With curl itself, one -H per printed line, when curl is installed.
  if (std::system("command -v curl >/dev/null 2>&1") != 0) {
    BOOST_TEST_MESSAGE("curl not installed: the curl variant is skipped");
    return;
  }
  const std::string body_file = dir.write("body.json", kBody);
  auto again = run_healthhook({"sign", "--secret-file", dir.file("secret")}, kBody);
  const std::string headers_file = dir.write("headers.txt", again.stdout_text);
  const std::string out = dir.file("curl.out");
  const std::string command = "curl -s -o '" + out + "' -w '%{http_code}' -H 'content-type: application/json' " +
                              "$(sed 's/^/-H\\n/' '" + headers_file + "' | tr -d ' ' | tr '\\n' ' ') " +
                              "--data-binary @'" + body_file + "' http://127.0.0.1:" + std::to_string(server.port()) +
                              "/webhooks > '" + out + ".code'";
  BOOST_TEST(std::system(command.c_str()) == 0);
  std::ifstream code(out + ".code");
  std::string status;
  code >> status;
  BOOST_TEST(status == "200");
  BOOST_TEST(io::query_int(server.database(), "SELECT count(*) FROM deliveries") == 2);
}

BOOST_AUTO_TEST_SUITE_END()  // sign_test
