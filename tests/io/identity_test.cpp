// Who the user is (spec §4 "Identity"), end to end with the real binary: the envelope's
// client_user_id and team_id in `users`, $.data.source_id with the series, and the
// identity columns of `query samples|summaries --with identity`, from envelopes of the
// form used since Mar 2024 and of the older one (no user fields at the top), in either
// order. The deliveries are the reference payloads as written (pretty-printed).
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>

#include "tests/io/io_fixtures.h"
#include "tests/support/examples.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(identity_test)

using namespace hh::test;
using namespace hh::test::io;

namespace {

const std::string kUser = "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2";

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

// A capture line (replay/capture_file.h) of `body`, received at `timestamp`.
std::string line(const std::string& id, int64_t timestamp, const std::string& body) {
  return R"({"id":")" + id + R"(","timestamp":)" + std::to_string(timestamp) + R"(,"headers":{},"body":)" +
         json_string(body) + "}\n";
}

// Replays `lines` offline into a fresh database; returns its path.
std::string replay(const TempDir& dir, const std::string& name, const std::string& lines) {
  const std::string capture = dir.write(name + ".jsonl", lines);
  const std::string database = dir.file(name + ".db");
  const auto run = run_healthhook({"replay", capture, "--database", database});
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0, run.stderr_text);
  return database;
}

}  // namespace

BOOST_AUTO_TEST_CASE(identity_from_old_and_new_envelopes_in_either_order) {
  TempDir dir;
  const std::string old_envelope = example_file("timeseries-steps-old-envelope.json");  // 2023-05-16T12:00 steps, no user fields
  const std::string new_envelope = example_file("summary-activity.json");  // client_user_id 01HW3…, team 6b74…
  for (const bool old_first : {true, false}) {
    BOOST_TEST_CONTEXT("old envelope first: " << old_first) {
      const std::string lines = old_first ? line("m_old", 1700000000, old_envelope) + line("m_new", 1700000100, new_envelope)
                                          : line("m_new", 1700000000, new_envelope) + line("m_old", 1700000100, old_envelope);
      const std::string database = replay(dir, old_first ? "old_first" : "new_first", lines);
      // One user, named by both; the old envelope never erases what the new one said.
      BOOST_TEST(dump(database, "SELECT user_id, client_user_id, team_id, first_seen_ms, last_seen_ms FROM users") ==
                 kUser + "|01HW3FSNVCHC3B2QB5N0ZAAAVG|6b74423d-0504-4470-9afb-477252ccf67a|1700000000000|1700000100000\n");
      BOOST_TEST(dump(database, "SELECT resource, provider, source_id FROM series") == "steps|apple_health_kit|16\n");
      // The steps came with the old envelope; their identity columns still name the customer's id.
      const auto samples = run_healthhook({"query", "samples", "--database", database, "--with", "identity"});
      BOOST_TEST(samples.exit_code == 0, samples.stderr_text);
      BOOST_TEST(samples.stdout_text.find(R"("value":312,)") != std::string::npos, samples.stdout_text);
      BOOST_TEST(samples.stdout_text.ends_with(
                     R"("source_id":16,"client_user_id":"01HW3FSNVCHC3B2QB5N0ZAAAVG","provider_name":null})"
                     "\n"),
                 samples.stdout_text);
      const auto summaries =
          run_healthhook({"query", "summaries", "--database", database, "--with", "identity", "--format", "csv"});
      BOOST_TEST(summaries.exit_code == 0, summaries.stderr_text);
      BOOST_TEST(summaries.stdout_text.starts_with(
                     "resource,id,user_id,provider,source_type,seq,data,client_user_id,provider_name\r\n"),
                 summaries.stdout_text);
      BOOST_TEST(summaries.stdout_text.ends_with(",01HW3FSNVCHC3B2QB5N0ZAAAVG,\r\n"), summaries.stdout_text);
      // Without --with identity the spec's fields only.
      const auto plain = run_healthhook({"query", "summaries", "--database", database, "--format", "csv"});
      BOOST_TEST(plain.stdout_text.starts_with("resource,id,user_id,provider,source_type,seq,data\r\n"),
                 plain.stdout_text);
      const auto users = run_healthhook({"query", "users", "--database", database});
      BOOST_TEST(users.stdout_text ==
                 R"({"user_id":")" + kUser + R"(","client_user_id":"01HW3FSNVCHC3B2QB5N0ZAAAVG",)"
                 R"("team_id":"6b74423d-0504-4470-9afb-477252ccf67a","first_seen":"2023-11-14T22:13:20.000Z",)"
                 R"("last_seen":"2023-11-14T22:15:00.000Z","seq":)" + std::string(old_first ? "2" : "1") + "}\n");
    }
  }
}

BOOST_AUTO_TEST_CASE(a_changed_client_user_id_follows_the_latest_delivery_and_is_in_the_change_feed) {
  TempDir dir;
  const std::string device = example_file("device.json");  // client_user_id athlete-5521
  const std::string renamed = [&] {
    std::string body = device;
    body.replace(body.find("athlete-5521"), 12, "athlete-0001");
    return body;
  }();
  const std::string database = replay(dir, "renamed", line("a", 1700000000, device) + line("b", 1700000001, device) +
                                                          line("c", 1700000002, renamed));
  BOOST_TEST(dump(database, "SELECT client_user_id, seq FROM users") == "athlete-0001|3\n");
  // Created, unchanged (no change), renamed.
  BOOST_TEST(dump(database, "SELECT seq, op FROM changes WHERE table_name = 'users' ORDER BY change_id") ==
             "1|insert\n3|update\n");
}

BOOST_AUTO_TEST_SUITE_END()  // identity_test
