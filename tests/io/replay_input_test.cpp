// What replay and capture make of input that is not what they expect: a compressed or
// binary file given to replay, a line far longer than any delivery, and capture's
// --event-type written with the shell's negated set `[!...]`.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "replay/capture_file.h"
#include "tests/http_client/scripted_server.h"
#include "tests/io/io_fixtures.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(replay_input_test)

using namespace hh::test;
using namespace hh::test::io;

namespace {

std::string capture_line(const std::string& id, int64_t timestamp, const std::string& body) {
  std::string line;
  hh::replay::append_capture_line(line, id, timestamp, {}, body);
  return line;
}

// The lines of `text` that start with `file`.
std::string lines_about(const std::string& text, const std::string& file) {
  std::string kept;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    if (text.compare(at, file.size(), file) == 0) kept += text.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return kept;
}

size_t count_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

}  // namespace

// A gzip'd capture, or any binary file, was read line by line: one "not JSON" error per
// newline byte it happened to hold. Now refused in one line, before anything is stored.
BOOST_AUTO_TEST_CASE(a_compressed_or_binary_file_is_refused_in_one_line) {
  TempDir dir;
  std::string gzip = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03";
  std::string binary = std::string("\x7f" "ELF\x02\x01\x01\x00", 8);
  for (int i = 0; i < 50; ++i) {
    gzip += "\n\x01\x02 junk";
    binary += "\nmore\x03 junk";
  }
  const std::string gz_file = dir.write("cap.jsonl.gz", gzip);
  const std::string bin_file = dir.write("healthhook-binary", binary);
  const std::string db = dir.file("out.db");

  auto gz = run_healthhook({"replay", gz_file, "--database", db});
  BOOST_TEST(gz.exit_code == 2);
  BOOST_TEST(gz.stderr_text == "healthhook replay: " + gz_file + ": not a capture file: gzip-compressed? use zcat " +
                                   gz_file + " | healthhook replay -\n",
             gz.stderr_text);
  BOOST_TEST(!std::filesystem::exists(db));

  auto bin = run_healthhook({"replay", bin_file, "--database", db});
  BOOST_TEST(bin.exit_code == 2);
  BOOST_TEST(bin.stderr_text.find(bin_file + ": not a capture file: a NUL byte in its first line") != std::string::npos,
             bin.stderr_text);
  BOOST_TEST(count_lines(bin.stderr_text) == 1u, bin.stderr_text);

  auto sent = run_healthhook({"replay", gz_file, "--to", "http://127.0.0.1:1/webhooks", "--secret-file",
                              dir.write("secret", random_secret())});
  BOOST_TEST(sent.exit_code == 2);
  BOOST_TEST(sent.stderr_text.find("gzip-compressed?") != std::string::npos, sent.stderr_text);
  BOOST_TEST(count_lines(sent.stderr_text) == 1u, sent.stderr_text);

  // A NUL byte further down is that line's problem only: the others are stored.
  const std::string later = dir.write(
      "later.jsonl", capture_line("n1", 1700000000, "{}") + std::string("{\"id\":\"x\0", 9) + "\n" +
                         capture_line("n3", 1700000002, "{}"));
  auto mixed = run_healthhook({"replay", later, "--database", db});
  BOOST_TEST(mixed.exit_code == 1);
  BOOST_TEST(mixed.stderr_text.find(later + ":2: ") != std::string::npos, mixed.stderr_text);
  BOOST_TEST(query_int(db, "SELECT count(*) FROM deliveries") == 2);
}

// A line longer than a delivery within max_body_bytes and max_header_bytes can make is
// refused as it is read (at most that much of it kept): a 200 MiB line took 600 MiB of
// memory to be refused as too large. The next line is stored.
BOOST_AUTO_TEST_CASE(a_line_past_what_max_body_bytes_allows_is_refused_while_read) {
  TempDir dir;
  const std::string huge = capture_line("big", 1700000000, R"({"pad":")" + std::string(200 * 1024, 'x') + R"("})");
  const std::string capture = dir.write("cap.jsonl", huge + capture_line("small", 1700000001, "{}"));
  const std::string db = dir.file("out.db");
  auto replayed =
      run_healthhook({"replay", capture, "--database", db, "--set", "max_body_bytes=1024", "--set", "max_header_bytes=1024"});
  BOOST_TEST(replayed.exit_code == 1);
  // 6 × (1024 + 1024) + 64 KiB: every byte escaped as \u00XX, and the other members.
  BOOST_TEST(replayed.stderr_text.find(capture + ":1: line longer than " + std::to_string(6 * 2048 + 65536) +
                                       " bytes, more than a delivery within max_body_bytes (1024) and "
                                       "max_header_bytes (1024) can take") != std::string::npos,
             replayed.stderr_text);
  BOOST_TEST(replayed.stderr_text.find(capture + ":2:") == std::string::npos, replayed.stderr_text);
  BOOST_TEST(dump(db, "SELECT message_id FROM deliveries") == "small\n");
}

