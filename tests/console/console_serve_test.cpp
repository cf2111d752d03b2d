// The console's routes on the real binary (console/console_routes.h): off unless enabled,
// sign-in with each token, failed sign-ins counted and answered 401 on a closed
// connection, the cookie's attributes, the CSP on every answer, nothing but the sign-in
// page without a session, CSRF and the admin role before an action's body is read.
#include <boost/test/unit_test.hpp>
#include <sqlite3.h>

#include <ctime>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

#include "tests/fake_service/fake_service.h"
#include "tests/support/database_probe.h"
#include "tests/support/http_client.h"
#include "tests/support/raw_connection.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(console_serve_test)

namespace {

using hh::test::Headers;
using hh::test::HttpClient;
using hh::test::HttpResponse;

const std::string kReadToken = "read-token-" + hh::test::random_secret().substr(6, 20);
const std::string kAdminToken = "admin-token-" + hh::test::random_secret().substr(6, 20);

std::string console_toml(const hh::test::TempDir& dir, bool admin = true) {
  dir.write("read-token", kReadToken + "\n");
  std::string toml = "[read_api]\ntoken_file = \"read-token\"\n[console]\nenabled = true\n";
  if (admin) {
    dir.write("admin-token", kAdminToken + "\n");
    toml += "admin_token_file = \"admin-token\"\n";
  }
  return toml;
}

std::string form_escape(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

HttpResponse sign_in(HttpClient& client, const std::string& token) {
  return client.request("POST", "/console/sign-in", "token=" + form_escape(token),
                        {{"Content-Type", "application/x-www-form-urlencoded"}, {"X-Requested-With", "test"}});
}

// "hh_console=<id>" from a sign-in's Set-Cookie.
std::string session_cookie(const HttpResponse& response) {
  const std::string set_cookie = response.header("set-cookie");
  return set_cookie.substr(0, set_cookie.find(';'));
}

std::string csrf_of(HttpClient& client, const std::string& cookie) {
  const HttpResponse session = client.get("/console/api/session", {{"Cookie", cookie}});
  std::smatch match;
  std::regex_search(session.body, match, std::regex("\"csrf_token\":\"([^\"]+)\""));
  return match[1];
}

// The headers of an admin's form action: signed in with the admin token, its CSRF token.
Headers admin_form_headers(HttpClient& client) {
  const std::string cookie = session_cookie(sign_in(client, kAdminToken));
  return {{"Content-Type", "application/x-www-form-urlencoded"},
          {"Cookie", cookie},
          {"X-CSRF-Token", csrf_of(client, cookie)}};
}

// A signed provider.connection.created of `user`, as the service sends it.
std::string connection_body(const std::string& user) {
  return R"({"event_type":"provider.connection.created","user_id":")" + user +
         R"(","client_user_id":"c1","data":{"provider":"oura","resource":"connection"}})";
}

// Posts connection_body(user) under `message_id`: stored (200) or the test stops.
void post_connection(HttpClient& client, const hh::test::ServerProcess& server, const std::string& user,
                     const std::string& message_id) {
  const std::string body = connection_body(user);
  const Headers sent = hh::test::signature_headers(server.secret(), message_id, std::to_string(std::time(nullptr)), body);
  BOOST_TEST_REQUIRE(client.request("POST", "/webhooks", body, sent).status == 200);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_console_is_off_unless_enabled) {
  hh::test::TempDir dir;
  dir.write("read-token", kReadToken + "\n");
  hh::test::ServerProcess server(dir, "[read_api]\ntoken_file = \"read-token\"\n");
  HttpClient client(server.port());
  BOOST_TEST(client.get("/console/").status == 404);
  BOOST_TEST(sign_in(client, kReadToken).status == 404);
}

