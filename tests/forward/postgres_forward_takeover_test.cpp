// Two `serve` instances forwarding from one PostgreSQL store (spec §9, §10; issue 45 under
// attack): one forwards at a time (the forwarding lock of store/postgres/outbox/), and when
// it is killed -9 with POSTs the backend applied but never answered, the other takes over
// with the same pins: each such POST goes out again under its webhook-id with the same
// changes, nothing is lost, and no webhook-id ever carries two contents. The real binary,
// a throw-away PostgreSQL server, the signature-checking fake backend.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "store/postgres/database.h"
#include "tests/forward/fake_backend.h"
#include "tests/support/examples.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(postgres_forward_takeover_test)

using namespace hh;
using namespace std::chrono_literals;

namespace {

constexpr const char* kSleepUser = "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2";
constexpr const char* kSleepId = "5b1c8d0a-6f1e-4a43-9d3c-2f6c2b9e7a11";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string sleep_of(const std::string& user, const std::string& summary_id) {
  return replaced(replaced(test::example_file("summary-sleep.json"), kSleepUser, user), kSleepId, summary_id);
}

int64_t pg_int(const std::string& uri, const std::string& sql) {
  auto db = store::connect({uri, ""});
  BOOST_REQUIRE_MESSAGE(db, db.error());
  auto value = db->query_int(sql);
  BOOST_REQUIRE_MESSAGE(value, value.error() + ": " + sql);
  return value->value_or(-1);
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

// The change ids ("hhf_N") a changes-mode body carries, in order.
std::vector<std::string> change_ids_in(const std::string& body) {
  std::vector<std::string> ids;
  for (size_t at = body.find("{\"id\":\"hhf_"); at != std::string::npos; at = body.find("{\"id\":\"hhf_", at + 1)) {
    ids.push_back(body.substr(at + 7, body.find('"', at + 7) - at - 7));
  }
  return ids;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_other_instance_takes_over_a_killed_forwarder_with_its_pins_and_ids) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  const std::string secret = test::random_secret();
  test::FakeBackend::Options options;
  options.secret = secret;
  test::FakeBackend backend(options);
  // While `applied_only`, every POST is applied (recorded) and its answer trickles for
  // longer than timeout_ms: the sender never learns that it was.
  std::atomic<bool> applied_only{true};
  backend.set_plan([&](const test::BackendRequest&) {
    test::BackendFault fault;
    if (applied_only) fault.drip = 400ms;
    return fault;
  });
  const std::string forward = "[[forward]]\nname = \"backend\"\nurl = \"" + backend.url() +
                              "\"\nsecret_file = \"backend.secret\"\nbatch = 3\nconcurrency = 2\ntimeout_ms = 2000\n"
                              "backoff_initial_ms = 50\nbackoff_max_s = 1\n";
  test::TempDir dir_a, dir_b;
  dir_a.write("backend.secret", secret + "\n");
  dir_b.write("backend.secret", secret + "\n");
  const std::vector<std::string> env = {"HEALTHHOOK_DATABASE=" + uri};
  test::ServerProcess a(dir_a, forward, 30s, env);
  constexpr int kDeliveries = 30;
  {
    test::HttpClient client(a.port());
    for (int i = 0; i < kDeliveries; ++i) {
      const std::string user = "7a7a7a7a-0000-4000-8000-0000000000" + std::to_string(10 + i);
      BOOST_REQUIRE_EQUAL(client.post_webhook(a.secret(), "t-" + std::to_string(i), sleep_of(user, "s")).status, 200);
    }
  }
  // A forwards (alone so far); B starts beside it and waits for the lock.
  BOOST_REQUIRE(wait_until([&] { return backend.unique_accepted() >= 2; }, 30s));
  test::ServerProcess b(dir_b, forward, 30s, env);
  const size_t requests_before_kill = backend.requests();
  // The forwarder dies with POSTs applied and unanswered: pinned, still pending.
  a.kill_hard();
  const auto before = backend.accepted();
  BOOST_REQUIRE(!before.empty());
  BOOST_TEST(pg_int(uri, "SELECT count(*) FROM outbox WHERE post_id IS NOT NULL") > 0);
  applied_only = false;
  BOOST_REQUIRE(wait_until(
      [&] {
        return pg_int(uri, "SELECT count(*) FROM deliveries WHERE status = 'processed'") == kDeliveries &&
               pg_int(uri, "SELECT count(*) FROM outbox") == 0;
      },
      120s));
  const int64_t changes = pg_int(uri, "SELECT count(*) FROM changes");
  // Every change applied once by a backend that deduplicates by webhook-id; each id with one
  // content, before the kill and after it.
  std::map<std::string, std::vector<std::string>> content;
  std::set<std::string> applied;
  for (const auto& r : backend.accepted()) {
    const auto ids = change_ids_in(r.body);
    auto [it, first] = content.try_emplace(r.id, ids);
    if (first) {
      applied.insert(ids.begin(), ids.end());
    } else {
      BOOST_TEST((it->second == ids), "webhook-id " << r.id << " carried two contents");
    }
  }
  BOOST_TEST(applied.size() == static_cast<size_t>(changes));
  // The POSTs applied before the kill went out again (B had them pinned), as repeats.
  size_t repeated = 0;
  for (const auto& r : before) {
    const auto all = backend.accepted();
    repeated += std::count_if(all.begin(), all.end(), [&](const auto& x) { return x.id == r.id && x.duplicate; }) > 0;
  }
  BOOST_TEST(repeated > 0u);
  BOOST_TEST(backend.requests() > requests_before_kill);  // B sent them
  BOOST_TEST(backend.bad_signatures() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
