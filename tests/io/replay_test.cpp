// Capture and replay end to end, with the real binary: capture → replay into a fresh
// database rebuilds the same tables; re-sending to a running receiver (replay --to) gives
// the same tables as offline replay; malformed lines are reported as file:line and the
// rest go on; signatures can be checked offline.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <sqlite3.h>

#include "receiver/signature/webhook_signature.h"
#include "replay/capture_file.h"
#include "tests/fake_service/test_certificates.h"
#include "tests/http_client/scripted_server.h"
#include "tests/io/io_fixtures.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(replay_test)

using namespace hh::test;
using namespace hh::test::io;
using hh::replay::CaptureHeader;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A capture line signed with `secret`, as the service would have sent it.
std::string signed_line(const std::string& secret, const std::string& id, int64_t timestamp, const std::string& body) {
  auto signature = hh::signature::sign(secret, id, std::to_string(timestamp), body);
  BOOST_REQUIRE(signature.ok());
  const std::vector<CaptureHeader> headers = {{"content-type", "application/json"},
                                              {"svix-id", id},
                                              {"svix-timestamp", std::to_string(timestamp)},
                                              {"svix-signature", *signature}};
  std::string line;
  hh::replay::append_capture_line(line, id, timestamp, headers, body);
  return line;
}

// Deliveries for several users, with updates of the same rows inside each user, so that
// order matters within a user (latest wins) and not across users.
std::string multi_user_capture(const std::string& secret) {
  std::string file;
  int64_t ts = 1700000000;
  int n = 0;
  for (int round = 0; round < 3; ++round) {
    for (int u = 1; u <= 4; ++u) {
      const std::string user = "user-" + std::to_string(u);
      const std::string id = [&] { return "msg_" + std::to_string(++n); }();
      file += signed_line(secret, id, ts++,
                          samples_body(user, "heartrate", u % 2 ? "oura" : "garmin",
                                       {{"2024-05-16T10:00:00+00:00", 60 + round * 10 + u},
                                        {"2024-05-16T10:0" + std::to_string(round + 1) + ":00+00:00", 70 + u}}));
      file += signed_line(secret, "msg_" + std::to_string(++n), ts++,
                          sleep_body(user, "sleep-" + user, 50 + round * 10 + u, "2024-05-15T22:30:00+00:00"));
      file += signed_line(secret, "msg_" + std::to_string(++n), ts++, connection_body(user, "fitbit", round % 2 == 1));
    }
  }
  return file;
}

// A derived_tables() dump split into its tables: "== name" → rows.
std::map<std::string, std::string> sections(const std::string& dump_text) {
  std::map<std::string, std::string> out;
  std::istringstream in(dump_text);
  std::string table;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("== ")) {
      table = line.substr(3);
      out[table];
    } else {
      out[table] += line + "\n";
    }
  }
  return out;
}

ProcessResult replay_offline(const std::vector<std::string>& files, const std::string& database,
                             const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"replay"};
  args.insert(args.end(), files.begin(), files.end());
  args.insert(args.end(), {"--database", database});
  args.insert(args.end(), extra.begin(), extra.end());
  return run_healthhook(args);
}


// `capture` replayed offline into `offline`, then re-sent to `server` with `concurrency`
// lanes; the re-send's result (the offline replay must succeed).
ProcessResult replay_both_ways(const TempDir& dir, const ServerProcess& server, const std::string& capture,
                               const std::string& offline, int concurrency) {
  auto replayed = replay_offline({capture}, offline);
  BOOST_TEST_REQUIRE(replayed.exit_code == 0, replayed.stderr_text);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/webhooks";
  return run_healthhook(
      {"replay", capture, "--to", url, "--secret-file", dir.file("secret"), "--concurrency", std::to_string(concurrency)});
}
}  // namespace

