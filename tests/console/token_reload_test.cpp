// Rotating a token, then SIGHUP, on the real binary (app/reload.h): the read API's, the
// console's admin token and /metrics' token are re-read; from the reload on the old ones
// get 401 and the new ones pass, and console sessions signed in with a replaced token end.
// A token file that does not load keeps every running token (reload_failed says why); a
// token that turns on what `serve` started without is named by reload_needs_restart.
#include <boost/test/unit_test.hpp>
#include <signal.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(token_reload_test)

namespace {

using hh::test::HttpClient;
using hh::test::HttpResponse;
using hh::test::ServerProcess;

// Distinct each call; letters and digits only (it goes into a form as it is).
std::string new_token(const std::string& kind) {
  std::string token = kind + "-";
  for (const char c : hh::test::random_secret().substr(6)) {
    if (std::isalnum(static_cast<unsigned char>(c))) token.push_back(c);
  }
  return token;
}

size_t count_logs(const ServerProcess& server, const std::string& needle) {
  size_t n = 0;
  for (const auto& line : server.log_lines()) n += line.find(needle) != std::string::npos ? 1 : 0;
  return n;
}

// Waits until `n` log lines hold `needle` (a reload's line comes after its SIGHUP).
bool wait_for_logs(const ServerProcess& server, const std::string& needle, size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (count_logs(server, needle) < n) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The log line holding `needle` (the last one), or "".
std::string log_line(const ServerProcess& server, const std::string& needle) {
  std::string found;
  for (const auto& line : server.log_lines()) {
    if (line.find(needle) != std::string::npos) found = line;
  }
  return found;
}

int read_api_status(HttpClient& client, const std::string& token) {
  return client.get("/v1/forwarding", {{"Authorization", "Bearer " + token}}).status;
}

int metrics_status(HttpClient& client, const std::string& token) {
  if (token.empty()) return client.get("/metrics").status;
  return client.get("/metrics", {{"Authorization", "Bearer " + token}}).status;
}

HttpResponse sign_in(HttpClient& client, const std::string& token) {
  return client.request("POST", "/console/sign-in", "token=" + token,
                        {{"Content-Type", "application/x-www-form-urlencoded"}, {"X-Requested-With", "test"}});
}

// "hh_console=<id>" from a sign-in's Set-Cookie.
std::string session_cookie(const HttpResponse& response) {
  const std::string set_cookie = response.header("set-cookie");
  return set_cookie.substr(0, set_cookie.find(';'));
}

int session_status(HttpClient& client, const std::string& cookie) {
  return client.get("/console/api/session", {{"Cookie", cookie}}).status;
}

// healthhook.toml as ServerProcess wrote it, with `extra_toml` instead of what it had.
void rewrite_config(const hh::test::TempDir& dir, const ServerProcess& server, const std::string& extra_toml) {
  dir.write("healthhook.toml", "listen = \"127.0.0.1:0\"\ndatabase = \"" + server.database() +
                                   "\"\nsigning_secret_files = [\"secret\"]\n" + extra_toml + "\n");
}

// The read API, the console with actions and /metrics behind a token, each in its file.
struct TokenFiles {
  std::string read = new_token("read");
  std::string admin = new_token("admin");
  std::string metrics = new_token("metrics");

  void write(const hh::test::TempDir& dir) const {
    dir.write("read-token", read + "\n");
    dir.write("admin-token", admin + "\n");
    dir.write("metrics-token", metrics + "\n");
  }
};

const std::string kAllTokensToml =
    "refusal_delay_ms = 0\n"
    "[read_api]\ntoken_file = \"read-token\"\n"
    "[metrics]\ntoken_file = \"metrics-token\"\n"
    "[console]\nenabled = true\nadmin_token_file = \"admin-token\"\n";

}  // namespace

BOOST_AUTO_TEST_CASE(a_reload_revokes_rotated_tokens_and_their_console_sessions) {
  hh::test::TempDir dir;
  const TokenFiles old_tokens;
  old_tokens.write(dir);
  ServerProcess server(dir, kAllTokensToml);
  HttpClient client(server.port());
  BOOST_TEST(read_api_status(client, old_tokens.read) == 200);
  BOOST_TEST(metrics_status(client, old_tokens.metrics) == 200);
  const std::string read_session = session_cookie(sign_in(client, old_tokens.read));
  const std::string admin_session = session_cookie(sign_in(client, old_tokens.admin));
  BOOST_TEST(session_status(client, read_session) == 200);
  BOOST_TEST(session_status(client, admin_session) == 200);

  const TokenFiles new_tokens;
  new_tokens.write(dir);
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reloaded")", 1));
  const std::string reloaded = log_line(server, R"("event":"reloaded")");
  BOOST_TEST(reloaded.find(R"("tokens_replaced":"read_api.token_file, metrics.token_file, console.admin_token_file")") !=
                 std::string::npos,
             reloaded);
  BOOST_TEST(reloaded.find(R"("console_sessions_ended":2)") != std::string::npos, reloaded);
  BOOST_TEST(count_logs(server, "reload_needs_restart") == 0u);

  // The old tokens are refused at once, everywhere; the new ones pass.
  BOOST_TEST(read_api_status(client, old_tokens.read) == 401);
  BOOST_TEST(read_api_status(client, new_tokens.read) == 200);
  BOOST_TEST(metrics_status(client, old_tokens.metrics) == 401);
  BOOST_TEST(metrics_status(client, new_tokens.metrics) == 200);
  BOOST_TEST(sign_in(client, old_tokens.read).status == 401);
  BOOST_TEST(sign_in(client, old_tokens.admin).status == 401);
  // The sessions the old tokens signed in have ended.
  BOOST_TEST(session_status(client, read_session) == 401);
  BOOST_TEST(session_status(client, admin_session) == 401);
  const HttpResponse admin = sign_in(client, new_tokens.admin);
  BOOST_TEST(admin.status == 200);
  BOOST_TEST(admin.body.find(R"("role":"admin")") != std::string::npos);
  BOOST_TEST(session_status(client, session_cookie(admin)) == 200);
  BOOST_TEST(sign_in(client, new_tokens.read).status == 200);

  // A reload that replaces only the admin token ends only the admin's sessions.
  const std::string read_session_2 = session_cookie(sign_in(client, new_tokens.read));
  const std::string admin_session_2 = session_cookie(sign_in(client, new_tokens.admin));
  const std::string third_admin = new_token("admin");
  dir.write("admin-token", third_admin + "\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reloaded")", 2));
  BOOST_TEST(log_line(server, R"("event":"reloaded")").find(R"("tokens_replaced":"console.admin_token_file")") !=
             std::string::npos);
  BOOST_TEST(session_status(client, read_session_2) == 200);
  BOOST_TEST(session_status(client, admin_session_2) == 401);
  BOOST_TEST(sign_in(client, third_admin).status == 200);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_token_file_that_does_not_load_keeps_every_running_token) {
  hh::test::TempDir dir;
  const TokenFiles tokens;
  tokens.write(dir);
  ServerProcess server(dir, kAllTokensToml);
  HttpClient client(server.port());
  const std::string admin_session = session_cookie(sign_in(client, tokens.admin));

  // The read token rotated, the admin token's file broken (too short): neither applies.
  const std::string next_read = new_token("read");
  dir.write("read-token", next_read + "\n");
  dir.write("admin-token", "short\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reload_failed","reason":"console.admin_token_file: )", 1));
  BOOST_TEST(read_api_status(client, tokens.read) == 200);
  BOOST_TEST(read_api_status(client, next_read) == 401);
  BOOST_TEST(session_status(client, admin_session) == 200);
  BOOST_TEST(sign_in(client, tokens.admin).status == 200);

  // An empty read token file: the same.
  dir.write("admin-token", tokens.admin + "\n");
  dir.write("read-token", "\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reload_failed","reason":"read_api.token_file: )", 1));
  BOOST_TEST(read_api_status(client, tokens.read) == 200);
  BOOST_TEST(metrics_status(client, tokens.metrics) == 200);
  BOOST_TEST(session_status(client, admin_session) == 200);
  BOOST_TEST(count_logs(server, R"("event":"reloaded")") == 0u);
  BOOST_TEST(server.stop() == 0);
}

