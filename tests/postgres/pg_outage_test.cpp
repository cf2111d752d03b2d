// The listener's reads while its PostgreSQL server is down or frozen (decision 080), on the
// real binary over HTTP: the read API and the console's data answer 503 with Retry-After
// (as the webhook path does) while the database cannot answer, and 500 only for a fault of
// the query itself; a frozen server costs a read its reply timeout (request_deadline_ms),
// never as long as the server stays frozen, and the connection that waited is not used
// again; /metrics answers without the database's figures. Each test has a server of its
// own (stopped, or frozen with SIGSTOP and resumed by a scope guard). No timing assertions:
// a read that waited for the frozen server gets no answer within 15 times its deadline.
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <future>

#include "tests/support/examples.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(pg_outage_test)

using namespace hh;
using namespace std::chrono_literals;

namespace {

const std::string kToken = "outage-read-token-4f0c2a9e";

// `serve` on a PostgreSQL server of its own, with the read API and the console.
struct Outage {
  explicit Outage(const std::string& settings) {
    dir.write("read-token", kToken + "\n");
    server = std::make_unique<test::ServerProcess>(
        dir, settings + "[read_api]\ntoken_file = \"read-token\"\n[console]\nenabled = true\n", 30s,
        std::vector<std::string>{"HEALTHHOOK_DATABASE=" + uri});
    client = std::make_unique<test::HttpClient>(server->port(), 30s);
  }
  test::HttpResponse read(const std::string& target) { return client->get(target, bearer()); }
  static test::Headers bearer() { return {{"Authorization", "Bearer " + kToken}}; }
  // The database's name in `uri` ("postgresql:///t1?host=…").
  std::string database() const {
    const size_t begin = std::string("postgresql:///").size();
    return uri.substr(begin, uri.find('?') - begin);
  }

  test::PostgresCluster cluster;
  const std::string uri = cluster.fresh_database();
  test::TempDir dir;
  std::unique_ptr<test::ServerProcess> server;
  std::unique_ptr<test::HttpClient> client;
};

// A console session signed in with the read token: its Cookie header.
std::string console_cookie(test::HttpClient& client) {
  const auto signed_in = client.request("POST", "/console/sign-in", "token=" + kToken,
                                        {{"Content-Type", "application/x-www-form-urlencoded"},
                                         {"X-Requested-With", "test"}});
  BOOST_REQUIRE_MESSAGE(signed_in.status == 200 || signed_in.status == 204, signed_in.status << " " << signed_in.body);
  const std::string set_cookie = signed_in.header("set-cookie");
  return set_cookie.substr(0, set_cookie.find(';'));
}

bool says_unavailable(const test::HttpResponse& r) {
  return r.status == 503 && r.body.find("database unavailable; retry later") != std::string::npos;
}

// Resumes a frozen server whatever happens, so that the test can end.
struct Thaw {
  const test::PostgresCluster& cluster;
  ~Thaw() { cluster.signal_all(SIGCONT); }
};

// GET `target` on a connection of its own, with `headers`, given 15 times the frozen test's
// deadline to answer (the test client's reads wait without a bound of their own). Not
// answered by then: no response (status 0), and the server is resumed so that the read,
// and the case, can end.
test::HttpResponse answered_while_frozen(const Outage& outage, const std::string& target, test::Headers headers) {
  const unsigned short port = outage.server->port();
  auto pending = std::async(std::launch::async, [port, target, headers] {
    return test::HttpClient(port).get(target, headers);
  });
  if (pending.wait_for(15s) == std::future_status::ready) return pending.get();
  outage.cluster.signal_all(SIGCONT);
  pending.wait();
  return {};
}

}  // namespace