BOOST_AUTO_TEST_CASE(capture_then_replay_into_a_fresh_database_rebuilds_identical_tables) {
  TempDir dir;
  std::string original;
  {
    ServerProcess server(dir);
    original = server.database();
    HttpClient client(server.port());
    const std::vector<std::pair<std::string, std::string>> deliveries = {
        {"m_steps", samples_body("u1", "steps", "oura", {{"2024-05-16T10:00:00+00:00", 100}, {"2024-05-16T11:00:00+00:00", 200}}, "count")},
        {"m_hr", samples_body("u1", "heartrate", "oura", {{"2024-05-16T10:00:00+02:00", 60}, {"2024-05-16T10:01:00+02:00", 61}})},
        {"m_sleep1", sleep_body("u1", "sl-1", 70, "2024-05-15T22:00:00+00:00")},
        {"m_sleep2", sleep_body("u1", "sl-1", 85, "2024-05-15T22:00:00+00:00")},
        {"m_steps2", samples_body("u1", "steps", "oura", {{"2024-05-16T11:00:00+00:00", 250}}, "count")},
        {"m_conn", connection_body("u2", "garmin", false)},
        {"m_conn_err", connection_body("u2", "garmin", true)},
        {"m_not_json", "this is not json"},
        {"m_binary", std::string("\xff\xfe{\"event_type\":1}\x00", 18)},
        {"m_bp", R"({"event_type":"daily.data.blood_pressure.created","data":{"source":{"provider":"omron","type":"cuff"},"data":[{"timezone_offset":-18000,"unit":"mmHg","grouping":{"reading_id":"r-1"},"timestamp":"2024-02-01T07:30:00-05:00","systolic":121,"diastolic":79.5}]},"user_id":"u3"})"},
        {"m_stream", R"({"event_type":"daily.data.workout_stream.created","data":{"provider_id":"5127","sport":{"id":57,"name":"Run","slug":"run"},"workout_id":"w-1","source":{"provider":"fitbit"},"user_id":"u1"},"user_id":"u1"})"},
        {"m_hypnogram", R"({"event_type":"daily.data.hypnogram.created","data":{}})"},
        {"m_ping", R"({"event_type":"ping","data":{}})"},
    };
    for (const auto& [id, body] : deliveries) BOOST_TEST(client.post_webhook(server.secret(), id, body).status == 200, id);
    BOOST_TEST(client.post_webhook(server.secret(), "m_steps", deliveries[0].second).status == 200);  // a retry
    wait_until_processed(original);
    BOOST_TEST(server.stop() == 0);
  }
  BOOST_REQUIRE(query_int(original, "SELECT count(*) FROM summaries") == 1);  // the fixture is what it claims

  const std::string capture = dir.file("capture.jsonl");
  auto captured = run_healthhook({"capture", "--database", original, "--output", capture});
  BOOST_TEST_REQUIRE(captured.exit_code == 0, captured.stderr_text);
  BOOST_TEST(captured.stdout_text.empty());

  const std::string fresh = dir.file("fresh.db");
  auto replayed = replay_offline({capture}, fresh);
  BOOST_TEST_REQUIRE(replayed.exit_code == 0, replayed.stderr_text);
  BOOST_TEST(replayed.stdout_text.find(R"("lines":13,"stored":13,"duplicates":0,"failed":0)") != std::string::npos,
             replayed.stdout_text);

  // Table by table (each table's section of the dump compared on its own).
  const std::string before = derived_tables(original, /*with_positions=*/true);
  const std::string after = derived_tables(fresh, /*with_positions=*/true);
  const auto by_table = sections(before);
  BOOST_TEST(!by_table.at("samples_named").empty());
  BOOST_TEST(!by_table.at("changes").empty());
  const auto replayed_tables = sections(after);
  BOOST_TEST(by_table.size() == replayed_tables.size());
  for (const auto& [table, rows] : by_table) BOOST_TEST(rows == replayed_tables.at(table), table);

  // The inbox too: same ids, signed timestamps, headers, bytes and outcomes, in the same order.
  const std::string inbox =
      "SELECT seq, message_id, webhook_timestamp, event_type, status, family, error, headers, hex(body) "
      "FROM deliveries ORDER BY seq";
  BOOST_TEST(dump(original, inbox) == dump(fresh, inbox));
  // And a capture of the replayed database is the same file, byte for byte.
  const std::string again = dir.file("again.jsonl");
  BOOST_TEST(run_healthhook({"capture", "--database", fresh, "-o", again}).exit_code == 0);
  BOOST_TEST(read_file(capture) == read_file(again));
  BOOST_TEST(read_file(capture).find(R"("id":"m_binary","timestamp":)") != std::string::npos);
  BOOST_TEST(read_file(capture).find(R"("body_base64":)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(malformed_lines_report_file_and_line_and_the_rest_are_stored) {
  TempDir dir;
  const std::string good1 = signed_line(random_secret(), "g1", 1700000000,
                                        samples_body("u1", "steps", "oura", {{"2024-05-16T10:00:00Z", 1}}, "count"));
  const std::string good2 = signed_line(random_secret(), "g2", 1700000001,
                                        samples_body("u1", "steps", "oura", {{"2024-05-16T11:00:00Z", 2}}, "count"));
  const std::string path = dir.write("cap.jsonl", good1 + "{\"id\":\"x\",\"timestamp\":1}\n" + good2 + "[]\n");
  const std::string db = dir.file("r.db");
  auto result = replay_offline({path}, db);
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text.find(path + ":2: body: missing (or body_base64)\n") != std::string::npos,
             result.stderr_text);
  BOOST_TEST(result.stderr_text.find(path + ":4: not a JSON object\n") != std::string::npos, result.stderr_text);
  // Every line is counted, the malformed ones too.
  BOOST_TEST(result.stdout_text.find(R"("lines":4,"stored":2,"duplicates":0,"failed":2)") != std::string::npos,
             result.stdout_text);
  BOOST_TEST(query_int(db, "SELECT count(*) FROM samples") == 2);

  // Again (and an interrupted replay resumed): known message ids change nothing.
  const std::string clean = dir.write("clean.jsonl", good1 + good2);
  auto again = replay_offline({clean, "-"}, db);  // "-": empty standard input
  BOOST_TEST(again.exit_code == 0, again.stderr_text);
  BOOST_TEST(again.stdout_text.find(R"("lines":2,"stored":0,"duplicates":2,"failed":0)") != std::string::npos,
             again.stdout_text);
  BOOST_TEST(query_int(db, "SELECT count(*) FROM deliveries") == 2);
}

// A body larger than max_body_bytes is not stored offline, as the receiver answers it 413
// when the capture is re-sent with --to: both ways give the same tables.
BOOST_AUTO_TEST_CASE(a_body_larger_than_max_body_bytes_is_refused_as_the_receiver_refuses_it) {
  TempDir dir;
  const std::string secret = random_secret();
  std::vector<std::pair<std::string, double>> many;
  for (int minute = 0; minute < 40; ++minute) {
    many.push_back({"2024-05-16T10:" + std::string(minute < 10 ? "0" : "") + std::to_string(minute) + ":00Z", minute});
  }
  const std::string large_body = samples_body("u1", "heartrate", "oura", many);
  BOOST_REQUIRE(large_body.size() > 2048u);
  const std::string small = signed_line(secret, "small", 1700000000,
                                        samples_body("u1", "steps", "oura", {{"2024-05-16T10:00:00Z", 1}}, "count"));
  const std::string path = dir.write("cap.jsonl", small + signed_line(secret, "large", 1700000001, large_body));
  const std::string config = dir.write("limits.toml", "max_body_bytes = 2048\n");
  const std::string db = dir.file("r.db");
  auto result = replay_offline({path}, db, {"--config", config});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text.find(path + ":2: body: " + std::to_string(large_body.size()) +
                                     " bytes, larger than max_body_bytes (2048): the receiver refuses it (413)") !=
                 std::string::npos,
             result.stderr_text);
  BOOST_TEST(result.stdout_text.find(R"("lines":2,"stored":1,"duplicates":0,"failed":1)") != std::string::npos,
             result.stdout_text);
  BOOST_TEST(query_int(db, "SELECT count(*) FROM deliveries") == 1);

  // Re-sent to a receiver with the same limit: the same line is refused, the same row stored.
  ServerProcess server(dir, "max_body_bytes = 2048\n");
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/webhooks";
  auto sent = run_healthhook({"replay", path, "--to", url, "--secret-file", dir.file("secret")});
  BOOST_TEST(sent.exit_code == 1);
  BOOST_TEST(sent.stderr_text.find(path + ":2: HTTP 413") != std::string::npos, sent.stderr_text);
  wait_until_processed(server.database());
  BOOST_TEST(derived_tables(server.database(), false) == derived_tables(db, false));
}