// A token appended under the old one (a rotation done in one file) and a token saved with a
// UTF-8 byte order mark are refused with the file's reason at a reload (start reads the files
// through the same load_secrets; this test checks the reload): the
// first kept the old token in force and refused the new without a word, the second made the
// mark part of the token, so the one the operator sends got 401 and every read-only console
// session ended (black-box attack).
BOOST_AUTO_TEST_CASE(a_second_line_or_a_byte_order_mark_in_a_token_file_is_refused) {
  hh::test::TempDir dir;
  const TokenFiles tokens;
  tokens.write(dir);
  ServerProcess server(dir, kAllTokensToml);
  HttpClient client(server.port());

  const std::string next_read = new_token("read");
  dir.write("read-token", tokens.read + "\n" + next_read + "\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reload_failed","reason":"read_api.token_file: )", 1));
  const std::string second = log_line(server, R"("event":"reload_failed")");
  BOOST_TEST(second.find("more than one line that is not blank") != std::string::npos, second);
  BOOST_TEST(second.find(tokens.read) == std::string::npos, second);
  BOOST_TEST(second.find(next_read) == std::string::npos, second);
  BOOST_TEST(read_api_status(client, tokens.read) == 200);

  dir.write("read-token", "\xEF\xBB\xBF" + next_read + "\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reload_failed","reason":"read_api.token_file: )", 2));
  const std::string bom = log_line(server, R"("event":"reload_failed")");
  BOOST_TEST(bom.find("starts with a UTF-8 byte order mark") != std::string::npos, bom);
  BOOST_TEST(read_api_status(client, tokens.read) == 200);
  BOOST_TEST(read_api_status(client, next_read) == 401);

  // A comment after the token is the file's business: the new token applies.
  dir.write("read-token", next_read + "\n# rotated for grafana\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("tokens_replaced":"read_api.token_file")", 1));
  BOOST_TEST(read_api_status(client, next_read) == 200);
  BOOST_TEST(read_api_status(client, tokens.read) == 401);

  // The metrics and admin tokens are read by the same rules.
  dir.write("read-token", tokens.read + "\n");
  dir.write("metrics-token", tokens.metrics + "\n# the new one\n" + new_token("metrics") + "\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reload_failed","reason":"metrics.token_file: )", 1));
  dir.write("metrics-token", tokens.metrics + "\n");
  dir.write("admin-token", "\xEF\xBB\xBF" + tokens.admin + "\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reload_failed","reason":"console.admin_token_file: )", 1));
  BOOST_TEST(sign_in(client, tokens.admin).status == 200);
  BOOST_TEST(count_logs(server, R"("event":"reloaded")") == 1u);  // the comment's
  BOOST_TEST(server.stop() == 0);
}