// `[!h]` is the shell's "anything but h"; SQLite's GLOB reads it as "! or h", so the user
// asking for everything but heart rate got only heart rate. Both spellings now negate.
// A line whose headers cannot be HTTP headers (a CR LF in a value, a space in a name, a
// NUL) was refused by `replay --to` and stored by offline replay: one capture, two
// different databases. Both refuse it now, in the same words; a header the client replaces
// (Host) is not sent, so it refuses nothing.
BOOST_AUTO_TEST_CASE(a_header_that_cannot_be_sent_is_refused_offline_as_with_to) {
  TempDir dir;
  std::string file;
  const auto add = [&file](const std::string& id, const std::vector<hh::replay::CaptureHeader>& headers) {
    hh::replay::append_capture_line(file, id, 1700000000, headers, "{}");
  };
  add("h1", {{"X-Bad", "a\r\nInjected: yes"}});
  add("h2", {{"Bad Name", "v"}});
  add("h3", {{"X-Nul", std::string("a\0b", 3)}});
  add("h4", {{"Host", "a\r\nb"}, {"X-Fine", "ok"}});
  const std::string capture = dir.write("cap.jsonl", file);
  const std::string expected = capture + ":1: headers.X-Bad: cannot be sent as an HTTP header\n" + capture +
                               ":2: headers.Bad Name: cannot be sent as an HTTP header\n" + capture +
                               ":3: headers.X-Nul: cannot be sent as an HTTP header\n";

  auto offline = run_healthhook({"replay", capture, "--database", dir.file("out.db")});
  BOOST_TEST(offline.exit_code == 1);
  BOOST_TEST(lines_about(offline.stderr_text, capture) == expected, offline.stderr_text);  // the processor logs too
  BOOST_TEST(offline.stdout_text.find(R"("lines":4,"stored":1,"duplicates":0,"failed":3)") != std::string::npos,
             offline.stdout_text);

  ScriptedServer receiver([](ServerSide& side) {
    while (side.read_request()) side.send(ok_response(R"({"status":"stored"})"));
  });
  const std::string url = "http://127.0.0.1:" + std::to_string(receiver.port()) + "/webhooks";
  auto sent = run_healthhook({"replay", capture, "--to", url, "--secret-file", dir.write("secret", random_secret())});
  BOOST_TEST(sent.exit_code == 1);
  BOOST_TEST(lines_about(sent.stderr_text, capture) == expected, sent.stderr_text);
  BOOST_TEST(receiver.requests() == 1u);
}

BOOST_AUTO_TEST_CASE(capture_event_type_takes_the_shells_negated_set) {
  TempDir dir;
  std::string file;
  int i = 0;
  for (const std::string resource : {"heartrate", "steps", "glucose"}) {
    file += capture_line("g-" + resource, 1700000000 + i++,
                         samples_body("u1", resource, "oura", {{"2024-05-16T10:00:00Z", 1}}));
  }
  const std::string db = dir.file("g.db");
  auto replayed = run_healthhook({"replay", dir.write("cap.jsonl", file), "--database", db});
  BOOST_TEST_REQUIRE(replayed.exit_code == 0, replayed.stderr_text);
  for (const std::string glob : {"daily.data.[!h]*", "daily.data.[^h]*"}) {
    auto captured = run_healthhook({"capture", "--database", db, "--event-type", glob});
    BOOST_TEST(captured.exit_code == 0, captured.stderr_text);
    BOOST_TEST(captured.stdout_text.find("\"g-steps\"") != std::string::npos, glob);
    BOOST_TEST(captured.stdout_text.find("\"g-glucose\"") != std::string::npos, glob);
    BOOST_TEST(captured.stdout_text.find("\"g-heartrate\"") == std::string::npos, glob);
  }
  // `!` anywhere but first in a set is itself.
  auto literal = run_healthhook({"capture", "--database", db, "--event-type", "daily.data.[h!]*"});
  BOOST_TEST(literal.stdout_text.find("\"g-heartrate\"") != std::string::npos, literal.stdout_text);
  BOOST_TEST(literal.stdout_text.find("\"g-steps\"") == std::string::npos, literal.stdout_text);
  auto help = run_healthhook({"capture", "--help"});
  BOOST_TEST(help.stdout_text.find("[!h] or [^h] any but these") != std::string::npos, help.stdout_text);
}

// A message id that is not UTF-8 (stored live as received) was captured with U+FFFD in
// place of its bytes: replayed into the same store it was a second message. Captured as
// id_base64 now, the replay finds it a duplicate.
BOOST_AUTO_TEST_CASE(an_id_that_is_not_utf8_survives_capture_and_replay) {
  TempDir dir;
  const std::string id = "msg_\xff" "1";
  const std::string db = dir.file("nu.db");
  auto stored = run_healthhook({"replay", dir.write("in.jsonl", capture_line(id, 1700000000, "{}")), "--database", db});
  BOOST_TEST_REQUIRE(stored.exit_code == 0, stored.stderr_text);
  const std::string capture = dir.file("cap.jsonl");
  auto captured = run_healthhook({"capture", "--database", db, "-o", capture});
  BOOST_TEST_REQUIRE(captured.exit_code == 0, captured.stderr_text);
  auto again = run_healthhook({"replay", capture, "--database", db});
  BOOST_TEST(again.exit_code == 0, again.stderr_text);
  BOOST_TEST(again.stdout_text.find(R"("stored":0,"duplicates":1)") != std::string::npos, again.stdout_text);
  BOOST_TEST(query_int(db, "SELECT count(*) FROM deliveries") == 1);
}

BOOST_AUTO_TEST_SUITE_END()  // replay_input_test