BOOST_AUTO_TEST_CASE(replay_usage_errors_exit_2) {
  TempDir dir;
  const std::string path = dir.write("cap.jsonl", "");
  auto missing = run_healthhook({"replay", dir.file("nope.jsonl"), "--database", dir.file("x.db")});
  BOOST_TEST(missing.exit_code == 2);
  BOOST_TEST(missing.stderr_text.find("nope.jsonl") != std::string::npos, missing.stderr_text);
  // A folder given as the capture: the same mistake, the same exit status.
  auto folder = run_healthhook({"replay", dir.path(), "--database", dir.file("x.db")});
  BOOST_TEST(folder.exit_code == 2, folder.stderr_text);
  BOOST_TEST(folder.stderr_text.find("Is a directory") != std::string::npos, folder.stderr_text);
  // And a database file that is not there, for every command that reads one.
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"jobs"}, {"forward", "show", "1"}, {"forward", "list"}, {"query", "samples"},
        {"rebuild"}, {"capture"}, {"purge-user", "u1"}}) {
    std::vector<std::string> args = command;
    args.insert(args.end(), {"--database", dir.file("nope.db")});
    auto run = run_healthhook(args);
    BOOST_TEST(run.exit_code == 2, command[0] << ": " << run.stderr_text);
    BOOST_TEST(run.stderr_text.ends_with("database: " + dir.file("nope.db") + " does not exist\n"), run.stderr_text);
    BOOST_TEST(!std::filesystem::exists(dir.file("nope.db")), command[0]);
  }
  auto no_secret = run_healthhook({"replay", path, "--to", "http://127.0.0.1:1/webhooks"});
  BOOST_TEST(no_secret.exit_code == 2);
  BOOST_TEST(no_secret.stderr_text.find("--secret-file") != std::string::npos, no_secret.stderr_text);
  const std::string secret = dir.write("secret", random_secret());
  auto user_info = run_healthhook({"replay", path, "--to", "https://me:pw@127.0.0.1:1/", "--secret-file", secret});
  BOOST_TEST(user_info.exit_code == 2);
  BOOST_TEST(user_info.stderr_text.find("user information") != std::string::npos, user_info.stderr_text);
  BOOST_TEST(user_info.stderr_text.find("pw") == std::string::npos, user_info.stderr_text);
  auto stray = run_healthhook({"replay", path, "--database", dir.file("x.db"), "--allow-plain-http"});
  BOOST_TEST(stray.exit_code == 2);
  // --concurrency offline was taken and ignored.
  auto stray_concurrency = run_healthhook({"replay", path, "--database", dir.file("x.db"), "--concurrency", "4"});
  BOOST_TEST(stray_concurrency.exit_code == 2);
  BOOST_TEST(stray_concurrency.stderr_text == "healthhook replay: --concurrency is used with --to\n",
             stray_concurrency.stderr_text);
  auto verify = run_healthhook({"replay", path, "--database", dir.file("x.db"), "--verify-signatures"});
  BOOST_TEST(verify.exit_code == 2);
  // --batch out of its range: one line and 2, never an abort (a negative count once became
  // a huge size and threw from the reservation).
  for (const std::string batch : {"0", "-1", "100001", "18446744073709551615", "4294967296"}) {
    auto bad = run_healthhook({"replay", path, "--database", dir.file("x.db"), "--batch", batch});
    BOOST_TEST(bad.exit_code == 2, batch << ": " << bad.stderr_text);
    BOOST_TEST(bad.stderr_text.find("--batch") != std::string::npos, bad.stderr_text);
    BOOST_TEST(std::count(bad.stderr_text.begin(), bad.stderr_text.end(), '\n') == 1, bad.stderr_text);
  }
  // A folder given as the database is called one (SQLite said "disk I/O error").
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"query", "samples", "--database", dir.path().string()},
        std::vector<std::string>{"replay", path, "--database", dir.path().string()}}) {
    auto folder = run_healthhook(command);
    BOOST_TEST(folder.exit_code != 0);
    BOOST_TEST(folder.stderr_text.find("it is a folder; give the database file's path") != std::string::npos,
               folder.stderr_text);
  }
  // --batch is offline's: with --to it is refused, not ignored.
  auto sent_batch = run_healthhook({"replay", path, "--to", "http://127.0.0.1:9/webhooks", "--secret-file",
                                    dir.write("batch-secret", "whsec_Y29uZmln\n"), "--batch", "5"});
  BOOST_TEST(sent_batch.exit_code == 2, sent_batch.stderr_text);
  BOOST_TEST(sent_batch.stderr_text.find("--batch is for offline replay") != std::string::npos, sent_batch.stderr_text);
}

// Captured deliveries are health data: `replay --to` sends them in clear text only to this
// machine, unless the operator says the network is private (--allow-plain-http). The
// refusal comes before anything is read or sent, and shows the URL without its query.
BOOST_AUTO_TEST_CASE(replay_to_refuses_plain_http_to_a_host_that_is_not_loopback) {
  TempDir dir;
  const std::string capture = dir.write("cap.jsonl", "");
  const std::string secret = dir.write("secret", random_secret());
  // .invalid never resolves (RFC 6761): a refusal, not a resolution failure, is what answers.
  auto refused =
      run_healthhook({"replay", capture, "--to", "http://receiver.invalid:8080/webhooks?token=t0ken", "--secret-file",
                      secret});
  BOOST_TEST(refused.exit_code == 2);
  BOOST_TEST(refused.stderr_text.find("--to http://receiver.invalid:8080/webhooks: plain http://") != std::string::npos,
             refused.stderr_text);
  BOOST_TEST(refused.stderr_text.find("--allow-plain-http") != std::string::npos, refused.stderr_text);
  BOOST_TEST(refused.stderr_text.find("t0ken") == std::string::npos, refused.stderr_text);
  // Allowed, it goes on to the network (and fails there: the name does not resolve).
  auto allowed = run_healthhook({"replay", capture, "--to", "http://receiver.invalid:8080/webhooks", "--secret-file",
                                 secret, "--allow-plain-http"});
  BOOST_TEST(allowed.stderr_text.find("plain http://") == std::string::npos, allowed.stderr_text);
  BOOST_TEST(allowed.stderr_text.find("receiver.invalid") != std::string::npos, allowed.stderr_text);
  // Loopback needs no flag.
  for (const char* url : {"http://127.0.0.1:1/webhooks", "http://localhost:1/webhooks", "http://[::1]:1/webhooks"}) {
    auto local = run_healthhook({"replay", capture, "--to", url, "--secret-file", secret});
    BOOST_TEST(local.stderr_text.find("plain http://") == std::string::npos, url << ": " << local.stderr_text);
  }
}

BOOST_AUTO_TEST_CASE(offline_signature_check_uses_the_lines_own_timestamp) {
  TempDir dir;
  const std::string secret = random_secret();
  const std::string secret_file = dir.write("secret", secret + "\n");
  const std::string other_file = dir.write("other", random_secret() + "\n");
  // Signed years ago: still valid offline (the age is not checked).
  const std::string path =
      dir.write("cap.jsonl", signed_line(secret, "s1", 1500000000, samples_body("u1", "steps", "oura", {{"2024-05-16T10:00:00Z", 1}}, "count")) +
                                 signed_line(random_secret(), "s2", 1500000001, "{}"));
  auto ok = replay_offline({path}, dir.file("a.db"), {"--verify-signatures", "--secret-file", secret_file});
  BOOST_TEST(ok.exit_code == 1);  // s2 was signed with another secret
  BOOST_TEST(ok.stderr_text.find(path + ":2: signature: ") != std::string::npos, ok.stderr_text);
  BOOST_TEST(query_int(dir.file("a.db"), "SELECT count(*) FROM deliveries") == 1);
  // Rotation: any of several secrets passes.
  auto rotated = replay_offline({path}, dir.file("b.db"),
                                {"--verify-signatures", "--secret-file", other_file, "--secret-file", secret_file});
  BOOST_TEST(query_int(dir.file("b.db"), "SELECT count(*) FROM deliveries WHERE message_id = 's1'") == 1);
  auto wrong = replay_offline({path}, dir.file("c.db"), {"--verify-signatures", "--secret-file", other_file});
  BOOST_TEST(wrong.exit_code == 1);
  BOOST_TEST(query_int(dir.file("c.db"), "SELECT count(*) FROM deliveries") == 0);
}

BOOST_AUTO_TEST_CASE(a_file_after_secret_file_is_a_capture_file) {
  TempDir dir;
  const std::string secret = random_secret();
  const std::string secret_file = dir.write("secret", secret + "\n");
  const std::string a = dir.write("a.jsonl", signed_line(secret, "a", 1700000000, "{}"));
  const std::string b = dir.write("b.jsonl", signed_line(secret, "b", 1700000001, "{}"));
  auto result = run_healthhook({"replay", a, "--verify-signatures", "--secret-file", secret_file, b, "--database",
                                dir.file("x.db")});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(query_int(dir.file("x.db"), "SELECT count(*) FROM deliveries") == 2);
}