// The secret files a reload does not apply (the service's API key, a [[forward]] block's
// secret), rotated on disk: the reload names them in reload_needs_restart and systemd's
// status, where it said nothing and the operator believed them applied (black-box attack).
BOOST_AUTO_TEST_CASE(a_rotated_api_key_or_forward_secret_is_named_as_needing_a_restart) {
  hh::test::TempDir dir;
  dir.write("api-key", "key-" + new_token("one") + "\n");
  dir.write("backend.secret", hh::test::random_secret() + "\n");
  const std::string toml =
      "[service]\nbase_url = \"http://127.0.0.1:9\"\napi_key_file = \"api-key\"\n"
      "[[forward]]\nname = \"backend\"\nurl = \"http://127.0.0.1:9/hooks\"\nsecret_file = \"backend.secret\"\n";
  ServerProcess server(dir, toml);
  // Nothing changed: no restart needed (counted once the next reload's line is there, which
  // comes after anything this one writes).
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reloaded")", 1));

  dir.write("api-key", "key-" + new_token("two") + "\n");
  dir.write("backend.secret", hh::test::random_secret() + "\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reloaded")", 2));
  BOOST_TEST(wait_for_logs(
      server, R"("event":"reload_needs_restart","keys":"service.api_key_file, forward[0].secret_file")", 1));
  BOOST_TEST(count_logs(server, "reload_needs_restart") == 1u);

  // A new path for the key (with new contents) is named once, not twice.
  dir.write("api-key-2", "key-" + new_token("three") + "\n");
  rewrite_config(dir, server, std::string(toml).replace(toml.find("\"api-key\""), 9, "\"api-key-2\""));
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reloaded")", 3));
  BOOST_TEST(wait_for_logs(
      server, R"("event":"reload_needs_restart","keys":"service.api_key_file, forward[0].secret_file")", 2));
  BOOST_TEST(server.stop() == 0);
}

