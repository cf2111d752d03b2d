// When a replay stops rather than skip a line: `replay --to` at a line the receiver keeps
// answering "not now" (429, 5xx) or never answers, and after the first answers all refused
// the secret; an offline replay the store stops still says what it stored and applied.
#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <thread>

#include "receiver/signature/webhook_signature.h"
#include "replay/capture_file.h"
#include "replay/offline_replay.h"
#include "store/open_store.h"
#include "tests/http_client/scripted_server.h"
#include "tests/io/io_fixtures.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(replay_stops_test)

using namespace hh::test;
using namespace hh::test::io;

namespace {

std::string signed_line(const std::string& secret, const std::string& id, int64_t timestamp, const std::string& body) {
  auto signature = hh::signature::sign(secret, id, std::to_string(timestamp), body);
  BOOST_REQUIRE(signature.ok());
  const std::vector<hh::replay::CaptureHeader> headers = {{"svix-id", id},
                                                          {"svix-timestamp", std::to_string(timestamp)},
                                                          {"svix-signature", *signature}};
  std::string line;
  hh::replay::append_capture_line(line, id, timestamp, headers, body);
  return line;
}

std::string response(unsigned status, std::string_view reason, std::string_view body, std::string_view headers = "") {
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n" + std::string(headers) +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

// A time of its own for each i < 3600: every sample is a row of its own.
std::string sample_time(int i) {
  const auto two = [](int n) { return std::string(n < 10 ? "0" : "") + std::to_string(n); };
  return "2024-05-16T10:" + two(i / 60) + ":" + two(i % 60) + "Z";
}

size_t count_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// A receiver that answers the first delivery, then goes away: it stops listening once it
// has accepted its one connection, and closes that connection after the first answer.
class ReceiverGoingAway {
 public:
  ReceiverGoingAway()
      : acceptor_(io_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
        port_(acceptor_.local_endpoint().port()),
        thread_([this] { answer_once(); }) {}
  ~ReceiverGoingAway() {
    if (!accepted_) {  // never reached: a connection of our own ends the accept
      boost::system::error_code ec;
      tcp::socket socket(io_);
      socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port_), ec);
    }
    thread_.join();
  }
  ReceiverGoingAway(const ReceiverGoingAway&) = delete;
  ReceiverGoingAway& operator=(const ReceiverGoingAway&) = delete;
  unsigned short port() const { return port_; }

 private:
  using tcp = boost::asio::ip::tcp;
  void answer_once() {
    boost::system::error_code ec;
    tcp::socket socket(io_);
    acceptor_.accept(socket, ec);
    accepted_ = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    if (ec) return;
    boost::beast::flat_buffer buffer;
    boost::beast::http::request<boost::beast::http::string_body> request;
    boost::beast::http::read(socket, buffer, request, ec);
    if (ec) return;
    boost::asio::write(socket, boost::asio::buffer(ok_response(R"({"status":"stored"})")), ec);
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  unsigned short port_;
  std::atomic<bool> accepted_{false};
  std::thread thread_;  // last: starts once the rest is in place
};

}  // namespace

// The receiver answers line 2 "not now" (a full disk: 503; or 429, or another 5xx) until
// replay gives up on it. Line 3 must not be sent then: it would store a later version of
// line 2's rows first, and the same command run again (the way to add what failed) would
// store line 2's older version last. The run stops at line 2, as when nothing can be
// reached, and the second run sends lines 2 and 3 in order. (It used to report
// "cap:2: HTTP 503" and go on with line 3.)
BOOST_AUTO_TEST_CASE(a_line_the_receiver_keeps_refusing_for_now_stops_the_run_at_that_line) {
  for (const auto& [status, reason] : std::vector<std::pair<unsigned, std::string>>{
           {503, "Service Unavailable"}, {429, "Too Many Requests"}, {500, "Internal Server Error"}}) {
    std::atomic<int> requests{0};
    ScriptedServer receiver([&, status = status, reason = reason](ServerSide& side) {
      while (side.read_request()) {
        const int n = ++requests;
        if (n >= 2 && n <= 6) {  // line 2, all five attempts
          side.send(response(status, reason, R"({"error":"not now"})", "Retry-After: 0\r\n"));
        } else {
          side.send(ok_response(R"({"status":"stored"})"));
        }
      }
    });
    TempDir dir;
    const std::string secret = random_secret();
    const std::string secret_file = dir.write("secret", secret);
    std::string file;
    for (int i = 1; i <= 3; ++i) file += signed_line(secret, "s" + std::to_string(i), 1700000000 + i, "{}");
    const std::string capture = dir.write("cap.jsonl", file);
    const std::string url = "http://127.0.0.1:" + std::to_string(receiver.port()) + "/webhooks";

    auto first = run_healthhook({"replay", capture, "--to", url, "--secret-file", secret_file});
    BOOST_TEST(first.exit_code == 1, status);
    BOOST_TEST(receiver.requests() == 6u, status);  // line 1, then line 2 five times; line 3 not sent
    BOOST_TEST(first.stderr_text.find(capture + ":2: HTTP " + std::to_string(status) + ": {\"error\":\"not now\"}") !=
                   std::string::npos,
               first.stderr_text);
    BOOST_TEST(first.stderr_text.find("stopped here") != std::string::npos, first.stderr_text);
    BOOST_TEST(first.stderr_text.find(capture + ":3:") == std::string::npos, first.stderr_text);
    BOOST_TEST(count_lines(first.stderr_text) == 1u, first.stderr_text);
    BOOST_TEST(first.stdout_text.find(R"("answered":2,"statuses":{"200":1,")" + std::to_string(status) +
                                      R"(":1},"stored":1,"duplicates":0,"failed":1,"bodies_removed":0,"stopped":true)") !=
                   std::string::npos,
               first.stdout_text);