BOOST_AUTO_TEST_CASE(capture_filters_by_time_and_event_type) {
  TempDir dir;
  const std::string secret = random_secret();
  std::string file;
  file += signed_line(secret, "a", 1700000000, samples_body("u1", "steps", "oura", {{"2024-05-16T10:00:00Z", 1}}, "count"));
  file += signed_line(secret, "b", 1700000100, sleep_body("u1", "s", 1, "2024-05-15T22:00:00Z"));
  file += signed_line(secret, "c", 1700000200, samples_body("u1", "steps", "oura", {{"2024-05-16T11:00:00Z", 2}}, "count"));
  file += signed_line(secret, "d", 1700000300, "not json at all");  // stored invalid, without an event_type
  const std::string db = dir.file("f.db");
  BOOST_TEST_REQUIRE(replay_offline({dir.write("cap.jsonl", file)}, db).exit_code == 0);
  const auto ids = [&](const std::vector<std::string>& filters) {
    std::vector<std::string> args = {"capture", "--database", db};
    args.insert(args.end(), filters.begin(), filters.end());
    auto result = run_healthhook(args);
    BOOST_TEST(result.exit_code == 0, result.stderr_text);
    std::string found;
    for (size_t at = result.stdout_text.find("{\"id\":\""); at != std::string::npos;
         at = result.stdout_text.find("{\"id\":\"", at + 1)) {
      found += result.stdout_text.substr(at + 7, 1);
    }
    return found;
  };
  BOOST_TEST(ids({}) == "abcd");
  BOOST_TEST(ids({"--event-type", "daily.data.steps.*"}) == "ac");
  // '*' is every delivery, one without an event_type too (it was left out).
  BOOST_TEST(ids({"--event-type", "*"}) == "abcd");
  BOOST_TEST(ids({"--since", "1700000100", "--until", "1700000300"}) == "bc");  // inclusive
  BOOST_TEST(ids({"--until", "2023-11-14T22:15:00Z"}) == "a");     // 1700000100 = 22:15:00, exclusive
  BOOST_TEST(ids({"--since", "2023-11-14", "--until", "1700000200", "--event-type", "*sleep*"}) == "b");
  // Digits below the millisecond are dropped, as from every stored time (22:16:40 is c's).
  BOOST_TEST(ids({"--since", "2023-11-14T22:16:40.0009Z", "--until", "1700000300"}) == "c");
  auto bad = run_healthhook({"capture", "--database", db, "--since", "soon"});
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(bad.stderr_text == "healthhook capture: --since: expected RFC 3339, a date or Unix seconds, got \"soon\"\n");
  // A set never closed matches nothing: refused, not an empty capture.
  auto open_set = run_healthhook({"capture", "--database", db, "--event-type", "daily.data.[steps*", "-o", dir.file("x.jsonl")});
  BOOST_TEST(open_set.exit_code == 2);
  BOOST_TEST(open_set.stderr_text.starts_with("healthhook capture: --event-type: the set opened by '[' at character 12 "
                                              "is never closed"),
             open_set.stderr_text);
  BOOST_TEST(ids({"--event-type", "daily.data.[s]teps.*"}) == "ac");
  // query refuses it too (it exited 0 with no rows).
  auto query_open_set = run_healthhook({"query", "deliveries", "--database", db, "--event-type", "[a"});
  BOOST_TEST(query_open_set.exit_code == 2);
  BOOST_TEST(query_open_set.stderr_text.starts_with("healthhook query: --event-type: the set opened by '['"),
             query_open_set.stderr_text);
  // A window that ends where or before it starts (the two swapped): refused, not an empty capture.
  auto swapped = run_healthhook({"capture", "--database", db, "--since", "1700000200", "--until", "1700000100"});
  BOOST_TEST(swapped.exit_code == 2);
  BOOST_TEST(swapped.stderr_text == "healthhook capture: --since 1700000200 is not before --until 1700000100\n",
             swapped.stderr_text);
  // query says so too (it exited 0 with no rows).
  auto swapped_query =
      run_healthhook({"query", "summaries", "--database", db, "--since", "1700000200", "--until", "1700000100"});
  BOOST_TEST(swapped_query.exit_code == 2);
  BOOST_TEST(swapped_query.stderr_text == "healthhook query: --since 1700000200 is not before --until 1700000100\n",
             swapped_query.stderr_text);
}

// `query --since/--until` cut a bound's digits below the millisecond as the stored times
// were cut: a bound equal to a sample's sent time finds it. They were rounded up, so
// `--since` .123456 missed the sample sent at .123456 (kept as .123), and --since 02.9995
// --until 03 was refused.
BOOST_AUTO_TEST_CASE(query_bounds_drop_digits_below_the_millisecond_as_stored_times_do) {
  TempDir dir;
  const std::string secret = random_secret();
  const std::string db = dir.file("f.db");
  BOOST_TEST_REQUIRE(replay_offline({dir.write("cap.jsonl", signed_line(secret, "a", 1700000000,
                                                                       samples_body("u1", "glucose", "dexcom",
                                                                                    {{"2024-05-16T10:00:01.123456Z", 101},
                                                                                     {"2024-05-16T10:00:02.9999Z", 102},
                                                                                     {"2024-05-16T10:00:03Z", 103}},
                                                                                    "mg/dL")))},
                                    db)
                         .exit_code == 0);
  const auto values = [&](const std::string& since, const std::string& until) {
    auto result = run_healthhook({"query", "samples", "--database", db, "--format", "csv", "--since", since, "--until", until});
    BOOST_TEST(result.exit_code == 0, result.stderr_text);
    std::string found;  // the value (7th cell) of each row after the header
    std::istringstream rows(result.stdout_text);
    std::string row;
    std::getline(rows, row);
    while (std::getline(rows, row)) {
      size_t cell = 0;
      for (int skip = 0; skip < 6; ++skip) cell = row.find(',', cell) + 1;
      found += row.substr(cell, row.find(',', cell) - cell) + " ";
    }
    return found;
  };
  BOOST_TEST(values("2024-05-16T10:00:01.123456Z", "2024-05-16T10:00:02Z") == "101 ");
  BOOST_TEST(values("2024-05-16T10:00:02.9999Z", "2024-05-16T10:00:03.5Z") == "102 103 ");
  BOOST_TEST(values("2024-05-16T10:00:02.9995Z", "2024-05-16T10:00:03Z") == "102 ");
  BOOST_TEST(values("2024-05-16T10:00:02Z", "2024-05-16T10:00:02.9999Z") == "");
  // Two bounds that are one millisecond once cut: an empty window, refused saying why.
  auto same = run_healthhook({"query", "samples", "--database", db, "--since", "2024-05-16T10:00:02.9995Z", "--until",
                              "2024-05-16T10:00:02.9999Z"});
  BOOST_TEST(same.exit_code == 2);
  BOOST_TEST(same.stderr_text == "healthhook query: --since 2024-05-16T10:00:02.9995Z is not before --until "
                                 "2024-05-16T10:00:02.9999Z (both are 2024-05-16T10:00:02.999Z to the millisecond)\n",
             same.stderr_text);
}

