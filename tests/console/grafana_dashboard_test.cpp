// The Grafana dashboard in the repository (docs/grafana/healthhook-overview.json: the
// console's overview for teams that run Prometheus) uses only metrics that a running
// server's /metrics has: every healthhook_* name in a query must be a family there (with
// one [[forward]] destination, so the forwarding families are written too).
#include <boost/test/unit_test.hpp>
#include <regex>

#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(grafana_dashboard_test)

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The family a sample name belongs to (a histogram's _bucket, _sum and _count).
std::string family_of(const std::string& name, const std::string& exposition) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.ends_with(s)) {
      const std::string base = name.substr(0, name.size() - s.size());
      if (exposition.find("# TYPE " + base + " histogram") != std::string::npos) return base;
    }
  }
  return name;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_metric_of_the_dashboard_exists) {
  const std::string dashboard = read_file(std::string(HEALTHHOOK_SOURCE_DIR) + "/docs/grafana/healthhook-overview.json");
  BOOST_REQUIRE(!dashboard.empty());
  // The names in the queries ("expr") and the variables' queries.
  std::set<std::string> used;
  const std::regex expr("\"(expr|query)\": \"([^\"\\\\]|\\\\.)*\"");
  const std::regex metric("healthhook_[a-z0-9_]+");
  for (auto it = std::sregex_iterator(dashboard.begin(), dashboard.end(), expr); it != std::sregex_iterator(); ++it) {
    const std::string text = it->str();
    for (auto m = std::sregex_iterator(text.begin(), text.end(), metric); m != std::sregex_iterator(); ++m) {
      used.insert(m->str());
    }
  }
  BOOST_TEST(used.size() >= 10u);

  hh::test::TempDir dir;
  dir.write("backend.secret", hh::test::random_secret() + "\n");
  hh::test::ServerProcess server(
      dir, "[[forward]]\nname = \"backend\"\nurl = \"http://127.0.0.1:9/hooks\"\nsecret_file = \"backend.secret\"\n");
  hh::test::HttpClient client(server.port());
  const hh::test::HttpResponse metrics = client.get("/metrics");
  BOOST_REQUIRE(metrics.status == 200);
  for (const auto& name : used) {
    const std::string family = family_of(name, metrics.body);
    BOOST_TEST(metrics.body.find("# TYPE " + family + " ") != std::string::npos, name << " is not in /metrics");
  }
}

BOOST_AUTO_TEST_SUITE_END()