BOOST_AUTO_TEST_CASE(the_console_needs_the_read_api) {
  hh::test::TempDir dir;
  dir.write("healthhook.toml", "");
  const auto result = hh::test::run_healthhook({"check-config", "--set", "console.enabled=true"});
  BOOST_TEST(result.exit_code != 0);
  BOOST_TEST(result.stderr_text.find("read_api.token_file") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(without_a_session_only_the_sign_in_page_loads) {
  hh::test::TempDir dir;
  hh::test::ServerProcess server(dir, console_toml(dir));
  HttpClient client(server.port());
  const HttpResponse page = client.get("/console/");
  BOOST_TEST(page.status == 200);
  BOOST_TEST(page.body.find("sign-in.js") != std::string::npos);
  BOOST_TEST(page.body.find("app.js") == std::string::npos);
  BOOST_TEST(page.header("content-security-policy").find("default-src 'self'") != std::string::npos);
  BOOST_TEST(page.header("content-security-policy").find("unsafe-inline") == std::string::npos);
  const HttpResponse script = client.get("/console/assets/sign-in.js");
  BOOST_TEST(script.status == 200);
  // HEAD with a matching ETag: a 304 without a Content-Length of its own (RFC 9110 §8.6).
  const auto revalidated = hh::test::raw_exchange(
      server.port(),
      "HEAD /console/assets/sign-in.js HTTP/1.1\r\nHost: x\r\nIf-None-Match: " + script.header("etag") +
          "\r\nConnection: close\r\n\r\n",
      std::chrono::seconds(5));
  BOOST_TEST(revalidated.starts_with("HTTP/1.1 304"), revalidated.received);
  BOOST_TEST(revalidated.received.find("Content-Length") == std::string::npos, revalidated.received);
  BOOST_TEST(client.get("/console/assets/console.css").status == 200);
  for (const char* target : {"/console/assets/app.js", "/console/api/session", "/console/api/overview",
                             "/console/v1/changes", "/console/v1/users/u1", "/console/assets/",
                             "/console/assets/no-such.js"}) {
    const HttpResponse refused = client.get(target);
    BOOST_TEST(refused.status == 401, target);
    BOOST_TEST(!refused.header("content-security-policy").empty(), target);
  }
  // A made-up cookie is no session.
  BOOST_TEST(client.get("/console/api/session", {{"Cookie", "hh_console=" + std::string(43, 'A')}}).status == 401);
  // The router's own answers under /console/ carry the same headers (405: no such method).
  for (const auto& [method, target] : {std::pair{"POST", "/console/v1/forwarding"}, std::pair{"OPTIONS", "/console/"},
                                       std::pair{"DELETE", "/console/api/session"}}) {
    HttpClient fresh(server.port());  // the 405 closes its connection
    const HttpResponse refused = fresh.request(method, target, "", {});
    BOOST_TEST(refused.status == 405, method << " " << target);
    BOOST_TEST(refused.header("x-frame-options") == "DENY", method << " " << target);
    BOOST_TEST(!refused.header("content-security-policy").empty(), method << " " << target);
  }
}

BOOST_AUTO_TEST_CASE(each_token_signs_in_as_its_role_and_a_wrong_one_is_counted) {
  hh::test::TempDir dir;
  hh::test::ServerProcess server(dir, console_toml(dir));
  HttpClient client(server.port());
  const HttpResponse wrong = sign_in(client, "not-the-token");
  BOOST_TEST(wrong.status == 401);
  BOOST_TEST(wrong.header("set-cookie").empty());
  BOOST_TEST(wrong.header("connection") == "close");
  // Without X-Requested-With (what a cross-site form sends): refused before the body.
  BOOST_TEST(client.request("POST", "/console/sign-in", "token=" + kReadToken,
                            {{"Content-Type", "application/x-www-form-urlencoded"}})
                 .status == 403);
  // An action without a session, and a form too large to be one: refused on their heads,
  // and, like every refusal anyone can send, counted (the summary log line reads these).
  {
    HttpClient fresh(server.port());
    BOOST_TEST(fresh.request("POST", "/console/api/actions/refresh", "", {}).status == 401);
  }
  const auto too_large = hh::test::raw_exchange(
      server.port(), "POST /console/sign-in HTTP/1.1\r\nHost: x\r\nX-Requested-With: x\r\nContent-Length: 1048576\r\n\r\n",
      std::chrono::seconds(5));
  BOOST_TEST(too_large.starts_with("HTTP/1.1 413"), too_large.received);
  const HttpResponse metrics = client.get("/metrics");
  for (const char* counted : {"console_sign_in", "bad_request", "unauthorized", "request_too_large"}) {
    BOOST_TEST(metrics.body.find("healthhook_refusals_total{reason=\"" + std::string(counted) + "\"} 1") !=
                   std::string::npos,
               counted << "\n" << metrics.body);
  }

  const HttpResponse read = sign_in(client, kReadToken);
  BOOST_TEST(read.status == 200);
  const std::string set_cookie = read.header("set-cookie");
  BOOST_TEST(set_cookie.find("HttpOnly") != std::string::npos);
  BOOST_TEST(set_cookie.find("SameSite=Strict") != std::string::npos);
  BOOST_TEST(set_cookie.find("Path=/console/") != std::string::npos);
  BOOST_TEST(set_cookie.find("Max-Age=28800") != std::string::npos);
  BOOST_TEST(set_cookie.find("Secure") == std::string::npos);  // plain HTTP here
  BOOST_TEST(read.body.find("\"role\":\"read\"") != std::string::npos);
  const std::string cookie = session_cookie(read);
  BOOST_TEST(client.get("/console/", {{"Cookie", cookie}}).body.find("app.js") != std::string::npos);
  BOOST_TEST(client.get("/console/v1/changes", {{"Cookie", cookie}}).status == 200);

  const HttpResponse admin = sign_in(client, kAdminToken);
  BOOST_TEST(admin.body.find("\"role\":\"admin\"") != std::string::npos);
  BOOST_TEST(server.wait_for_log("\"event\":\"console_sign_in\",\"token\":\"admin\"", std::chrono::seconds(5)));
}

// A connection that signed in with the read token still waits refusal_delay_ms for a
// wrong admin token's 401: signing in first made it trusted, and a holder of the read
// token guessed the admin token a thousand times a second (black-box pass).
BOOST_AUTO_TEST_CASE(a_sign_in_does_not_spare_the_next_wrong_token_its_wait) {
  hh::test::TempDir dir;
  // A delay that no wait below could miss: a delayed 401 comes 10 s late, we wait 2 s.
  hh::test::ServerProcess server(dir, "refusal_delay_ms = 10000\n" + console_toml(dir));
  const auto sign_in_request = [](const std::string& token) {
    const std::string body = "token=" + form_escape(token);
    return "POST /console/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
           "X-Requested-With: test\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  hh::test::RawConnection guesser(server.port(), "127.0.0.2");
  BOOST_TEST(guesser.send(sign_in_request(kReadToken)));
  BOOST_TEST(guesser.receive_response(std::chrono::seconds(5)).starts_with("HTTP/1.1 200"));
  BOOST_TEST(guesser.send(sign_in_request("admin-token-guess")));
  BOOST_TEST(guesser.receive_response(std::chrono::seconds(2)).empty(), "a 401 came before the wait");
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(actions_need_an_admin_session_and_its_csrf_token) {
  hh::test::TempDir dir;
  hh::test::ServerProcess server(dir, console_toml(dir));
  HttpClient client(server.port());
  const std::string form = "destination=backend";
  const Headers form_type = {{"Content-Type", "application/x-www-form-urlencoded"}};
  const std::string target = "/console/api/actions/jobs-requeue-dead";
  BOOST_TEST(client.request("POST", target, form, form_type).status == 401);

  const std::string read_cookie = session_cookie(sign_in(client, kReadToken));
  const std::string read_csrf = csrf_of(client, read_cookie);
  Headers read_headers = form_type;
  read_headers.push_back({"Cookie", read_cookie});
  read_headers.push_back({"X-CSRF-Token", read_csrf});
  BOOST_TEST(client.request("POST", target, form, read_headers).status == 403);
  BOOST_TEST(server.wait_for_log("\"event\":\"console_action_refused\",\"token\":\"read\"", std::chrono::seconds(5)));

  const std::string admin_cookie = session_cookie(sign_in(client, kAdminToken));
  const std::string admin_csrf = csrf_of(client, admin_cookie);
  Headers no_csrf = form_type;
  no_csrf.push_back({"Cookie", admin_cookie});
  const HttpResponse refused = client.request("POST", target, form, no_csrf);
  BOOST_TEST(refused.status == 403);
  BOOST_TEST(refused.body.find("CSRF") != std::string::npos);
  Headers other_csrf = no_csrf;
  other_csrf.push_back({"X-CSRF-Token", read_csrf});  // another session's token
  BOOST_TEST(client.request("POST", target, form, other_csrf).status == 403);
  Headers good = no_csrf;
  good.push_back({"X-CSRF-Token", admin_csrf});
  BOOST_TEST(client.request("POST", target, std::string(5000, 'x'), good).status == 413);
  // A chunked body, however small, has no size to check before it is read: 411, said so
  // (it was a 413 "console requests are small forms" for 15 bytes).
  const auto chunked = hh::test::raw_exchange(
      server.port(),
      "POST /console/sign-in HTTP/1.1\r\nHost: x\r\nX-Requested-With: test\r\nTransfer-Encoding: chunked\r\n"
      "Content-Type: application/x-www-form-urlencoded\r\n\r\nf\r\ndestination=zz1\r\n0\r\n\r\n",
      std::chrono::seconds(5));
  BOOST_TEST(chunked.starts_with("HTTP/1.1 411"), chunked.received);
  BOOST_TEST(chunked.received.find("need a Content-Length") != std::string::npos, chunked.received);
  const HttpResponse done = client.request("POST", target, "", good);
  BOOST_TEST(done.status == 200, done.body);
  {
    // Another process holds the write lock past commit_deadline_ms: said in words, not in
    // the store's own terms (on PostgreSQL they were the statement, attack stop 76).
    sqlite3* holder = nullptr;
    BOOST_REQUIRE(sqlite3_open(server.database().c_str(), &holder) == SQLITE_OK);
    BOOST_REQUIRE(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
    const HttpResponse busy = client.request("POST", target, "", good);
    sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(holder);
    BOOST_TEST(busy.status == 503, busy.body);
    BOOST_TEST(busy.body.find("the database is busy") != std::string::npos, busy.body);
  }
  // An action there is not: 404 (the GET prefix once made it a 405 "allowed: GET").
  const HttpResponse unknown = client.request("POST", "/console/api/actions/drop-database", "", good);
  BOOST_TEST(unknown.status == 404, unknown.body);
  BOOST_TEST(unknown.body.find("no such action") != std::string::npos, unknown.body);
  BOOST_TEST(server.wait_for_log("\"event\":\"console_action\",\"token\":\"admin\"", std::chrono::seconds(5)));
  // A field the action does not take is refused, nothing done: a misspelt job_id (or a JSON
  // body, read as one odd field) left the action without an id, and it requeued every dead job.
  for (const std::string& body : {std::string("jobid=5"), std::string(R"({"job_id":"5"})")}) {
    const HttpResponse misspelt = client.request("POST", target, body, good);
    BOOST_TEST(misspelt.status == 400, misspelt.body);
    BOOST_TEST(misspelt.body.find(body.starts_with("{") ? "a field whose name is not a word" : "unknown field \\\"jobid\\\"") !=
                   std::string::npos,
               misspelt.body);
    BOOST_TEST(misspelt.body.find("jobs-requeue-dead takes job_id") != std::string::npos, misspelt.body);
  }
  // An empty job_id, or one given twice, is no id: it requeued every dead job (the last of
  // a repeated field won, and an empty one read as absent).
  for (const std::string& body : {std::string("job_id="), std::string("job_id=1&job_id=")}) {
    const HttpResponse vague = client.request("POST", target, body, good);
    BOOST_TEST(vague.status == 400, vague.body);
    BOOST_TEST(vague.body.find(body == "job_id=" ? "job_id: expected a job id" : "a field is given twice") !=
                   std::string::npos,
               vague.body);
  }
  // Field names are the sender's: one that would end the line, or take a key of the line,
  // is left out of the action's log line; every line stays one JSON object.
  const HttpResponse odd = client.request(
      "POST", target, "a%0A%7B%22event%22%3A%22injected%22%7D=1&event=forged&error=none&note_1=kept", good);
  BOOST_TEST(odd.status == 400, odd.body);
  BOOST_TEST(server.wait_for_log("\"note_1\":\"kept\"", std::chrono::seconds(5)));
  // A long field is logged whole: the record says what was acted on (fields of more than
  // 128 characters were left out).
  std::string ids = "1";
  for (int i = 2; i <= 200; ++i) ids += "," + std::to_string(i);
  BOOST_TEST(client.request("POST", target, "note_2=" + ids, good).status == 400);
  BOOST_TEST(server.wait_for_log("\"note_2\":\"" + ids + "\"", std::chrono::seconds(5)));
  for (const std::string& line : server.log_lines()) {
    BOOST_TEST((line.starts_with("{\"level\":") && line.ends_with("}")), line);
    BOOST_TEST(line.find("injected") == std::string::npos, line);
    BOOST_TEST(line.find("forged") == std::string::npos, line);
  }

  // Signing out ends the session: its cookie and CSRF token no longer work.
  BOOST_TEST(client.request("POST", "/console/sign-out", "", good).status == 204);
  BOOST_TEST(client.get("/console/api/session", {{"Cookie", admin_cookie}}).status == 401);
}

BOOST_AUTO_TEST_CASE(backfill_and_refresh_check_their_input_as_the_commands_do) {
  hh::test::TempDir dir;
  // [service]'s key, so that follow-ups run and a backfill is taken; nothing listens on
  // port 9, so the jobs fail and wait for their retry (queued: "pending" when asked again).
  dir.write("api-key", "console-test-api-key\n");
  hh::test::ServerProcess server(dir, console_toml(dir) +
                                          "[service]\nbase_url = \"http://127.0.0.1:9\"\napi_key_file = \"api-key\"\n");
  HttpClient client(server.port());
  const Headers headers = admin_form_headers(client);
  const std::string user = "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2";
  const auto backfill = [&](const std::string& form) {
    return client.request("POST", "/console/api/actions/backfill", form, headers);
  };
  BOOST_TEST(backfill("user_id=not-a-uuid&resources=sleep&since=2024-05-01").body.find("not a UUID") !=
             std::string::npos);
  BOOST_TEST(backfill("user_id=" + user + "&resources=sleep&since=May").status == 400);
  // No provider given and none connected: nothing to ask (as `healthhook backfill`).
  const HttpResponse none = backfill("user_id=" + user + "&resources=sleep&since=2024-05-01&until=2024-05-02");
  BOOST_TEST(none.status == 400);
  BOOST_TEST(none.body.find("no connection") != std::string::npos, none.body);
  const HttpResponse queued =
      backfill("user_id=" + user + "&resources=sleep%2Cheartrate&since=2024-05-01&until=2024-05-02&provider=oura");
  BOOST_TEST(queued.status == 200, queued.body);
  BOOST_TEST(queued.body.find("\"outcome\":\"queued\"") != std::string::npos, queued.body);
  BOOST_TEST(hh::test::query_int(server.database(), "SELECT count(*) FROM jobs WHERE kind = 'backfill'") == 2);
  // The same request again names the same jobs: nothing new.
  BOOST_TEST(backfill("user_id=" + user + "&resources=sleep%2Cheartrate&since=2024-05-01&until=2024-05-02&provider=oura")
                 .body.find("\"outcome\":\"pending\"") != std::string::npos);
  BOOST_TEST(hh::test::query_int(server.database(), "SELECT count(*) FROM jobs WHERE kind = 'backfill'") == 2);
  // A window that ends before it starts is refused naming the fields sent: since alone
  // (the window ends today) was refused as "until is before since".
  const HttpResponse future = backfill("user_id=" + user + "&resources=sleep&since=2999-01-01&provider=oura");
  BOOST_TEST(future.status == 400);
  BOOST_TEST(future.body.find("since: 2999-01-01 is after today (") != std::string::npos, future.body);
  BOOST_TEST(future.body.find("until is before") == std::string::npos, future.body);
  const HttpResponse reversed = backfill("user_id=" + user + "&resources=sleep&since=2024-05-02&until=2024-05-01&provider=oura");
  BOOST_TEST(reversed.status == 400);
  BOOST_TEST(reversed.body.find("until: 2024-05-01 is before since 2024-05-02") != std::string::npos, reversed.body);
  // A resource not in the service's list is queued with the command's warning, said in
  // the answer (it was only counted: "warnings":1).
  const HttpResponse warned = backfill("user_id=" + user + "&resources=heart_flutter&since=2024-05-01&provider=oura");
  BOOST_TEST(warned.status == 200, warned.body);
  BOOST_TEST(warned.body.find("\"warnings\":[\"resources: \\\"heart_flutter\\\"") != std::string::npos, warned.body);
  // One that is no slug would fail at every attempt: refused, named by the form's field.
  const HttpResponse refused = backfill("user_id=" + user + "&resources=HEARTRATE&since=2024-05-01&provider=oura");
  BOOST_TEST(refused.status == 400);
  BOOST_TEST(refused.body.find("resources: \\\"HEARTRATE\\\" is not a resource slug") != std::string::npos,
             refused.body);
}

// Without [service]'s API key `serve` runs no follow-ups: a backfill's jobs wait (black-box
// pass: they were queued without a word). Queued with a warning that says so; a refresh,
// which runs now, is refused. A user id that is no UUID is named by the form's field, not
// the command's USER_ID.
BOOST_AUTO_TEST_CASE(without_the_api_key_a_backfill_is_queued_with_a_warning_and_a_refresh_refused) {
  hh::test::TempDir dir;
  hh::test::ServerProcess server(dir, console_toml(dir));
  HttpClient client(server.port());
  const Headers headers = admin_form_headers(client);
  const std::string user = "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2";
  for (const std::string action : {"backfill", "refresh"}) {
    const HttpResponse refused =
        client.request("POST", "/console/api/actions/" + action,
                       "user_id=" + user + (action == "backfill" ? "&resources=sleep&since=2024-05-01&provider=oura" : ""),
                       headers);
    BOOST_TEST_INFO(action);
    if (action == "backfill") {
      BOOST_TEST(refused.status == 200, refused.body);
      BOOST_TEST(refused.body.find("\"warnings\":[\"service.api_key_file is not set: serve runs no follow-ups without "
                                   "the service's API key, so these jobs wait until it is set\"") != std::string::npos,
                 refused.body);
    } else {
      BOOST_TEST(refused.status == 400);
      BOOST_TEST(refused.body.find("service.api_key_file is not set: the service needs the API key") != std::string::npos,
                 refused.body);
    }
    const HttpResponse not_uuid = client.request("POST", "/console/api/actions/" + action, "user_id=u1", headers);
    BOOST_TEST(not_uuid.status == 400);
    BOOST_TEST(not_uuid.body.find("user_id: \\\"u1\\\" is not a UUID") != std::string::npos, not_uuid.body);
    BOOST_TEST(not_uuid.body.find("USER_ID") == std::string::npos, not_uuid.body);
  }
  BOOST_TEST(hh::test::query_int(server.database(), "SELECT count(*) FROM jobs") == 1);
}

// A refresh the service answers with "success": false is a failed action (as the command
// exits 1), naming what the service listed; a successful one answers its lists.
BOOST_AUTO_TEST_CASE(a_refresh_the_service_says_did_not_succeed_fails) {
  hh::fake::FakeService service;
  hh::test::TempDir dir;
  dir.write("api-key", hh::fake::FakeOptions{}.api_key + "\n");
  hh::test::ServerProcess server(dir, console_toml(dir) + "[service]\nbase_url = \"" + service.base_url() +
                                          "\"\napi_key_file = \"api-key\"\n");
  HttpClient client(server.port());
  const Headers headers = admin_form_headers(client);
  const std::string form = "user_id=4a29dbc7-6db3-4c83-bfac-70a20a4be1b2";
  const HttpResponse done = client.request("POST", "/console/api/actions/refresh", form, headers);
  BOOST_TEST(done.status == 200, done.body);
  BOOST_TEST(done.body.find(R"("success":true,"refreshed":["oura/sleep","oura/activity"])") != std::string::npos,
             done.body);
  hh::fake::RefreshAnswer refused;
  refused.success = false;
  service.set_refresh_answer(refused);
  const HttpResponse failed = client.request("POST", "/console/api/actions/refresh", form, headers);
  BOOST_TEST(failed.status == 500, failed.body);
  BOOST_TEST(failed.body.find("the service reported that the refresh did not succeed") != std::string::npos,
             failed.body);
  BOOST_TEST(failed.body.find("garmin/workouts/stream") != std::string::npos, failed.body);
  BOOST_TEST(server.wait_for_log(R"("error":"the service reported)", std::chrono::seconds(10)));
  bool logged_as_error = false;
  for (const std::string& line : server.log_lines()) {
    if (line.find(R"("action":"refresh")") != std::string::npos && line.find(R"("error":"the service reported)") != std::string::npos) {
      logged_as_error = true;
    }
  }
  BOOST_TEST(logged_as_error);
}

// A 405's Allow lists the methods the path takes, each once: an action's said
// "POST, POST, GET, HEAD" (a route per action, another for unknown ones, and the GET prefix
// of the whole console), the sign-in's "POST, GET, HEAD" though a GET there was a 404.
// A GET (and so a HEAD) on those paths is the same 405, with a session or without.
BOOST_AUTO_TEST_CASE(a_405_allows_exactly_the_methods_of_its_path) {
  hh::test::TempDir dir;
  hh::test::ServerProcess server(dir, console_toml(dir));
  std::string cookie;
  {
    HttpClient client(server.port());
    cookie = session_cookie(sign_in(client, kAdminToken));
  }
  const auto refused = [&](const std::string& method, const std::string& target, const Headers& headers) {
    HttpClient fresh(server.port());  // a 405 closes its connection
    return fresh.request(method, target, "", headers);
  };
  for (const std::string target : {"/console/api/actions/refresh", "/console/api/actions/no-such-action",
                                   "/console/sign-in", "/console/sign-out"}) {
    for (const std::string method : {"PUT", "DELETE", "GET"}) {
      for (const Headers& headers : {Headers{}, Headers{{"Cookie", cookie}}}) {
        const HttpResponse answer = refused(method, target, headers);
        BOOST_TEST(answer.status == 405, method << " " << target << " " << answer.body);
        BOOST_TEST(answer.header("allow") == "POST", method << " " << target);
        BOOST_TEST(answer.header("x-frame-options") == "DENY", method << " " << target);
        BOOST_TEST(answer.body.find("allowed: POST\"") != std::string::npos, answer.body);
      }
    }
  }
  // A path that takes GET still says GET and HEAD.
  const HttpResponse read_page = refused("PUT", "/console/v1/forwarding", {{"Cookie", cookie}});
  BOOST_TEST(read_page.status == 405);
  BOOST_TEST(read_page.header("allow") == "GET, HEAD");
  BOOST_TEST(server.stop() == 0);
}

// The entries of a destination no [[forward]] block names: 404, not an empty page that
// reads as "nothing waiting" (black-box pass); but one whose block was removed while the
// outbox held its entries lists them, as /v1/forwarding lists its figures (the console's
// overview said "Could not load" for every destination).
BOOST_AUTO_TEST_CASE(a_removed_destinations_entries_are_listed_and_an_unknown_ones_are_404) {
  hh::test::TempDir dir;
  dir.write("backend-secret", hh::test::random_secret() + "\n");
  // Nothing listens on port 9: the entry stays pending.
  const std::string forward_block =
      "[[forward]]\nname = \"gone\"\nurl = \"http://127.0.0.1:9/hooks\"\nsecret_file = \"backend-secret\"\n"
      "mode = \"deliveries\"\n";
  hh::test::ServerProcess server(dir, console_toml(dir) + forward_block);
  {
    HttpClient client(server.port());
    post_connection(client, server, "u-gone", "msg-gone");
  }
  BOOST_TEST_REQUIRE(server.stop() == 0);
  BOOST_TEST_REQUIRE(hh::test::query_int(server.database(), "SELECT count(*) FROM outbox WHERE destination = 'gone'") == 1);
  // Started again without the block.
  std::ifstream in(server.config_file());
  std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  config.erase(config.find("[[forward]]"));
  dir.write("healthhook.toml", config);
  server.restart();

  HttpClient client(server.port());
  const std::string cookie = session_cookie(sign_in(client, kReadToken));
  const HttpResponse figures = client.get("/console/v1/forwarding", {{"Cookie", cookie}});
  BOOST_TEST(figures.body.find(R"("destination":"gone","pending":1)") != std::string::npos, figures.body);
  BOOST_TEST(figures.body.find(R"("configured":false)") != std::string::npos, figures.body);
  const HttpResponse removed = client.get("/console/v1/forwarding/gone/entries?state=pending&limit=1", {{"Cookie", cookie}});
  BOOST_TEST(removed.status == 200, removed.body);
  BOOST_TEST(removed.body.find(R"("destination":"gone")") != std::string::npos, removed.body);
  const HttpResponse unknown = client.get("/console/v1/forwarding/nosuch/entries", {{"Cookie", cookie}});
  BOOST_TEST(unknown.status == 404, unknown.body);
  BOOST_TEST(unknown.body.find("no [[forward]] destination") != std::string::npos, unknown.body);
  BOOST_TEST(server.stop() == 0);
}

// One delivery's outbox entries by its seq, whatever else waits: the delivery page read a
// state's first 1,000 entries and kept its seq's, so a delivery past them showed "None
// waiting" (black-box pass: a paused destination with 1,085 pending).
BOOST_AUTO_TEST_CASE(a_deliverys_outbox_entries_are_listed_by_its_seq) {
  hh::test::TempDir dir;
  dir.write("backend-secret", hh::test::random_secret() + "\n");
  // Nothing listens on port 9: the entries stay pending.
  const std::string forward_block =
      "[[forward]]\nname = \"waiting\"\nurl = \"http://127.0.0.1:9/hooks\"\nsecret_file = \"backend-secret\"\n"
      "mode = \"deliveries\"\n";
  hh::test::ServerProcess server(dir, console_toml(dir) + forward_block);
  HttpClient client(server.port());
  for (int i = 0; i < 3; ++i) post_connection(client, server, "u-seq-" + std::to_string(i), "msg-seq-" + std::to_string(i));
  const int64_t seq = hh::test::query_int(server.database(), "SELECT seq FROM inbox WHERE message_id = 'msg-seq-1'");
  const std::string cookie = session_cookie(sign_in(client, kReadToken));
  const auto entries = [&](const std::string& query) {
    return client.get("/console/v1/forwarding/waiting/entries?" + query, {{"Cookie", cookie}});
  };
  // The entries are made once the delivery is applied: waited for, bounded.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (hh::test::query_int(server.database(), "SELECT count(*) FROM outbox WHERE destination = 'waiting'") < 3 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (const std::string& query : {"seq=" + std::to_string(seq), "state=pending&seq=" + std::to_string(seq)}) {
    const HttpResponse one = entries(query);
    BOOST_TEST(one.status == 200, one.body);
    BOOST_TEST(one.body.find("\"seq\":" + std::to_string(seq) + ",") != std::string::npos, one.body);
    BOOST_TEST(one.body.find("msg-seq-1") != std::string::npos, one.body);
    BOOST_TEST(one.body.find("msg-seq-0") == std::string::npos, one.body);
    BOOST_TEST(one.body.find("msg-seq-2") == std::string::npos, one.body);
  }
  BOOST_TEST(entries("state=dead&seq=" + std::to_string(seq)).body.find("\"items\":[]") != std::string::npos);
  for (const std::string bad : {"seq=x", "seq=0", "seq="}) {
    const HttpResponse refused = entries(bad);
    BOOST_TEST(refused.status == 400, bad << " " << refused.body);
  }
  BOOST_TEST(server.stop() == 0);
}

// An id "." or ".." cannot be in a browser's path (its URL parser takes the segment, %2E
// too, for a step: /v1/deliveries/.. is /v1/), so the console reads such a page by a target
// in the query. A session's only, a target under /v1/ only.
BOOST_AUTO_TEST_CASE(the_read_api_is_read_by_a_target_in_the_query) {
  hh::test::TempDir dir;
  hh::test::ServerProcess server(dir, console_toml(dir));
  HttpClient client(server.port());
  post_connection(client, server, "u-dots", "..");
  const std::string target = "/console/api/read?target=%2Fv1%2Fdeliveries%2F%252E%252E";
  BOOST_TEST(client.get(target).status == 401);
  const std::string cookie = session_cookie(sign_in(client, kReadToken));
  const HttpResponse read = client.get(target, {{"Cookie", cookie}});
  BOOST_TEST(read.status == 200, read.body);
  BOOST_TEST(read.body.find(R"("message_id":"..")") != std::string::npos, read.body);
  const HttpResponse changes = client.get(target + "%2Fchanges", {{"Cookie", cookie}});
  BOOST_TEST(changes.status == 200, changes.body);
  for (const std::string bad : {"/console/api/read", "/console/api/read?target=%2Fmetrics",
                                "/console/api/read?target=%2Fv1%2Fchanges&limit=1"}) {
    const HttpResponse refused = client.get(bad, {{"Cookie", cookie}});
    BOOST_TEST(refused.status == 400, bad << " " << refused.body);
  }
  BOOST_TEST(server.stop() == 0);
}

// The console's delivery page shows which signatures a delivery carried, never their
// values, nor those of credentials a proxy or a sender added; the bearer-token read API
// keeps them (a backend may verify them again).
BOOST_AUTO_TEST_CASE(the_consoles_delivery_page_masks_signature_values) {
  hh::test::TempDir dir;
  hh::test::ServerProcess server(dir, console_toml(dir));
  HttpClient client(server.port());
  const std::string body = connection_body("u-mask");
  const std::string timestamp = std::to_string(std::time(nullptr));
  Headers sent = hh::test::signature_headers(server.secret(), "msg-mask", timestamp, body);  // svix-* headers
  std::string signature;
  for (const auto& [name, value] : sent) {
    if (name == "svix-signature") signature = value;
  }
  BOOST_TEST_REQUIRE(signature.starts_with("v1,"));
  // With credentials a proxy or a sender added: masked too.
  Headers with_credentials = sent;
  with_credentials.emplace_back("Content-Type", "application/json");
  with_credentials.emplace_back("Authorization", "Bearer proxy-credential-1");
  with_credentials.emplace_back("X-Upstream-Token", "proxy-credential-2");
  with_credentials.emplace_back("X-Functions-Key", "proxy-credential-3");
  with_credentials.emplace_back("Ocp-Apim-Subscription-Key", "proxy-credential-4");
  with_credentials.emplace_back("X-Session-Id", "proxy-credential-5");
  // A value with a blank (a header sent twice arrives joined by ", "; a cookie's pairs): its
  // first word was kept as if it were a scheme.
  with_credentials.emplace_back("X-Api-Key", "proxy-credential-6, proxy-credential-6b");
  with_credentials.emplace_back("Cookie", "sid=proxy-credential-7; theme=dark");
  with_credentials.emplace_back("X-Auth", "proxy-credential-8 rest");
  with_credentials.emplace_back("Cf-Access-Jwt-Assertion", "proxy-credential-9");
  with_credentials.emplace_back("DPoP", "proxy-credential-10");
  // Signatures under names that do not end in "signature" (GitHub-style, a relay's):
  // shown as sent once (attack, stop 82).
  with_credentials.emplace_back("X-Hub-Signature-256", "sha256=proxy-credential-11");
  with_credentials.emplace_back("X-Signature-Ed25519", "proxy-credential-12");
  BOOST_TEST_REQUIRE(client.request("POST", "/webhooks", body, with_credentials).status == 200);
  const std::string value = signature.substr(3);

  const std::string cookie = session_cookie(sign_in(client, kReadToken));
  const HttpResponse console = client.get("/console/v1/deliveries/msg-mask", {{"Cookie", cookie}});
  BOOST_TEST(console.status == 200, console.body);
  BOOST_TEST(console.body.find(value) == std::string::npos, console.body);
  const bool masked = console.body.find("\"svix-signature\":\"v1,\\u2022") != std::string::npos ||
                      console.body.find("\"svix-signature\":\"v1,\xE2\x80\xA2") != std::string::npos;
  BOOST_TEST(masked, console.body);
  BOOST_TEST(console.body.find("\"svix-id\":\"msg-mask\"") != std::string::npos, console.body);
  BOOST_TEST(console.body.find("proxy-credential") == std::string::npos, console.body);
  const bool scheme_kept = console.body.find("\"Bearer \\u2022") != std::string::npos ||
                           console.body.find("\"Bearer \xE2\x80\xA2") != std::string::npos;
  BOOST_TEST(scheme_kept, console.body);

  const HttpResponse api = client.get("/v1/deliveries/msg-mask", {{"Authorization", "Bearer " + kReadToken}});
  BOOST_TEST(api.status == 200, api.body);
  BOOST_TEST(api.body.find(value) != std::string::npos, api.body);
  BOOST_TEST(api.body.find("proxy-credential-1") != std::string::npos, api.body);
}

BOOST_AUTO_TEST_SUITE_END()