    auto again = run_healthhook({"replay", capture, "--to", url, "--secret-file", secret_file});
    BOOST_TEST(again.exit_code == 0, again.stderr_text);
    BOOST_TEST(receiver.requests() == 9u, status);
  }
}

// The receiver answers line 1, then goes away (it stops listening and closes the
// connection): line 2 cannot be sent, and the run stops there, naming it.
BOOST_AUTO_TEST_CASE(a_receiver_that_goes_away_mid_run_stops_the_run_at_the_line_not_sent) {
  ReceiverGoingAway receiver;
  TempDir dir;
  const std::string secret = random_secret();
  const std::string secret_file = dir.write("secret", secret);
  std::string file;
  for (int i = 1; i <= 3; ++i) file += signed_line(secret, "g" + std::to_string(i), 1700000000 + i, "{}");
  const std::string capture = dir.write("cap.jsonl", file);
  const std::string address = "127.0.0.1:" + std::to_string(receiver.port());
  auto sent = run_healthhook({"replay", capture, "--to", "http://" + address + "/webhooks", "--secret-file", secret_file});
  BOOST_TEST(sent.exit_code == 1);
  BOOST_TEST(sent.stderr_text.find(capture + ":2: cannot connect to " + address + ": ") != std::string::npos,
             sent.stderr_text);
  BOOST_TEST(sent.stderr_text.find("; stopped here: ") != std::string::npos, sent.stderr_text);
  BOOST_TEST(sent.stderr_text.find(capture + ":3:") == std::string::npos, sent.stderr_text);
  BOOST_TEST(count_lines(sent.stderr_text) == 1u, sent.stderr_text);
  BOOST_TEST(sent.stdout_text.find(R"("stored":1,"duplicates":0,"failed":1,"bodies_removed":0,"stopped":true)") !=
                 std::string::npos,
             sent.stdout_text);
}