// An export asked to write over the store it reads (`capture -o DB`, `query … -o DB-wal`,
// through a link or a hard link): refused, exit 2, the store untouched. It replaced the
// database with its own rows and exited 0.
BOOST_AUTO_TEST_CASE(an_export_is_never_written_over_its_store) {
  TempDir dir;
  const std::string secret = random_secret();
  std::string file;
  file += signed_line(secret, "a", 1700000000, samples_body("u1", "steps", "oura", {{"2024-05-16T10:00:00Z", 1}}, "count"));
  file += signed_line(secret, "b", 1700000100, sleep_body("u1", "s", 1, "2024-05-15T22:00:00Z"));
  const std::string db = dir.file("f.db");
  BOOST_TEST_REQUIRE(replay_offline({dir.write("cap.jsonl", file)}, db).exit_code == 0);
  const std::string link = dir.file("link.db");
  std::filesystem::create_symlink(db, link);
  const std::string hard = dir.file("hard.db");
  std::filesystem::create_hard_link(db, hard);
  const std::vector<std::vector<std::string>> commands = {
      {"capture", "--database", db, "-o", db},
      {"capture", "--database", db, "--event-type", "*sleep*", "--output", link},
      {"capture", "--database", db, "-o", hard},
      {"query", "samples", "--database", db, "-o", db},
      {"query", "summaries", "--database", db, "-o", db + "-wal"},
      {"query", "summaries", "--database", link, "-o", dir.path().string() + "/./f.db-shm"},
  };
  for (const auto& command : commands) {
    auto refused = run_healthhook(command);
    BOOST_TEST(refused.exit_code == 2, command.back());
    BOOST_TEST(refused.stderr_text.find("is the store's own") != std::string::npos, refused.stderr_text);
    BOOST_TEST(refused.stderr_text.find('\n') == refused.stderr_text.size() - 1, refused.stderr_text);
  }
  BOOST_TEST(query_int(db, "SELECT count(*) FROM deliveries") == 2);
  BOOST_TEST(query_int(db, "SELECT count(*) FROM samples") == 1);
  BOOST_TEST(!std::filesystem::exists(db + "-shm.partial"));
  // Beside it is fine.
  auto beside = run_healthhook({"query", "samples", "--database", db, "-o", db + ".jsonl"});
  BOOST_TEST(beside.exit_code == 0, beside.stderr_text);
}

// An offline replay the store stops (here max_database_mib; a full disk alike) still prints
// its summary, "stopped", with the count of what is stored; run again with room, it adds the
// rest. It printed only the error.
namespace {

// Pages of the inbox's b-tree, with the page size, read after a checkpoint has put every
// page in the file (the damage below is done to the file itself): `sql` selects page numbers.
struct InboxPages {
  std::vector<int64_t> pages;
  int64_t page_size = 0;
};
InboxPages inbox_pages(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  BOOST_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  BOOST_REQUIRE(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  BOOST_REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
  InboxPages found;
  while (sqlite3_step(statement) == SQLITE_ROW) found.pages.push_back(sqlite3_column_int64(statement, 0));
  sqlite3_finalize(statement);
  BOOST_REQUIRE(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &statement, nullptr) == SQLITE_OK);
  BOOST_REQUIRE(sqlite3_step(statement) == SQLITE_ROW);
  found.page_size = sqlite3_column_int64(statement, 0);
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return found;
}

// Damages the inbox as a torn or overwritten page can: the first key of a leaf page in the
// middle of the table is made larger than any seq in it. SQLite's walk in seq order then
// stops there without an error (a key past the walk's bound), while a descent from the root
// still finds the newest rows. Returns the seq whose key it changed.
int64_t damage_a_middle_inbox_key(const std::string& path) {
  const auto [leaves, page_size] =
      inbox_pages(path, "SELECT pageno FROM dbstat WHERE name = 'inbox' AND pagetype = 'leaf' ORDER BY path");
  BOOST_REQUIRE(leaves.size() >= 4);
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  const int64_t page_at = (leaves[leaves.size() / 2] - 1) * page_size;
  std::string page(static_cast<size_t>(page_size), '\0');
  file.seekg(page_at);
  file.read(page.data(), page_size);
  BOOST_REQUIRE(static_cast<unsigned char>(page[0]) == 0x0D);  // a table b-tree leaf
  // The first cell: its payload's length (a varint), then its key (a varint).
  size_t at = (static_cast<unsigned char>(page[8]) << 8) | static_cast<unsigned char>(page[9]);
  while (static_cast<unsigned char>(page[at]) & 0x80) ++at;
  ++at;
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(page[i]); };
  BOOST_REQUIRE((byte(at) & 0x80) && !(byte(at + 1) & 0x80));  // a key of two bytes: 128 to 16383
  const int64_t seq = ((byte(at) & 0x7F) << 7) | byte(at + 1);
  const char largest[2] = {'\xFF', '\x7F'};  // 16383
  file.seekp(page_at + static_cast<int64_t>(at));
  file.write(largest, 2);
  return seq;
}

// Damages the inbox as a lost pointer can: one child of the table's root page is dropped
// from it, so SQLite's walk in seq order skips that child's rows in the middle and goes on
// to the end, without an error.
void damage_drop_a_root_child(const std::string& path) {
  const auto [roots, page_size] = inbox_pages(path, "SELECT rootpage FROM sqlite_master WHERE name = 'inbox'");
  BOOST_REQUIRE(roots.size() == 1u);
  const int64_t root = roots.front();
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string page(static_cast<size_t>(page_size), '\0');
  file.seekg((root - 1) * page_size);
  file.read(page.data(), page_size);
  BOOST_REQUIRE(static_cast<unsigned char>(page[0]) == 0x05);  // a table b-tree interior page
  const size_t cells = (static_cast<unsigned char>(page[3]) << 8) | static_cast<unsigned char>(page[4]);
  BOOST_REQUIRE(cells >= 4);
  // The cell pointer array (2 bytes each) starts at 12: the middle pointer goes, the rest
  // move up, and the page counts one cell fewer.
  const size_t drop = 12 + 2 * (cells / 2);
  page.erase(drop, 2);
  page.insert(12 + 2 * (cells - 1), 2, '\0');
  page[3] = static_cast<char>((cells - 1) >> 8);
  page[4] = static_cast<char>((cells - 1) & 0xFF);
  file.seekp((root - 1) * page_size);
  file.write(page.data(), page_size);
}

}  // namespace