// A token file unset by a reload is withdrawn: the read API refuses every token (it stays
// mounted until a restart), /metrics needs none.
BOOST_AUTO_TEST_CASE(a_token_file_unset_by_a_reload_is_withdrawn) {
  hh::test::TempDir dir;
  const TokenFiles tokens;
  tokens.write(dir);
  const std::string toml = "refusal_delay_ms = 0\n[read_api]\ntoken_file = \"read-token\"\n"
                           "[metrics]\ntoken_file = \"metrics-token\"\n";
  ServerProcess server(dir, toml);
  HttpClient client(server.port());
  BOOST_TEST(read_api_status(client, tokens.read) == 200);
  BOOST_TEST(metrics_status(client, "") == 401);

  rewrite_config(dir, server, "refusal_delay_ms = 0\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reloaded")", 1));
  BOOST_TEST(log_line(server, R"("event":"reloaded")").find(R"("tokens_replaced":"read_api.token_file, metrics.token_file")") !=
             std::string::npos);
  BOOST_TEST(read_api_status(client, tokens.read) == 401);
  BOOST_TEST(metrics_status(client, "") == 200);
  BOOST_TEST(count_logs(server, "reload_needs_restart") == 0u);
  BOOST_TEST(server.stop() == 0);
}

// The read API's routes exist only when `serve` started with its token: one set later is
// named by reload_needs_restart (and the systemd status), not silently ignored.
BOOST_AUTO_TEST_CASE(a_read_api_turned_on_by_a_reload_needs_a_restart) {
  hh::test::TempDir dir;
  const TokenFiles tokens;
  tokens.write(dir);
  ServerProcess server(dir, "refusal_delay_ms = 0\n");
  HttpClient client(server.port());
  rewrite_config(dir, server, "refusal_delay_ms = 0\n[read_api]\ntoken_file = \"read-token\"\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reload_needs_restart","keys":"read_api.token_file")", 1));
  BOOST_TEST(read_api_status(client, tokens.read) == 404);
  BOOST_TEST(server.stop() == 0);
}

// A token read from $CREDENTIALS_DIRECTORY is systemd's copy made at start: a reload says
// so, naming it, since a token rotated in /etc/credstore does not reach it.
BOOST_AUTO_TEST_CASE(a_reload_says_which_tokens_are_credential_copies) {
  hh::test::TempDir dir;
  const std::filesystem::path folder = dir.path() / "credentials";
  std::filesystem::create_directories(folder);
  dir.write("credentials/read-token", new_token("read") + "\n");
  ServerProcess server(dir, "[read_api]\ntoken_file = \"read-token\"\n", std::chrono::seconds(20),
                       {"CREDENTIALS_DIRECTORY=" + folder.string()});
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reloaded")", 1));
  BOOST_TEST(count_logs(server, R"("event":"reload_credential_copies","keys":"read_api.token_file")") == 1u);
  BOOST_TEST(server.stop() == 0);
}

// The same for the secret files a reload does not apply: a key or forward secret read from
// the credentials is named, since a file rotated in /etc/credstore does not reach it.
BOOST_AUTO_TEST_CASE(a_reload_names_every_secret_read_from_the_credentials) {
  hh::test::TempDir dir;
  const std::filesystem::path folder = dir.path() / "credentials";
  std::filesystem::create_directories(folder);
  dir.write("credentials/api-key", "key-" + new_token("one") + "\n");
  dir.write("credentials/backend.secret", hh::test::random_secret() + "\n");
  ServerProcess server(dir,
                       "[service]\nbase_url = \"http://127.0.0.1:9\"\napi_key_file = \"api-key\"\n"
                       "[[forward]]\nname = \"backend\"\nurl = \"http://127.0.0.1:9/hooks\"\n"
                       "secret_file = \"backend.secret\"\n",
                       std::chrono::seconds(20), {"CREDENTIALS_DIRECTORY=" + folder.string()});
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reloaded")", 1));
  BOOST_TEST(count_logs(
                 server,
                 R"("event":"reload_credential_copies","keys":"service.api_key_file, forward[0].secret_file")") == 1u);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