// A peer that keeps the exchange alive without ever answering (a proxy sending 102
// Processing every 100 ms, under read_timeout's 30 s of silence) held `replay --to` for
// ever: each attempt now ends at --timeout, and after three the run stops at its line
// (attack, stop 82).
BOOST_AUTO_TEST_CASE(a_receiver_that_never_finishes_its_answer_stops_the_run_at_timeout) {
  ScriptedServer receiver([](ServerSide& side) {
    while (side.read_request()) {
      for (int i = 0; i < 600; ++i) {  // a minute at most; the server's destructor cuts it short
        side.send("HTTP/1.1 102 Processing\r\n\r\n");
        side.stall(std::chrono::milliseconds(100));
      }
    }
  });
  TempDir dir;
  const std::string secret = random_secret();
  const std::string secret_file = dir.write("secret", secret);
  const std::string capture = dir.write("cap.jsonl", signed_line(secret, "p1", 1700000001, "{}") +
                                                         signed_line(secret, "p2", 1700000002, "{}"));
  const std::string url = "http://127.0.0.1:" + std::to_string(receiver.port()) + "/webhooks";
  auto sent = run_healthhook({"replay", capture, "--to", url, "--secret-file", secret_file, "--timeout", "1"});
  BOOST_TEST(sent.exit_code == 1);
  BOOST_TEST(sent.stderr_text.find(capture + ":1: no answer from " + url + ": no whole answer within 1 s (--timeout)") !=
                 std::string::npos,
             sent.stderr_text);
  BOOST_TEST(sent.stderr_text.find("stopped here") != std::string::npos, sent.stderr_text);
  BOOST_TEST(count_lines(sent.stderr_text) == 1u, sent.stderr_text);
  BOOST_TEST(receiver.requests() == 3u);  // three attempts of line 1; line 2 not sent
  BOOST_TEST(sent.stdout_text.find(R"("answered":0,"statuses":{},"stored":0,"duplicates":0,"failed":1)") !=
                 std::string::npos,
             sent.stdout_text);

  auto misplaced = run_healthhook({"replay", capture, "--timeout", "5"});  // offline: nothing to time
  BOOST_TEST(misplaced.exit_code == 2);
  BOOST_TEST(misplaced.stderr_text.find("--timeout is used with --to") != std::string::npos, misplaced.stderr_text);
  auto zero = run_healthhook({"replay", capture, "--to", url, "--secret-file", secret_file, "--timeout", "0"});
  BOOST_TEST(zero.exit_code == 2);
  BOOST_TEST(zero.stderr_text.find("--timeout: must be between 1 and 86400 seconds") != std::string::npos,
             zero.stderr_text);
}

// An answer that is final for its line (400 invalid, 413 too large) fails that line only:
// the next one is sent.
BOOST_AUTO_TEST_CASE(an_answer_final_for_its_line_moves_on_to_the_next) {
  std::atomic<int> requests{0};
  ScriptedServer receiver([&](ServerSide& side) {
    while (side.read_request()) {
      const int n = ++requests;
      if (n == 1) {
        side.send(response(400, "Bad Request", R"({"error":"invalid"})"));
      } else if (n == 2) {
        side.send(response(413, "Content Too Large", R"({"error":"too large"})"));
      } else {
        side.send(ok_response(R"({"status":"stored"})"));
      }
    }
  });
  TempDir dir;
  const std::string secret = random_secret();
  const std::string secret_file = dir.write("secret", secret);
  std::string file;
  for (int i = 1; i <= 3; ++i) file += signed_line(secret, "f" + std::to_string(i), 1700000000 + i, "{}");
  const std::string capture = dir.write("cap.jsonl", file);
  const std::string url = "http://127.0.0.1:" + std::to_string(receiver.port()) + "/webhooks";
  auto sent = run_healthhook({"replay", capture, "--to", url, "--secret-file", secret_file});
  BOOST_TEST(sent.exit_code == 1);
  BOOST_TEST(receiver.requests() == 3u);
  BOOST_TEST(sent.stdout_text.find(R"("statuses":{"200":1,"400":1,"413":1},"stored":1,"duplicates":0,"failed":2,"bodies_removed":0,"stopped":false)") !=
                 std::string::npos,
             sent.stdout_text);
}