// A damaged database: capture and rebuild stopped where SQLite's walk of the inbox ended
// (without an error), said they were done and exited 0, the rebuild with the derived rows
// of every later delivery gone. Both now fail and say the file is damaged.
BOOST_AUTO_TEST_CASE(a_damaged_inbox_fails_capture_and_rebuild_instead_of_ending_early) {
  TempDir dir;
  const std::string secret = random_secret();
  std::string capture;
  constexpr int kDeliveries = 600;
  for (int i = 1; i <= kDeliveries; ++i) {
    capture += signed_line(secret, "msg_" + std::to_string(i), 1700000000 + i,
                           samples_body("user-" + std::to_string(i % 7), "heartrate", "oura",
                                        {{"2024-05-16T10:00:00+00:00", 60 + i % 40}}));
  }
  dir.write("capture.jsonl", capture);
  const std::string database = dir.file("damaged.db");
  auto replayed = run_healthhook({"replay", dir.file("capture.jsonl"), "--database", database});
  BOOST_REQUIRE_MESSAGE(replayed.exit_code == 0, replayed.stderr_text);
  {  // as if none of them were applied yet: the processor reads them all again below
    sqlite3* db = nullptr;
    BOOST_REQUIRE(sqlite3_open(database.c_str(), &db) == SQLITE_OK);
    BOOST_REQUIRE(sqlite3_exec(db, "UPDATE processor_state SET applied_seq = 0", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  const int64_t seq = damage_a_middle_inbox_key(database);
  BOOST_TEST_MESSAGE("damaged the key of seq " << seq);
  BOOST_REQUIRE(query_int(database, "SELECT max(seq) FROM inbox") == kDeliveries);

  auto captured = run_healthhook({"capture", "--database", database, "-o", dir.file("out.jsonl")});
  BOOST_TEST(captured.exit_code == 1);
  BOOST_TEST(captured.stderr_text.find("the database file is damaged") != std::string::npos, captured.stderr_text);
  BOOST_TEST(!std::filesystem::exists(dir.file("out.jsonl")));
  // `query deliveries` reads the same walk, and checks it the same way.
  auto queried = run_healthhook({"query", "deliveries", "--database", database});
  BOOST_TEST(queried.exit_code == 1);
  BOOST_TEST(queried.stderr_text.find("the database file is damaged") != std::string::npos, queried.stderr_text);

  // The processor (serve, replay) reads them to apply them: it stops at the damage instead
  // of taking every row up to the newest as applied.
  dir.write("nothing.jsonl", "");
  auto processed = run_healthhook({"replay", dir.file("nothing.jsonl"), "--database", database});
  BOOST_TEST(processed.exit_code == 1);
  BOOST_TEST(processed.stderr_text.find("the inbox cannot be read past seq " + std::to_string(seq - 1) +
                                        ", though rows up to seq " + std::to_string(kDeliveries) + " are there") !=
                 std::string::npos,
             processed.stderr_text);
  BOOST_TEST(query_int(database, "SELECT applied_seq FROM processor_state") < seq);

  // rebuild checks the pages before it empties anything.
  auto rebuilt = run_healthhook({"rebuild", "--database", database});
  BOOST_TEST(rebuilt.exit_code == 1);
  BOOST_TEST(rebuilt.stderr_text.find("the database file is damaged (PRAGMA quick_check: On tree page ") !=
                 std::string::npos,
             rebuilt.stderr_text);
  BOOST_TEST(std::count(rebuilt.stderr_text.begin(), rebuilt.stderr_text.end(), '\n') == 1, rebuilt.stderr_text);

  // Rows skipped in the middle of the walk, which still ends at the newest: capture counts
  // what it read against the received_at index, rebuild checks the pages before it empties
  // anything (it replaced the derived tables with fewer rows, exit 0).
  const std::string skipping = dir.file("skipping.db");
  BOOST_REQUIRE(run_healthhook({"replay", dir.file("capture.jsonl"), "--database", skipping}).exit_code == 0);
  damage_drop_a_root_child(skipping);
  const int64_t samples = query_int(skipping, "SELECT count(*) FROM samples");
  BOOST_TEST(samples > 0);
  captured = run_healthhook({"capture", "--database", skipping, "-o", dir.file("out.jsonl")});
  BOOST_TEST(captured.exit_code == 1, captured.stderr_text);
  BOOST_TEST(captured.stderr_text.find("the database file is damaged") != std::string::npos, captured.stderr_text);
  BOOST_TEST(!std::filesystem::exists(dir.file("out.jsonl")));
  queried = run_healthhook({"query", "deliveries", "--database", skipping});
  BOOST_TEST(queried.exit_code == 1);
  BOOST_TEST(queried.stderr_text.find("the database file is damaged") != std::string::npos, queried.stderr_text);
  rebuilt = run_healthhook({"rebuild", "--database", skipping});
  BOOST_TEST(rebuilt.exit_code == 1);
  BOOST_TEST(rebuilt.stderr_text.find("the database file is damaged (PRAGMA quick_check: ") != std::string::npos,
             rebuilt.stderr_text);
  BOOST_TEST(rebuilt.stderr_text.find("(nothing was changed)") != std::string::npos, rebuilt.stderr_text);
  BOOST_TEST(query_int(skipping, "SELECT count(*) FROM samples") == samples);
}

BOOST_AUTO_TEST_CASE(a_replay_the_store_stops_says_what_it_stored) {
  TempDir dir;
  const std::string secret = random_secret();
  const std::string pad(8000, 'x');
  std::string file;
  constexpr int kLines = 200;  // about 1.6 MB of bodies, past the 1 MiB set below
  for (int i = 0; i < kLines; ++i) {
    file += signed_line(secret, "m" + std::to_string(i), 1700000000 + i,
                        R"({"event_type":"daily.data.sleep.created","user_id":"u1","data":{"id":"s)" + std::to_string(i) +
                            R"(","pad":")" + pad + R"("}})");
  }
  const std::string capture = dir.write("big.jsonl", file);
  const std::string db = dir.file("small.db");
  auto stopped = replay_offline({capture}, db, {"--set", "max_database_mib=1"});
  BOOST_TEST(stopped.exit_code == 1, stopped.stderr_text);
  BOOST_TEST(stopped.stdout_text.find("\"stopped\":true") != std::string::npos, stopped.stdout_text);
  const int64_t stored = query_int(db, "SELECT count(*) FROM deliveries");
  BOOST_TEST(stored < kLines);
  BOOST_TEST(stopped.stdout_text.find("\"stored\":" + std::to_string(stored) + ",") != std::string::npos,
             stopped.stdout_text << " vs " << stored);
  auto rest = replay_offline({capture}, db, {"--set", "max_database_mib=64"});
  BOOST_TEST(rest.exit_code == 0, rest.stderr_text);
  BOOST_TEST(rest.stdout_text.find("\"stored\":" + std::to_string(kLines - stored) + ",") != std::string::npos,
             rest.stdout_text);
  BOOST_TEST(rest.stdout_text.find("stopped") == std::string::npos, rest.stdout_text);
  BOOST_TEST(query_int(db, "SELECT count(*) FROM deliveries") == kLines);
}

BOOST_AUTO_TEST_CASE(resending_to_a_receiver_equals_offline_replay) {
  TempDir dir;
  ServerProcess server(dir);
  const std::string capture = dir.write("multi.jsonl", multi_user_capture(random_secret()));  // old, foreign signatures
  const std::string offline = dir.file("offline.db");
  auto sent = replay_both_ways(dir, server, capture, offline, 4);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/webhooks";
  BOOST_TEST(sent.exit_code == 0, sent.stderr_text);
  BOOST_TEST(sent.stdout_text.find(R"("lines":36,"answered":36,"statuses":{"200":36},"stored":36,"duplicates":0,"failed":0,"bodies_removed":0,"stopped":false)") !=
                 std::string::npos,
             sent.stdout_text);
  wait_until_processed(server.database());
  BOOST_TEST(derived_tables(server.database(), false) == derived_tables(offline, false));
  // The latest of each user's updates won on both sides (order kept per user).
  BOOST_TEST(dump(server.database(), "SELECT json_extract(data, '$.score') FROM summaries WHERE user_id = 'user-3'") ==
             "73\n");
  // The same message ids again: all duplicates.
  auto again = run_healthhook({"replay", capture, "--to", url, "--secret-file", dir.file("secret")});
  BOOST_TEST(again.exit_code == 0);
  BOOST_TEST(again.stdout_text.find(R"("stored":0,"duplicates":36)") != std::string::npos, again.stdout_text);

  // An offline replay into the database the server is processing is refused.
  auto busy = replay_offline({capture}, server.database());
  BOOST_TEST(busy.exit_code == 1);
  BOOST_TEST(busy.stderr_text.find("is being processed by another healthhook process") != std::string::npos,
             busy.stderr_text);
}