// pg_ctl stop -m immediate (what PostgresCluster::stop does): every read that needs the
// database is 503 "database unavailable; retry later" with Retry-After, from a reader the
// pool kept (its connection gone), from one opened afresh, from the outbox and job pages
// (connections of their own) and through the console; /metrics still answers. Started
// again, the same requests are answered. A query that fails on a working server (its table
// renamed away: a bug, a broken schema) is 500 "database error", without Retry-After.
BOOST_AUTO_TEST_CASE(a_stopped_server_makes_reads_503_and_a_query_fault_stays_500) {
  Outage outage("retry_after_s = 7\n");
  auto& client = *outage.client;
  const auto posted =
      client.post_webhook(outage.server->secret(), "msg_outage_1", test::example_file("timeseries-steps.json"));
  BOOST_REQUIRE_EQUAL(posted.status, 200);
  const std::string cookie = console_cookie(client);
  BOOST_REQUIRE_EQUAL(outage.read("/v1/changes?after=0").status, 200);  // a reader kept by the pool
  BOOST_REQUIRE_EQUAL(outage.read("/v1/jobs").status, 200);

  outage.cluster.stop();
  for (const std::string target : {"/v1/changes?after=0", "/v1/users/user-1", "/v1/jobs", "/v1/forwarding"}) {
    const auto answer = outage.read(target);
    BOOST_TEST(says_unavailable(answer), target << ": " << answer.status << " " << answer.body);
    BOOST_TEST(answer.header("retry-after") == "7", target);
  }
  const auto console = client.get("/console/v1/changes?after=0", {{"Cookie", cookie}});
  BOOST_TEST(says_unavailable(console), console.status << " " << console.body);
  BOOST_TEST(console.header("retry-after") == "7");
  const auto metrics = client.get("/metrics");
  BOOST_TEST(metrics.status == 200);
  BOOST_TEST(metrics.body.find("\nhealthhook_store_metrics_ok 0\n") != std::string::npos, metrics.body);
  BOOST_TEST(metrics.body.find("\nhealthhook_deliveries_total{") != std::string::npos);

  outage.cluster.start();
  BOOST_TEST(outage.read("/v1/changes?after=0").status == 200);
  BOOST_TEST(outage.read("/v1/jobs").status == 200);

  outage.cluster.psql(outage.database(), "ALTER TABLE changes RENAME TO changes_away");
  const auto fault = outage.read("/v1/changes?after=0");
  BOOST_TEST(fault.status == 500, fault.body);
  BOOST_TEST(fault.body.find("database error") != std::string::npos, fault.body);
  BOOST_TEST(fault.header("retry-after").empty());
  outage.cluster.psql(outage.database(), "ALTER TABLE changes_away RENAME TO changes");
  BOOST_TEST(outage.read("/v1/changes?after=0").status == 200);
  BOOST_TEST(outage.server->stop() == 0);
}

// SIGSTOP of the postmaster and its backends: the server accepts connections into its
// socket's backlog and answers nothing. A page read on a kept connection, one that needs a
// new connection, and the job page each get 503 once request_deadline_ms has passed
// (not when the server resumes); /metrics answers without the database's figures. Resumed,
// the server answers the next reads on fresh connections: the ones that waited were
// closed, not left with a statement outstanding.
BOOST_AUTO_TEST_CASE(a_frozen_server_makes_reads_503_at_their_deadline_and_is_read_again_once_resumed) {
  Outage outage("request_deadline_ms = 1000\n");
  auto& client = *outage.client;
  BOOST_REQUIRE_EQUAL(
      client.post_webhook(outage.server->secret(), "msg_frozen_1", test::example_file("timeseries-steps.json")).status,
      200);
  const std::string cookie = console_cookie(client);
  BOOST_REQUIRE_EQUAL(outage.read("/v1/deliveries/msg_frozen_1").status, 200);
  BOOST_REQUIRE(client.get("/metrics").body.find("\nhealthhook_store_metrics_ok 1\n") != std::string::npos);

  outage.cluster.signal_all(SIGSTOP);
  Thaw thaw{outage.cluster};
  // The first read that is not answered ends the case (the server is resumed by then).
  const auto kept = answered_while_frozen(outage, "/v1/changes?after=0", Outage::bearer());  // the pool's reader
  BOOST_REQUIRE_MESSAGE(says_unavailable(kept), kept.status << " " << kept.body);
  BOOST_TEST(!kept.header("retry-after").empty());
  const auto reopened = answered_while_frozen(outage, "/v1/users/user-1", Outage::bearer());  // on a new connection
  BOOST_REQUIRE_MESSAGE(says_unavailable(reopened), reopened.status << " " << reopened.body);
  const auto jobs = answered_while_frozen(outage, "/v1/jobs", Outage::bearer());
  BOOST_REQUIRE_MESSAGE(says_unavailable(jobs), jobs.status << " " << jobs.body);
  const auto console = answered_while_frozen(outage, "/console/v1/changes?after=0", {{"Cookie", cookie}});
  BOOST_REQUIRE_MESSAGE(says_unavailable(console), console.status << " " << console.body);
  const auto metrics = answered_while_frozen(outage, "/metrics", {});
  BOOST_TEST(metrics.status == 200);
  BOOST_TEST(metrics.body.find("\nhealthhook_store_metrics_ok 0\n") != std::string::npos, metrics.body);
  BOOST_TEST(metrics.body.find("\nhealthhook_deliveries_total{") != std::string::npos);

  outage.cluster.signal_all(SIGCONT);
  const auto after = outage.read("/v1/deliveries/msg_frozen_1");
  BOOST_TEST(after.status == 200, after.body);
  BOOST_TEST(after.body.find("\"message_id\":\"msg_frozen_1\"") != std::string::npos, after.body);
  BOOST_TEST(outage.read("/v1/changes?after=0").status == 200);
  BOOST_TEST(client.get("/metrics").body.find("\nhealthhook_store_metrics_ok 1\n") != std::string::npos);
  BOOST_TEST(outage.server->stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