// A receiver refuses a body over its max_body_bytes (413) after the head, reads and drops a
// bounded part of it (the receiver at most 64 MiB, lingering_close.h) and closes. The body
// was written whole before the answer was read: the write failed ("sending the request:
// connection closed by the server (Broken pipe); stopped here"), on every run again, so the
// run never got past that line. A large body now waits for the receiver's word (Expect:
// 100-continue): the 413 fails its line and the next line is sent.
BOOST_AUTO_TEST_CASE(a_large_body_the_receiver_refuses_after_its_head_fails_only_its_line) {
  ScriptedServer receiver([](ServerSide& side) {
    while (side.read_head()) {
      if (side.content_length() > 1024 * 1024) {  // the receiver's max_body_bytes, say
        side.send(response(413, "Content Too Large", R"({"error":"too large"})", "Connection: close\r\n"));
        side.drain(64 * 1024);
        return;  // closed with the rest of the body unread: the client's write then fails
      }
      if (!side.read_body()) return;
      side.send(ok_response(R"({"status":"stored"})"));
    }
  });
  TempDir dir;
  const std::string secret = random_secret();
  const std::string secret_file = dir.write("secret", secret);
  // Far more than the socket buffers hold on both sides: written whole, it cannot all be
  // taken before the receiver closes.
  const std::string large_body = "\"" + std::string(32 * 1024 * 1024, 'x') + "\"";
  const std::string capture = dir.write(
      "cap.jsonl", signed_line(secret, "big", 1700000001, large_body) + signed_line(secret, "small", 1700000002, "{}"));
  const std::string url = "http://127.0.0.1:" + std::to_string(receiver.port()) + "/webhooks";
  auto sent = run_healthhook({"replay", capture, "--to", url, "--secret-file", secret_file});
  BOOST_TEST(sent.exit_code == 1);
  BOOST_TEST(sent.stderr_text == capture + ":1: HTTP 413: {\"error\":\"too large\"}\n", sent.stderr_text);
  BOOST_TEST(sent.stdout_text.find(R"("statuses":{"200":1,"413":1},"stored":1,"duplicates":0,"failed":1,"bodies_removed":0,"stopped":false)") !=
                 std::string::npos,
             sent.stdout_text);
}

// The large body goes once the receiver answers 100 Continue, or after a second of
// silence from one that ignores Expect (as curl does): either way it is stored.
BOOST_AUTO_TEST_CASE(a_large_body_goes_after_100_continue_or_without_it) {
  TempDir dir;
  const std::string secret = random_secret();
  const std::string secret_file = dir.write("secret", secret);
  const std::string large_body = "\"" + std::string(2 * 1024 * 1024, 'y') + "\"";
  const std::string capture = dir.write(
      "cap.jsonl", signed_line(secret, "big", 1700000001, large_body) + signed_line(secret, "small", 1700000002, "{}"));

  std::atomic<int> asked_to_continue{0};
  ScriptedServer continuing([&](ServerSide& side) {
    while (side.read_head()) {
      if (side.expects_continue()) {
        ++asked_to_continue;
        side.send("HTTP/1.1 100 Continue\r\n\r\n");
      }
      if (!side.read_body()) return;
      side.send(ok_response(R"({"status":"stored"})"));
    }
  });
  const std::string url = "http://127.0.0.1:" + std::to_string(continuing.port()) + "/webhooks";
  auto sent = run_healthhook({"replay", capture, "--to", url, "--secret-file", secret_file});
  BOOST_TEST(sent.exit_code == 0, sent.stderr_text);
  BOOST_TEST(asked_to_continue.load() == 1);  // the large body only
  BOOST_TEST(continuing.requests() == 2u);
  BOOST_TEST(sent.stdout_text.find(R"("statuses":{"200":2},"stored":2,)") != std::string::npos, sent.stdout_text);

  ScriptedServer ignoring([](ServerSide& side) {  // never says 100 Continue
    while (side.read_head() && side.read_body()) side.send(ok_response(R"({"status":"stored"})"));
  });
  const std::string url2 = "http://127.0.0.1:" + std::to_string(ignoring.port()) + "/webhooks";
  auto unanswered = run_healthhook({"replay", capture, "--to", url2, "--secret-file", secret_file});
  BOOST_TEST(unanswered.exit_code == 0, unanswered.stderr_text);
  BOOST_TEST(ignoring.requests() == 2u);
  BOOST_TEST(unanswered.stdout_text.find(R"("statuses":{"200":2},"stored":2,)") != std::string::npos,
             unanswered.stdout_text);
}