// By default one delivery at a time, in file order: the receiver numbers them as offline
// replay does, so the tables are identical with their seqs, series ids and change ids
// (what a backend that keeps `seq` or polls the change feed sees), users and deliveries
// that name no user interleaved as they are in the file.
BOOST_AUTO_TEST_CASE(resending_by_default_numbers_deliveries_as_offline_replay_does) {
  TempDir dir;
  ServerProcess server(dir);
  const std::string secret = random_secret();
  std::string file = multi_user_capture(secret);
  for (int i = 0; i < 12; ++i) {  // user-less bodies between users' deliveries
    file += signed_line(secret, "msg_plain_" + std::to_string(i), 1700001000 + i, "not json " + std::to_string(i));
    file += signed_line(secret, "msg_hr_" + std::to_string(i), 1700001000 + i,
                        samples_body("user-" + std::to_string(i % 3), "heartrate", "oura",
                                     {{"2024-05-16T12:00:00+00:00", 60 + i}}));
  }
  const std::string capture = dir.write("mixed.jsonl", file);
  const std::string offline = dir.file("offline.db");
  auto replayed = replay_offline({capture}, offline);
  BOOST_TEST_REQUIRE(replayed.exit_code == 0, replayed.stderr_text);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/webhooks";
  auto sent = run_healthhook({"replay", capture, "--to", url, "--secret-file", dir.file("secret")});
  BOOST_TEST_REQUIRE(sent.exit_code == 0, sent.stderr_text);
  wait_until_processed(server.database());
  BOOST_TEST(derived_tables(server.database(), true) == derived_tables(offline, true));
  BOOST_TEST(dump(server.database(), "SELECT seq, message_id FROM deliveries ORDER BY seq") ==
             dump(offline, "SELECT seq, message_id FROM deliveries ORDER BY seq"));
}

// A delivery whose envelope names another user than its data shares rows with both
// users' deliveries: sent several at a time, it still arrives in capture order (it went to
// its envelope user's lane, and overtook or was overtaken by the data user's deliveries).
BOOST_AUTO_TEST_CASE(a_delivery_naming_two_users_keeps_its_place_when_sent_concurrently) {
  TempDir dir;
  ServerProcess server(dir);
  const std::string secret = random_secret();
  std::string file;
  // The data user's own deliveries queue up on their lane; the last delivery of each
  // group, whose envelope names another user, has a lane to itself and would be sent at
  // once. The second group's data user is a number there, which the processor reads as its
  // JSON text, the user "90001".
  constexpr int kDeliveries = 40;
  for (const std::string data_user : {"shared", "90001"}) {
    for (int i = 1; i <= kDeliveries; ++i) {
      std::string body = samples_body(data_user, "heartrate", "oura", {{"2024-05-16T10:00:00+00:00", i}});
      if (i == kDeliveries) {  // the envelope's user_id first, as the service writes it
        const std::string envelope = R"(,"user_id":")" + data_user + R"(","team_id":"team-1")";
        body.erase(body.rfind(envelope), envelope.size());
        body = R"({"user_id":"sender","team_id":"team-1",)" + body.substr(1);
        if (data_user == "90001") body.replace(body.find(R"("user_id":"90001")"), 17, R"("user_id":90001)");
      }
      file += signed_line(secret, "msg_" + data_user + "_" + std::to_string(i), 1700000000 + i, body);
    }
  }
  const std::string capture = dir.write("two-users.jsonl", file);
  const std::string offline = dir.file("offline.db");
  auto sent = replay_both_ways(dir, server, capture, offline, 8);
  BOOST_TEST_REQUIRE(sent.exit_code == 0, sent.stderr_text);
  wait_until_processed(server.database());
  const std::string sql = "SELECT user_id, value FROM samples_named ORDER BY user_id";
  const std::string expected = "90001|" + std::to_string(kDeliveries) + "\nshared|" + std::to_string(kDeliveries) + "\n";
  BOOST_TEST(dump(offline, sql) == expected);
  BOOST_TEST(dump(server.database(), sql) == expected);
  BOOST_TEST(derived_tables(server.database(), false) == derived_tables(offline, false));
}

// A receiver behind TLS (its listener's [tls]): replay --to https:// verifies its
// certificate against --ca-file (else the system's trust store) and host name, and sends
// nothing to one it cannot verify.
BOOST_AUTO_TEST_CASE(resending_over_https_verifies_the_receiver) {
  TempDir dir;
  const auto ca = hh::fake::make_certificate_authority("replay test CA");
  const auto certificate = hh::fake::make_server_certificate(ca, {"localhost"}, {"127.0.0.1"});
  dir.write("cert.pem", certificate.cert_pem);
  dir.write("key.pem", certificate.key_pem);
  const std::string ca_file = dir.write("ca.pem", ca.cert_pem);
  ServerProcess server(dir, "[tls]\ncert_file = \"cert.pem\"\nkey_file = \"key.pem\"\n");
  const std::string capture = dir.write("multi.jsonl", multi_user_capture(random_secret()));
  const std::string url = "https://localhost:" + std::to_string(server.port()) + "/webhooks";

  auto untrusted = run_healthhook({"replay", capture, "--to", url, "--secret-file", dir.file("secret")});
  BOOST_TEST(untrusted.exit_code == 1, untrusted.stdout_text);
  BOOST_TEST(untrusted.stdout_text.find(R"("answered":0)") != std::string::npos, untrusted.stdout_text);

  auto sent = run_healthhook({"replay", capture, "--to", url, "--secret-file", dir.file("secret"), "--ca-file", ca_file});
  BOOST_TEST(sent.exit_code == 0, sent.stderr_text);
  BOOST_TEST(sent.stdout_text.find(R"("lines":36,"answered":36,"statuses":{"200":36},"stored":36)") != std::string::npos,
             sent.stdout_text);
}

