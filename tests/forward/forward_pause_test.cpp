// Pausing a destination (`healthhook forward pause|resume`, the console's actions; store
// table forward_pauses): while paused nothing is sent and entries accumulate in the
// outbox; the pause survives a restart of `serve`; resume sends what waited.
#include <boost/test/unit_test.hpp>

#include "tests/forward/fake_backend.h"
#include "tests/support/database_probe.h"
#include "tests/support/examples.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(forward_pause_test)

using namespace hh;
using namespace std::chrono_literals;

namespace {

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout = 30s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

bool paused_in_metrics(test::HttpClient& client, bool paused) {
  return client.get("/metrics").body.find("healthhook_forward_paused{destination=\"backend\"} " +
                                          std::string(paused ? "1" : "0")) != std::string::npos;
}

int64_t pending(const test::ServerProcess& server) {
  return test::query_int(server.database(), "SELECT count(*) FROM outbox WHERE state = 'pending'");
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_paused_destination_gets_nothing_until_resumed_even_across_a_restart) {
  const std::string secret = test::random_secret();
  test::FakeBackend::Options options;
  options.secret = secret;
  test::FakeBackend backend(options);
  test::TempDir dir;
  dir.write("backend.secret", secret + "\n");
  test::ServerProcess server(dir, "[[forward]]\nname = \"backend\"\nurl = \"" + backend.url() +
                                      "\"\nsecret_file = \"backend.secret\"\nmode = \"deliveries\"\n");
  test::HttpClient client(server.port());
  const std::string config = server.config_file();

  auto paused = test::run_healthhook({"forward", "pause", "backend", "--config", config});
  BOOST_REQUIRE_MESSAGE(paused.exit_code == 0, paused.stderr_text);
  BOOST_TEST(paused.stdout_text == "backend paused\n");
  BOOST_TEST(test::run_healthhook({"forward", "pause", "1", "--config", config}).stdout_text ==
             "backend paused (it already was)\n");
  BOOST_TEST(test::run_healthhook({"forward", "pause", "nobody", "--config", config}).exit_code == 2);
  BOOST_REQUIRE(eventually([&] { return paused_in_metrics(client, true); }));
  // Nothing forwarded yet: the summary still has the configured destination's line.
  for (const std::vector<std::string>& narrowed : {std::vector<std::string>{}, {"--destination", "backend"}}) {
    std::vector<std::string> args = {"forward", "list", "--config", config};
    args.insert(args.end(), narrowed.begin(), narrowed.end());
    const auto listed = test::run_healthhook(args);
    BOOST_TEST(listed.stdout_text.find("\nbackend ") != std::string::npos, listed.stdout_text);
  }

  const std::string body = test::example_file("timeseries-heartrate.json");
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_while_paused_1", body).status, 200);
  BOOST_REQUIRE(eventually([&] { return pending(server) == 1; }));
  std::this_thread::sleep_for(1500ms);  // the sender looks ten times a second: it must not send
  BOOST_TEST(backend.requests() == 0u);
  BOOST_TEST(test::run_healthhook({"forward", "list", "--config", config}).stdout_text.find("paused: backend") !=
             std::string::npos);

  // A restart keeps the pause: the sender does not send before it knows.
  BOOST_REQUIRE_EQUAL(server.stop(), 0);
  server.restart();
  test::HttpClient again(server.port());
  BOOST_REQUIRE_EQUAL(again.post_webhook(server.secret(), "msg_while_paused_2", body).status, 200);
  BOOST_REQUIRE(eventually([&] { return pending(server) == 2; }));
  BOOST_TEST(paused_in_metrics(again, true));
  std::this_thread::sleep_for(1500ms);
  BOOST_TEST(backend.requests() == 0u);

  auto resumed = test::run_healthhook({"forward", "resume", "backend", "--config", config});
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.stderr_text);
  BOOST_TEST(resumed.stdout_text == "backend resumed\n");
  BOOST_REQUIRE(backend.wait_for_unique(2, 30s));
  BOOST_TEST((backend.accepted_ids() == std::set<std::string>{"msg_while_paused_1", "msg_while_paused_2"}));
  BOOST_TEST(eventually([&] { return pending(server) == 0 && paused_in_metrics(again, false); }));
}

BOOST_AUTO_TEST_SUITE_END()
