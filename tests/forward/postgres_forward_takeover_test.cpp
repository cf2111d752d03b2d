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
#include "tests/forward/serve_support.h"
#include "tests/support/examples.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(postgres_forward_takeover_test)

using namespace hh;
using namespace hh::test::forward_serve;
using namespace std::chrono_literals;

namespace {

int64_t pg_int(const std::string& uri, const std::string& sql) {
  auto db = store::connect({uri, ""});
  BOOST_REQUIRE_MESSAGE(db, db.error());
  auto value = db->query_int(sql);
  BOOST_REQUIRE_MESSAGE(value, value.error() + ": " + sql);
  return value->value_or(-1);
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