BOOST_AUTO_TEST_CASE(answers_other_than_2xx_fail_their_lines) {
  TempDir dir;
  ServerProcess server(dir);
  const std::string secret = random_secret();
  const std::string wrong = dir.write("wrong-secret", random_secret());
  const std::string capture =
      dir.write("cap.jsonl", signed_line(secret, "x1", 1700000000, "{}") + signed_line(secret, "x2", 1700000001, "{}"));
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());  // no path: /webhooks
  auto sent = run_healthhook({"replay", capture, "--to", url, "--secret-file", wrong});
  BOOST_TEST(sent.exit_code == 1);
  BOOST_TEST(sent.stdout_text.find(R"("statuses":{"401":2})") != std::string::npos, sent.stdout_text);
  BOOST_TEST(sent.stderr_text.find(capture + ":1: HTTP 401: {\"error\":\"no matching signature") != std::string::npos,
             sent.stderr_text);
  BOOST_TEST(sent.stderr_text.find(capture + ":2: HTTP 401") != std::string::npos, sent.stderr_text);

  auto wrong_path = run_healthhook({"replay", capture, "--to", url + "/nowhere", "--secret-file", dir.file("secret")});
  BOOST_TEST(wrong_path.exit_code == 1);
  BOOST_TEST(wrong_path.stdout_text.find(R"("statuses":{"404":2})") != std::string::npos, wrong_path.stdout_text);
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM deliveries") == 0);
}

// A proxy or CDN in front of the receiver may send interim answers (100 Continue, 103 Early
// Hints) before the final one: skipped (attack, stop 76: the 100 was taken for the answer,
// "HTTP 100", and the next line was given this line's 200).
BOOST_AUTO_TEST_CASE(interim_answers_before_the_receivers_are_skipped) {
  ScriptedServer receiver([](ServerSide& side) {
    while (side.read_request()) {
      side.send("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    }
  });
  TempDir dir;
  const std::string secret = random_secret();
  const std::string capture = dir.write("cap.jsonl", signed_line(secret, "x1", 1700000000, "{}") +
                                                         signed_line(secret, "x2", 1700000001, "{}") +
                                                         signed_line(secret, "x3", 1700000002, "{}"));
  const std::string url = "http://127.0.0.1:" + std::to_string(receiver.port()) + "/webhooks";
  auto sent = run_healthhook({"replay", capture, "--to", url, "--secret-file", dir.write("secret", secret)});
  BOOST_TEST(sent.exit_code == 0, sent.stderr_text);
  BOOST_TEST(sent.stdout_text.find(R"("statuses":{"200":3})") != std::string::npos, sent.stdout_text);
  BOOST_TEST(receiver.requests() == 3u);
}

// The run stops at the first line and names it, as for a 503 (docs/getting-data-out.md): it
// printed "cannot connect to …" without the line.
BOOST_AUTO_TEST_CASE(an_unreachable_receiver_stops_the_run) {
  TempDir dir;
  const std::string secret = dir.write("secret", random_secret());
  const std::string capture = dir.write("cap.jsonl", signed_line(random_secret(), "x1", 1700000000, "{}") +
                                                          signed_line(random_secret(), "x2", 1700000001, "{}"));
  // Port 1 on loopback: nothing listens there (connection refused).
  auto sent = run_healthhook({"replay", capture, "--to", "http://127.0.0.1:1/webhooks", "--secret-file", secret});
  BOOST_TEST(sent.exit_code == 1);
  BOOST_TEST(sent.stderr_text.find(capture + ":1: cannot connect to 127.0.0.1:1: ") != std::string::npos,
             sent.stderr_text);
  BOOST_TEST(sent.stderr_text.find("; stopped here: ") != std::string::npos, sent.stderr_text);
  BOOST_TEST(std::count(sent.stderr_text.begin(), sent.stderr_text.end(), '\n') == 1, sent.stderr_text);
  BOOST_TEST(sent.stdout_text.find(R"("answered":0,"statuses":{},"stored":0,"duplicates":0,"failed":1,"bodies_removed":0,"stopped":true)") !=
                 std::string::npos,
             sent.stdout_text);
}

// `--to` without --secret-file signs with the configuration's signing secret: the one
// `serve` verifies with the same --config. Several configured (a rotation): the first, and
// a notice saying so.
BOOST_AUTO_TEST_CASE(resending_signs_with_the_configurations_secret) {
  TempDir dir;
  ServerProcess server(dir);
  const std::string capture = dir.write(
      "cap.jsonl", signed_line(random_secret(), "c1", 1700000000,
                               samples_body("u1", "steps", "oura", {{"2024-05-16T10:00:00Z", 1}}, "count")));
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/webhooks";
  auto sent = run_healthhook({"replay", capture, "--to", url, "--config", server.config_file()});
  BOOST_TEST(sent.exit_code == 0, sent.stderr_text);
  BOOST_TEST(sent.stdout_text.find(R"("statuses":{"200":1},"stored":1)") != std::string::npos, sent.stdout_text);
  BOOST_TEST(sent.stderr_text.empty(), sent.stderr_text);

  // Two secrets configured: the first signs (the server's own first, accepted), with a notice.
  dir.write("other-secret", random_secret() + "\n");
  const std::string rotating = dir.write("rotating.toml", "signing_secret_files = [\"secret\", \"other-secret\"]\n");
  const std::string capture2 = dir.write("cap2.jsonl", signed_line(random_secret(), "c2", 1700000001, "{}"));
  auto first = run_healthhook({"replay", capture2, "--to", url, "--config", rotating});
  BOOST_TEST(first.exit_code == 0, first.stderr_text);
  BOOST_TEST(first.stdout_text.find(R"("statuses":{"200":1})") != std::string::npos, first.stdout_text);
  BOOST_TEST(first.stderr_text ==
                 "healthhook replay: signing with the first of 2 configured signing secrets (secret); "
                 "--secret-file chooses another\n",
             first.stderr_text);
  // The other way round the first is not the server's: 401, so the first is the one used.
  const std::string reversed = dir.write("reversed.toml", "signing_secret_files = [\"other-secret\", \"secret\"]\n");
  const std::string capture3 = dir.write("cap3.jsonl", signed_line(random_secret(), "c3", 1700000002, "{}"));
  auto wrong = run_healthhook({"replay", capture3, "--to", url, "--config", reversed});
  BOOST_TEST(wrong.exit_code == 1);
  BOOST_TEST(wrong.stdout_text.find(R"("statuses":{"401":1})") != std::string::npos, wrong.stdout_text);
  // A configured secret that cannot be read names the key and the way out.
  const std::string missing = dir.write("missing.toml", "signing_secret_files = [\"no-such-file\"]\n");
  auto unreadable = run_healthhook({"replay", capture3, "--to", url, "--config", missing});
  BOOST_TEST(unreadable.exit_code == 2);
  BOOST_TEST(unreadable.stderr_text.starts_with("healthhook replay: signing_secret_files: cannot read secret file "),
             unreadable.stderr_text);
  BOOST_TEST(unreadable.stderr_text.find("(or give --secret-file)") != std::string::npos, unreadable.stderr_text);
  // A folder where the file should be is named as such, not as an empty file.
  std::filesystem::create_directory(dir.file("secret-folder"));
  const std::string folder = dir.write("folder.toml", "signing_secret_files = [\"secret-folder\"]\n");
  auto is_folder = run_healthhook({"check-config", "--config", folder});
  BOOST_TEST(is_folder.exit_code == 2);
  BOOST_TEST(is_folder.stderr_text.find("secret-folder: it is a folder") != std::string::npos, is_folder.stderr_text);
  BOOST_TEST(std::count(is_folder.stderr_text.begin(), is_folder.stderr_text.end(), '\n') == 1, is_folder.stderr_text);
}

BOOST_AUTO_TEST_SUITE_END()  // replay_test