// Signed with a secret the receiver does not hold, every line is refused (401), each held
// refusal_delay_ms by the receiver: a capture of a million lines ran for days. When the
// first 20 answers are all 401, the run stops with one line saying why.
BOOST_AUTO_TEST_CASE(a_secret_the_receiver_refuses_stops_the_run_after_the_first_answers) {
  ScriptedServer refusing([](ServerSide& side) {
    while (side.read_request()) side.send(response(401, "Unauthorized", R"({"error":"no matching signature"})"));
  });
  TempDir dir;
  const std::string secret = random_secret();
  const std::string secret_file = dir.write("secret", secret);
  std::string file;
  for (int i = 1; i <= 30; ++i) file += signed_line(secret, "w" + std::to_string(i), 1700000000 + i, "{}");
  const std::string capture = dir.write("cap.jsonl", file);
  const std::string url = "http://127.0.0.1:" + std::to_string(refusing.port()) + "/webhooks";
  auto sent = run_healthhook({"replay", capture, "--to", url, "--secret-file", secret_file});
  BOOST_TEST(sent.exit_code == 1);
  BOOST_TEST(refusing.requests() == 20u);
  BOOST_TEST(sent.stdout_text.find(R"("statuses":{"401":20},"stored":0,"duplicates":0,"failed":20,"bodies_removed":0,"stopped":true)") !=
                 std::string::npos,
             sent.stdout_text);
  BOOST_TEST(sent.stderr_text.find("healthhook replay: the receiver refused the signatures of the first 20 deliveries "
                                   "(HTTP 401) and accepted none: wrong secret?") != std::string::npos,
             sent.stderr_text);
  BOOST_TEST(sent.stderr_text.find(capture + ":21:") == std::string::npos, sent.stderr_text);

  // A receiver that accepted a delivery holds the secret: a later run of 401s (deliveries
  // it refuses for another reason) does not stop the run.
  std::atomic<int> requests{0};
  ScriptedServer accepting_first([&](ServerSide& side) {
    while (side.read_request()) {
      side.send(++requests == 1 ? ok_response(R"({"status":"stored"})")
                                : response(401, "Unauthorized", R"({"error":"no matching signature"})"));
    }
  });
  const std::string url2 = "http://127.0.0.1:" + std::to_string(accepting_first.port()) + "/webhooks";
  auto mixed = run_healthhook({"replay", capture, "--to", url2, "--secret-file", secret_file});
  BOOST_TEST(mixed.exit_code == 1);
  BOOST_TEST(accepting_first.requests() == 30u);
  BOOST_TEST(mixed.stdout_text.find(R"("stopped":false)") != std::string::npos, mixed.stdout_text);
}

// An offline replay the store stops (max_database_mib reached) after the processor has run
// says what it applied: it printed "processed":0,"samples":0 while the store held the rows.
BOOST_AUTO_TEST_CASE(an_offline_replay_the_store_stops_counts_what_it_applied) {
  TempDir dir;
  const std::string db = dir.file("small.db");
  const std::string pad(8000, 'x');
  std::string file;
  constexpr int kLines = 400;  // about 3.2 MB of bodies, past the 1 MiB set below
  for (int i = 0; i < kLines; ++i) {
    file += signed_line(random_secret(), "m" + std::to_string(i), 1700000000 + i,
                        samples_body("u1", "steps", "oura", {{sample_time(i), i}}, "count")
                            .insert(1, R"("pad":")" + pad + R"(",)"));
  }
  const std::string capture = dir.write("big.jsonl", file);
  hh::replay::OfflineSummary summary;
  {
    hh::store::StoreOptions options;
    options.sqlite.max_database_mib = 1;
    auto store = hh::store::open_store(hh::store::Database(db), options);
    BOOST_TEST_REQUIRE(store.ok(), store.error());
    hh::replay::OfflineOptions replay_options;
    replay_options.batch_deliveries = 10;
    replay_options.process_every = 20;  // the processor runs before the store is full
    auto replayer = hh::replay::OfflineReplay::create(**store, replay_options);
    BOOST_TEST_REQUIRE(replayer.ok(), replayer.error());
    auto reader = hh::replay::CaptureReader::open(capture);
    BOOST_TEST_REQUIRE(reader.ok(), reader.error());
    auto added = (*replayer)->add(*reader, [](std::string_view, uint64_t, std::string_view) {}, nullptr, 0);
    BOOST_TEST_REQUIRE(!added.ok(), "the store should have stopped the replay");
    summary = (*replayer)->summary();
  }
  const long long applied = query_int(db, "SELECT applied_seq FROM processor_state");
  BOOST_TEST_REQUIRE(applied > 0);
  BOOST_TEST(summary.stored < static_cast<uint64_t>(kLines));
  BOOST_TEST(summary.processed + summary.invalid + summary.ignored + summary.unknown == static_cast<uint64_t>(applied));
  BOOST_TEST(summary.samples == static_cast<uint64_t>(query_int(db, "SELECT count(*) FROM samples")));
  BOOST_TEST(summary.seconds > 0);
}

BOOST_AUTO_TEST_SUITE_END()  // replay_stops_test
