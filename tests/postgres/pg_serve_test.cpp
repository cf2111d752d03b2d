// Several `healthhook serve` instances on one PostgreSQL store (spec §9), run as a user runs
// them: the real binary with `database = "postgresql://…"` (HEALTHHOOK_DATABASE), signed
// deliveries over HTTP on 127.0.0.1, a throw-away PostgreSQL server. What they leave is read
// with `healthhook query … --database <uri>` and compared, as text, with what SQLite leaves
// for the same deliveries: a SQLite-backed `serve` given them in the same order, or a SQLite
// store given the PostgreSQL inbox row for row (same seq, same received_at) and processed
// by the processor `serve` runs. No timing assertions: waits are bounded, counts are exact.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "store/postgres/database.h"
#include "store/sqlite/database.h"
#include "tests/derived/corpus.h"
#include "tests/derived/store_dump.h"
#include "tests/fake_service/fake_service.h"
#include "tests/support/examples.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(pg_serve_test)

using namespace hh;
using namespace std::chrono_literals;
using Strings = std::vector<std::string>;

namespace {

struct ServeDelivery {
  std::string id;
  std::string body;
};

// `text` with the first `from` replaced by `to`; throws when `from` is not in it.
std::string serve_replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("not in the example: " + from);
  return text.replace(at, from.size(), to);
}

// The documented payloads (schemas/examples/ that arrive as webhooks), some in several
// versions (a summary re-scored, samples at the same timestamps with other values), then
// `corpus` generated webhook deliveries (tests/derived/corpus.h: every family, keys drawn
// from small pools, so more versions and overlapping samples).
std::vector<ServeDelivery> serve_deliveries(size_t corpus, uint32_t seed) {
  static const char* const examples[] = {
      "connection-created-old-source.json", "connection-created.json", "connection-error.json", "device.json",
      "historical-backfill-without-is-final.json", "historical-backfill.json", "hypnogram.json",
      "lab-appointment.json", "lab-order.json", "lab-parsing-job-completed.json", "lab-result-critical.json",
      "new-resource-unknown-shape.json", "summary-activity-old-source.json", "summary-activity.json",
      "summary-body.json", "summary-electrocardiogram.json", "summary-meal.json", "summary-menstrual-cycle.json",
      "summary-profile.json", "summary-sleep-cycle.json", "summary-sleep.json", "summary-workouts.json",
      "timeseries-blood-pressure.json", "timeseries-cholesterol.json", "timeseries-extra-fields.json",
      "timeseries-glucose.json", "timeseries-heartrate.json", "timeseries-steps-old-envelope.json",
      "timeseries-steps-old-source.json", "timeseries-steps.json", "unknown-event.json", "workout-stream.json"};
  std::vector<ServeDelivery> out;
  for (const char* name : examples) out.push_back({std::string("ex-") + name, test::example_file(name)});
  const std::string sleep = test::example_file("summary-sleep.json");
  out.push_back({"ex-sleep-v2", serve_replaced(sleep, "\"score\": 82", "\"score\": 61")});
  out.push_back({"ex-sleep-v3", serve_replaced(sleep, "\"score\": 82", "\"score\": 95")});
  const std::string heartrate = test::example_file("timeseries-heartrate.json");
  out.push_back({"ex-heartrate-v2", serve_replaced(heartrate, "\"value\": 92", "\"value\": 101")});
  out.push_back({"ex-heartrate-v3", serve_replaced(heartrate, "\"value\": 92", "\"value\": 64")});
  for (auto& d : test::make_corpus(corpus, seed)) {
    if (d.origin == store::Origin::webhook) out.push_back({d.message_id, std::move(d.body)});
  }
  return out;
}

std::vector<std::string> serve_env(const std::string& uri) { return {"HEALTHHOOK_DATABASE=" + uri}; }

// `serve` on the PostgreSQL store `uri` (ServerProcess writes a SQLite `database` into the
// config; the environment overrides it, as spec §6 says).
std::unique_ptr<test::ServerProcess> serve_on(const test::TempDir& dir, const std::string& uri,
                                              const std::string& extra_toml = "") {
  return std::make_unique<test::ServerProcess>(dir, extra_toml, 30s, serve_env(uri));
}

pg::Connection serve_pg(const std::string& uri) {
  auto db = store::connect({uri, ""});
  BOOST_REQUIRE_MESSAGE(db, db.error());
  return std::move(*db);
}

int64_t serve_pg_int(const std::string& uri, const std::string& sql) {
  auto db = serve_pg(uri);
  auto value = db.query_int(sql);
  BOOST_REQUIRE_MESSAGE(value, value.error() + ": " + sql);
  return value->value_or(-1);
}

// Until every inbox row has an outcome and the processor's horizon is past the last one.
bool serve_caught_up(const std::string& uri, std::chrono::seconds timeout = 120s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto db = store::connect({uri, ""});
    if (db) {
      auto pending = db->query_int(
          "SELECT (SELECT count(*) FROM deliveries WHERE status = 'pending') + "
          "(SELECT count(*) FROM inbox WHERE seq > hh_processed_seq())");
      if (pending && pending->value_or(1) == 0) return true;
    }
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// The value of the sample `sample` (its name and labels as /metrics prints them) on
// /metrics; -1 when unreadable.
double serve_metric(const test::ServerProcess& server, const std::string& sample) {
  const auto metrics = test::HttpClient(server.port(), 10s).get("/metrics").body;
  const std::string line_start = "\n" + sample + " ";
  const size_t at = metrics.find(line_start);
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + line_start.size(), 20));
}

// The value of healthhook_processor_leading on /metrics; -1 when unreadable.
int serve_leading(const test::ServerProcess& server) {
  return static_cast<int>(serve_metric(server, "healthhook_processor_leading"));
}

// Until `server` reports leading == `expected`.
bool serve_wait_leading(const test::ServerProcess& server, int expected, std::chrono::seconds timeout = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (serve_leading(server) == expected) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// Which of the two reports leading (0 or 1), once one does; -1 after 30 s.
int serve_find_leader(const std::unique_ptr<test::ServerProcess> (&servers)[2]) {
  for (int attempt = 0; attempt < 600; ++attempt) {
    for (int s = 0; s < 2; ++s) {
      if (serve_leading(*servers[s]) == 1) return s;
    }
    std::this_thread::sleep_for(50ms);
  }
  return -1;
}

// Every table `healthhook query` prints (jsonl), by name. `with_deliveries` adds the
// inbox with outcomes (equal only when received_at is).
std::map<std::string, std::string> serve_dump(const std::string& database, bool with_deliveries) {
  Strings tables = {"samples", "summaries", "streams", "connections", "devices", "users", "providers",
                    "orders", "appointments", "results", "parsing-jobs", "backfills"};
  if (with_deliveries) tables.push_back("deliveries");
  std::map<std::string, std::string> out;
  for (const auto& table : tables) {
    auto result = test::run_healthhook({"query", table, "--database", database, "--format", "jsonl"});
    BOOST_REQUIRE_MESSAGE(result.exit_code == 0, "query " << table << ": " << result.stderr_text);
    out[table] = result.stdout_text;
  }
  return out;
}

// `dump` with each "seq":N replaced by the rank of N among `seqs` (inbox seqs of the
// store): a PostgreSQL sequence may skip numbers (a duplicate's insert takes one), a
// SQLite store does not; the order is what must agree. Users' first/last seen (received_at
// of two different runs) are dropped when `drop_seen`.
std::map<std::string, std::string> serve_normalized(std::map<std::string, std::string> dump,
                                                    const std::vector<int64_t>& seqs, bool drop_seen) {
  static const std::regex seq_field("\"seq\":([0-9]+)");
  static const std::regex seen_field("\"(first_seen|last_seen)[a-z_]*\":(\"[^\"]*\"|[0-9]+|null),?");
  for (auto& [table, text] : dump) {
    std::string out;
    auto begin = std::sregex_iterator(text.begin(), text.end(), seq_field);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      const int64_t seq = std::stoll((*it)[1].str());
      const auto rank = std::lower_bound(seqs.begin(), seqs.end(), seq) - seqs.begin();
      out += text.substr(last, it->position() - last) + "\"seq\":#" + std::to_string(rank + 1);
      last = it->position() + it->length();
    }
    out += text.substr(last);
    if (table == "users" && drop_seen) out = std::regex_replace(out, seen_field, "");
    text = std::move(out);
  }
  return dump;
}

std::vector<int64_t> serve_pg_seqs(const std::string& uri) {
  auto db = serve_pg(uri);
  auto rows = db.query("SELECT seq FROM inbox ORDER BY seq");
  BOOST_REQUIRE_MESSAGE(rows, rows.error());
  std::vector<int64_t> out;
  for (int r = 0; r < rows->size(); ++r) out.push_back(rows->integer(r, 0));
  return out;
}

std::vector<int64_t> serve_lite_seqs(const std::string& path) {
  auto db = test::open_store(path);
  std::vector<int64_t> out;
  for (const auto& row : test::rows(db, "SELECT seq FROM inbox ORDER BY seq")) out.push_back(std::stoll(row));
  return out;
}

Strings serve_lines(const std::string& text) {
  Strings out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The tables the deliveries of serve_deliveries() fill (streams and providers come from
// fetches) must not be empty, or a comparison would prove little.
void serve_filled(const std::map<std::string, std::string>& dump) {
  for (const auto& [table, text] : dump) {
    if (table == "streams" || table == "providers") continue;
    BOOST_TEST(serve_lines(text).size() >= 1u, "table " << table << " is empty");
  }
}

// Compares two dumps table by table, line by line (the first differing lines are shown).
void serve_same_tables(const std::map<std::string, std::string>& expected,
                       const std::map<std::string, std::string>& actual, const std::string& what) {
  BOOST_REQUIRE(expected.size() == actual.size());
  for (const auto& [table, text] : expected) {
    const Strings want = serve_lines(text), got = serve_lines(actual.at(table));
    std::string shown;
    int differing = 0;
    for (size_t i = 0; i < std::max(want.size(), got.size()) && differing < 3; ++i) {
      const std::string w = i < want.size() ? want[i] : "(none)", g = i < got.size() ? got[i] : "(none)";
      if (w == g) continue;
      shown += "\n  line " + std::to_string(i + 1) + "\n  expected: " + w + "\n  actual:   " + g;
      ++differing;
    }
    BOOST_TEST(shown.empty(), what << ", table " << table << " (" << want.size() << " vs " << got.size()
                                   << " lines):" << shown);
  }
}

// A SQLite store holding the PostgreSQL inbox of `uri` row for row (same seq, received_at,
// headers, bytes), processed by the processor `serve` runs: what one SQLite instance leaves
// for the same deliveries in the same order.
std::string serve_sqlite_twin(const test::TempDir& dir, const std::string& uri) {
  const std::string path = dir.file("twin.db");
  auto lite = test::open_store(path);
  auto pg = serve_pg(uri);
  auto rows = pg.query("SELECT seq, message_id, origin, received_at, webhook_timestamp, event_type, headers, "
                       "convert_from(body, 'UTF8') FROM inbox ORDER BY seq");
  BOOST_REQUIRE_MESSAGE(rows, rows.error());
  BOOST_REQUIRE(lite.exec("BEGIN"));
  auto stmt = lite.prepare("INSERT INTO inbox (seq, message_id, origin, received_at, webhook_timestamp, event_type, "
                           "headers, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  BOOST_REQUIRE_MESSAGE(stmt, stmt.error());
  for (int r = 0; r < rows->size(); ++r) {
    const std::string_view body = rows->text(r, 7);
    stmt->reset();
    stmt->bind(1, rows->integer(r, 0)).bind(2, rows->text(r, 1)).bind(3, rows->text(r, 2));
    stmt->bind(4, rows->integer(r, 3)).bind(5, rows->optional_integer(r, 4)).bind(6, rows->optional_text(r, 5));
    stmt->bind(7, rows->text(r, 6)).bind_blob(8, std::span<const char>(body.data(), body.size()));
    BOOST_REQUIRE(stmt->run());
  }
  BOOST_REQUIRE(lite.exec("COMMIT"));
  test::apply_inbox(lite);
  return path;
}

struct ServeAck {
  int status = 0;
  std::string outcome;  // "stored" / "duplicate" / "" (no JSON answer)
  int64_t seq = 0;
  std::string body;  // as answered
};

ServeAck serve_post(test::HttpClient& client, const std::string& secret, const ServeDelivery& d) {
  const auto response = client.post_webhook(secret, d.id, d.body);
  ServeAck ack;
  ack.status = response.status;
  ack.body = response.body;
  static const std::regex answer("\\{\"status\":\"([a-z]+)\",\"seq\":([0-9]+)\\}");
  std::smatch m;
  if (std::regex_search(response.body, m, answer)) {
    ack.outcome = m[1].str();
    ack.seq = std::stoll(m[2].str());
  }
  return ack;
}

// The log lines at level error (warnings are expected: invalid deliveries, no WAL on PostgreSQL).
std::string serve_errors(const test::ServerProcess& server) {
  std::string out;
  for (const auto& line : server.log_lines()) {
    if (line.find("\"level\":\"error\"") != std::string::npos) {
      out += "\n  " + line;
    }
  }
  return out;
}

}  // namespace

// One instance on PostgreSQL and one on SQLite get the same deliveries in the same order:
// the same acks (stored, then duplicate when sent again) and the same tables.
BOOST_AUTO_TEST_CASE(one_instance_on_postgresql_leaves_what_sqlite_leaves) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  test::TempDir pg_dir, lite_dir;
  auto pg_server = serve_on(pg_dir, uri);
  test::ServerProcess lite_server(lite_dir);
  const auto deliveries = serve_deliveries(150, 35);
  {
    test::HttpClient to_pg(pg_server->port()), to_lite(lite_server.port());
    for (int round = 0; round < 2; ++round) {
      for (size_t i = 0; i < deliveries.size(); ++i) {
        if (round == 1 && i % 3 != 0) continue;  // every third again: a duplicate
        const auto a = serve_post(to_pg, pg_server->secret(), deliveries[i]);
        const auto b = serve_post(to_lite, lite_server.secret(), deliveries[i]);
        BOOST_TEST_CONTEXT("delivery " << deliveries[i].id << " round " << round << ": " << a.body) {
          BOOST_TEST(a.status == b.status);
          BOOST_TEST(a.outcome == b.outcome);
          BOOST_TEST(a.outcome == (round == 0 ? "stored" : "duplicate"));
        }
      }
    }
  }
  BOOST_REQUIRE_MESSAGE(serve_caught_up(uri), serve_errors(*pg_server));
  BOOST_TEST(serve_pg_int(uri, "SELECT count(*) FROM inbox") == static_cast<int64_t>(deliveries.size()));
  BOOST_TEST(serve_leading(*pg_server) == 1);
  BOOST_TEST(lite_server.stop() == 0);  // SQLite: everything applied before a clean exit
  const auto pg_tables = serve_normalized(serve_dump(uri, false), serve_pg_seqs(uri), true);
  const auto lite_tables =
      serve_normalized(serve_dump(lite_server.database(), false), serve_lite_seqs(lite_server.database()), true);
  serve_filled(pg_tables);
  serve_same_tables(lite_tables, pg_tables, "postgresql serve vs sqlite serve");
  BOOST_TEST(pg_server->stop() == 0);
  BOOST_TEST(serve_errors(*pg_server).empty(), serve_errors(*pg_server));
}

// Two instances, two signing secrets, every delivery sent to both in shuffled orders at
// the same time: each id stored once (one "stored" ack, one "duplicate", same seq), one
// leader, and the tables of a SQLite store given the same inbox.
// Two instances share the processing (decision 050): each applies the users of its
// shards, and between them every delivery once.
BOOST_AUTO_TEST_CASE(two_instances_store_each_delivery_once_and_share_the_processing) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  test::TempDir dir_a, dir_b, twin_dir;
  auto a = serve_on(dir_a, uri);
  auto b = serve_on(dir_b, uri);
  BOOST_TEST(a->secret() != b->secret());
  // The first to start took every shard; it gives the second its share within seconds.
  BOOST_REQUIRE_MESSAGE(serve_wait_leading(*a, 1) && serve_wait_leading(*b, 1), serve_errors(*a) << serve_errors(*b));
  const auto deliveries = serve_deliveries(300, 7);
  std::vector<ServeAck> acks_a(deliveries.size()), acks_b(deliveries.size());
  auto send_all = [&deliveries](const test::ServerProcess* server, std::vector<ServeAck>* acks, uint32_t seed) {
    std::vector<size_t> order(deliveries.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    test::HttpClient client(server->port());
    for (size_t i : order) (*acks)[i] = serve_post(client, server->secret(), deliveries[i]);
  };
  std::thread ta(send_all, a.get(), &acks_a, 1u), tb(send_all, b.get(), &acks_b, 2u);
  ta.join();
  tb.join();
  for (size_t i = 0; i < deliveries.size(); ++i) {
    BOOST_TEST_CONTEXT("delivery " << deliveries[i].id << ", answers: " << acks_a[i].body << " / " << acks_b[i].body) {
      BOOST_TEST(acks_a[i].status == 200);
      BOOST_TEST(acks_b[i].status == 200);
      BOOST_TEST((std::set<std::string>{acks_a[i].outcome, acks_b[i].outcome}) ==
                     (std::set<std::string>{"stored", "duplicate"}));
      BOOST_TEST(acks_a[i].seq == acks_b[i].seq);
    }
  }
  BOOST_REQUIRE_MESSAGE(serve_caught_up(uri), serve_errors(*a) << serve_errors(*b));
  BOOST_TEST(serve_pg_int(uri, "SELECT count(*) FROM inbox") == static_cast<int64_t>(deliveries.size()));
  BOOST_TEST(serve_pg_int(uri, "SELECT count(DISTINCT message_id) FROM inbox") ==
             static_cast<int64_t>(deliveries.size()));
  BOOST_TEST(serve_leading(*a) + serve_leading(*b) == 2);
  // Each says how many shards it applies: 8 each, all 16 between them.
  BOOST_TEST(serve_metric(*a, "healthhook_processor_shards") == 8);
  BOOST_TEST(serve_metric(*b, "healthhook_processor_shards") == 8);
  // No local disk to watch: no free space, and no threshold to compare it with.
  BOOST_TEST(serve_metric(*a, "healthhook_disk_min_free_bytes") == -1);
  BOOST_TEST(serve_metric(*a, "healthhook_disk_free_bytes") == -1);
  // Each applied some, and together each delivery once.
  const auto applied = [](const test::ServerProcess& server) {
    double sum = 0;
    for (const char* status : {"processed", "invalid", "ignored", "unknown"}) {
      sum += serve_metric(server, std::string("healthhook_processed_deliveries_total{status=\"") + status + "\"}");
    }
    return static_cast<int64_t>(sum);
  };
  BOOST_TEST(applied(*a) > 0);
  BOOST_TEST(applied(*b) > 0);
  BOOST_TEST(applied(*a) + applied(*b) == static_cast<int64_t>(deliveries.size()));

  const auto pg_tables = serve_dump(uri, true);
  const auto lite_tables = serve_dump(serve_sqlite_twin(twin_dir, uri), true);
  serve_filled(pg_tables);
  serve_same_tables(lite_tables, pg_tables, "two postgresql instances vs sqlite twin");
  BOOST_TEST(a->stop() == 0);
  BOOST_TEST(b->stop() == 0);
  BOOST_TEST(serve_errors(*a).empty(), "instance a:" << serve_errors(*a));
  BOOST_TEST(serve_errors(*b).empty(), "instance b:" << serve_errors(*b));
}

// `processing_sessions = 2`: one instance applies with two sessions, each holding its
// share of the shards as another instance would, and between them every delivery once.
BOOST_AUTO_TEST_CASE(one_instance_with_two_processing_sessions_shares_the_shards_between_them) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  test::TempDir dir, twin_dir;
  auto server = serve_on(dir, uri, "processing_sessions = 2\n");
  // The sessions holding shard locks, and how many each holds (the first to start took all
  // 16; it gives the second its half within seconds).
  const std::string holders =
      "SELECT count(*) FROM (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
      "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND classid = 0 "
      "AND objid BETWEEN " + std::to_string(store::kShardLockBase) + " AND " +
      std::to_string(store::kShardLockBase + 15) + " GROUP BY pid HAVING count(*) = 8) AS halves";
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (serve_pg_int(uri, holders) != 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  BOOST_REQUIRE_MESSAGE(serve_pg_int(uri, holders) == 2, serve_errors(*server));
  const auto deliveries = serve_deliveries(300, 11);
  {
    test::HttpClient client(server->port());
    for (const auto& d : deliveries) {
      const auto ack = serve_post(client, server->secret(), d);
      BOOST_TEST(ack.outcome == "stored", d.id << ": " << ack.body);
    }
  }
  BOOST_REQUIRE_MESSAGE(serve_caught_up(uri), serve_errors(*server));
  // The instance reports its sessions together: all 16 shards, each delivery applied once.
  BOOST_TEST(serve_metric(*server, "healthhook_processor_shards") == 16);
  BOOST_TEST(serve_leading(*server) == 1);
  double applied = 0;
  for (const char* status : {"processed", "invalid", "ignored", "unknown"}) {
    applied += serve_metric(*server, std::string("healthhook_processed_deliveries_total{status=\"") + status + "\"}");
  }
  BOOST_TEST(static_cast<int64_t>(applied) == static_cast<int64_t>(deliveries.size()));
  const auto pg_tables = serve_dump(uri, true);
  serve_filled(pg_tables);
  serve_same_tables(serve_dump(serve_sqlite_twin(twin_dir, uri), true), pg_tables,
                    "one postgresql instance with two sessions vs sqlite twin");
  BOOST_TEST(server->stop() == 0);
  BOOST_TEST(serve_errors(*server).empty(), serve_errors(*server));
}

// kill -9 of the leader while both take deliveries: every acked delivery is in the inbox,
// the survivor leads and catches up, and what it derived is what `rebuild` derives.
BOOST_AUTO_TEST_CASE(the_survivor_of_a_killed_leader_takes_over_and_matches_rebuild) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  test::TempDir dir_a, dir_b, twin_dir;
  std::unique_ptr<test::ServerProcess> servers[2] = {serve_on(dir_a, uri), serve_on(dir_b, uri)};
  const auto deliveries = serve_deliveries(600, 11);
  // The first few through `a`: some work for the leader before the race starts.
  {
    test::HttpClient client(servers[0]->port());
    for (size_t i = 0; i < 20; ++i) {
      BOOST_REQUIRE(serve_post(client, servers[0]->secret(), deliveries[i]).status == 200);
    }
  }
  const int leader = serve_find_leader(servers);
  BOOST_REQUIRE(leader >= 0);
  const int survivor = 1 - leader;
  // Both apply their share of users when the kill comes; the survivor then takes all.
  BOOST_REQUIRE(serve_wait_leading(*servers[survivor], 1));

  std::vector<ServeAck> acks[2] = {std::vector<ServeAck>(deliveries.size()), std::vector<ServeAck>(deliveries.size())};
  std::atomic<size_t> sent_by_leader{0};
  auto send_all = [&](int s) {
    std::vector<size_t> order;
    for (size_t i = 20; i < deliveries.size(); ++i) order.push_back(i);
    std::shuffle(order.begin(), order.end(), std::mt19937(100 + s));
    test::HttpClient client(servers[s]->port(), 10s);
    for (size_t i : order) {
      acks[s][i] = serve_post(client, servers[s]->secret(), deliveries[i]);
      if (s == leader) sent_by_leader.fetch_add(1);
    }
  };
  std::thread ta(send_all, 0), tb(send_all, 1);
  while (sent_by_leader.load() < deliveries.size() / 4) std::this_thread::sleep_for(5ms);
  servers[leader]->kill_hard();
  ta.join();
  tb.join();

  std::set<std::string> acked;
  for (size_t i = 0; i < 20; ++i) acked.insert(deliveries[i].id);
  size_t survivor_acks = 0;
  for (int s = 0; s < 2; ++s) {
    for (size_t i = 20; i < deliveries.size(); ++i) {
      if (acks[s][i].status == 200) acked.insert(deliveries[i].id);
      if (s == survivor) survivor_acks += acks[s][i].status == 200;
    }
  }
  BOOST_TEST(survivor_acks == deliveries.size() - 20);  // the survivor answered everything
  // The kill came during the leader's load: what it was sent afterwards went unanswered.
  BOOST_TEST(std::count_if(acks[leader].begin() + 20, acks[leader].end(),
                           [](const ServeAck& a) { return a.status != 200; }) > 0);
  BOOST_REQUIRE(serve_wait_leading(*servers[survivor], 1));
  BOOST_REQUIRE_MESSAGE(serve_caught_up(uri), serve_errors(*servers[survivor]));
  {
    auto db = serve_pg(uri);
    auto rows = db.query("SELECT message_id FROM inbox");
    BOOST_REQUIRE_MESSAGE(rows, rows.error());
    std::set<std::string> stored;
    for (int r = 0; r < rows->size(); ++r) stored.insert(std::string(rows->text(r, 0)));
    for (const auto& id : acked) BOOST_TEST(stored.count(id) == 1u, id << " acked 200 but not in the inbox");
    BOOST_TEST(stored.size() == deliveries.size());
  }

  const auto live = serve_dump(uri, true);
  serve_filled(live);
  BOOST_TEST(servers[survivor]->stop() == 0);
  auto rebuilt = test::run_healthhook({"rebuild", "--database", uri});
  BOOST_TEST(rebuilt.exit_code == 0, rebuilt.stderr_text);
  serve_same_tables(live, serve_dump(uri, true), "live (after takeover) vs rebuild");
  serve_same_tables(serve_dump(serve_sqlite_twin(twin_dir, uri), true), live, "live (after takeover) vs sqlite twin");
}

// SIGSTOP of the leader (a frozen VM, a host gone without closing its connections): its
// processing session stays open, and with it its shards' locks, until the server ends
// the session for having run nothing for 15 s (pg_store.cpp: end_stalled_session). The
// other instance then takes its shards and applies what it took meanwhile; the stopped
// one, resumed, finds its session gone and takes a share again. Each delivery applied once: the tables
// are what `rebuild` makes of the inbox.
BOOST_AUTO_TEST_CASE(a_stopped_leader_loses_the_lead_to_the_other_instance) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  test::TempDir dir_a, dir_b;
  std::unique_ptr<test::ServerProcess> servers[2] = {serve_on(dir_a, uri), serve_on(dir_b, uri)};
  const auto deliveries = serve_deliveries(200, 13);
  {
    test::HttpClient client(servers[0]->port());
    for (size_t i = 0; i < 20; ++i) {
      BOOST_REQUIRE(serve_post(client, servers[0]->secret(), deliveries[i]).status == 200);
    }
  }
  BOOST_REQUIRE(serve_caught_up(uri));
  const int leader = serve_find_leader(servers);
  BOOST_REQUIRE(leader >= 0);
  const int other = 1 - leader;

  servers[leader]->signal(SIGSTOP);
  struct Resume {  // whatever happens below, so that the server can be stopped at the end
    test::ServerProcess& server;
    ~Resume() { server.signal(SIGCONT); }
  } resume{*servers[leader]};
  {
    test::HttpClient client(servers[other]->port());
    for (size_t i = 20; i < deliveries.size(); ++i) {
      BOOST_REQUIRE(serve_post(client, servers[other]->secret(), deliveries[i]).status == 200);
    }
  }
  BOOST_REQUIRE_MESSAGE(serve_wait_leading(*servers[other], 1, 120s), serve_errors(*servers[other]));
  BOOST_REQUIRE_MESSAGE(serve_caught_up(uri), serve_errors(*servers[other]));

  // Resumed, it finds its session gone, and takes a share again.
  servers[leader]->signal(SIGCONT);
  BOOST_TEST(serve_wait_leading(*servers[leader], 1));
  BOOST_TEST(serve_leading(*servers[other]) == 1);
  BOOST_TEST(serve_pg_int(uri, "SELECT count(*) FROM inbox") == static_cast<int64_t>(deliveries.size()));
  const auto live = serve_dump(uri, true);
  serve_filled(live);
  BOOST_TEST(servers[0]->stop() == 0);
  BOOST_TEST(servers[1]->stop() == 0);
  BOOST_TEST(serve_errors(*servers[other]).empty(), serve_errors(*servers[other]));
  // The resumed one says it lost its session in a short line that blames no crash: it was
  // about 900 characters of the statement's SQL, then libpq's "This probably means the
  // server terminated abnormally" (black-box pass).
  bool told = false;
  for (const auto& line : servers[leader]->log_lines()) {
    told = told || line.find("\"event\":\"processing_lead_lost\"") != std::string::npos;
    BOOST_TEST(line.find("terminated abnormally") == std::string::npos, line);
    BOOST_TEST(line.size() < 400u, line);
  }
  BOOST_TEST(told);
  auto rebuilt = test::run_healthhook({"rebuild", "--database", uri});
  BOOST_TEST(rebuilt.exit_code == 0, rebuilt.stderr_text);
  serve_same_tables(live, serve_dump(uri, true), "live (after a stopped leader) vs rebuild");
}

// The failed steps of healthhook_processor_steps_total on /metrics; -1 when unreadable.
int64_t serve_failed_steps(const test::ServerProcess& server) {
  return static_cast<int64_t>(serve_metric(server, "healthhook_processor_steps_total{result=\"failed\"}"));
}

// A leader whose steps keep failing waits longer before each retry, up to 8 s: below the
// 15 s after which the server ends its idle processing session (decision 051). With 30 s,
// the server ended the session, and the lock with it, at every wait: the leader failed its
// next step on the dead session, retook the lock and waited 30 s again, and applied nothing
// ever again, even once the cause had gone. Here a table every step reads is locked by
// another session (each step fails busy after commit_deadline_ms) until the failures have
// stretched the wait to its longest; once the lock is released, everything is applied.
BOOST_AUTO_TEST_CASE(a_leader_that_backed_off_applies_again_once_the_cause_is_gone) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  test::TempDir dir;
  auto server = serve_on(dir, uri, "commit_deadline_ms = 100\n");
  const auto deliveries = serve_deliveries(40, 17);
  test::HttpClient client(server->port());
  for (size_t i = 0; i < 10; ++i) BOOST_REQUIRE(serve_post(client, server->secret(), deliveries[i]).status == 200);
  BOOST_REQUIRE(serve_caught_up(uri));
  BOOST_REQUIRE(serve_wait_leading(*server, 1));

  auto blocker = serve_pg(uri);
  // EXCLUSIVE: the step's UPDATE of the applied position waits (and fails busy); reads, such
  // as /metrics's, go on.
  BOOST_REQUIRE(blocker.exec("BEGIN; LOCK TABLE processor_state IN EXCLUSIVE MODE"));
  for (size_t i = 10; i < deliveries.size(); ++i) {
    BOOST_REQUIRE(serve_post(client, server->secret(), deliveries[i]).status == 200);
  }
  // 0.25 s doubling: the 8th failure comes after the wait reached its longest (the 6th).
  bool backed_off = false;
  for (int attempt = 0; attempt < 1200 && !backed_off; ++attempt) {
    backed_off = serve_failed_steps(*server) >= 8;
    if (!backed_off) std::this_thread::sleep_for(100ms);
  }
  BOOST_REQUIRE_MESSAGE(backed_off, "failed steps: " << serve_failed_steps(*server));
  BOOST_REQUIRE(blocker.exec("ROLLBACK"));

  BOOST_REQUIRE_MESSAGE(serve_caught_up(uri, 60s), serve_errors(*server));
  BOOST_TEST(serve_leading(*server) == 1);
  BOOST_TEST(serve_pg_int(uri, "SELECT count(*) FROM deliveries WHERE status <> 'pending'") ==
             static_cast<int64_t>(deliveries.size()));
  BOOST_TEST(server->stop() == 0);
}

namespace {

constexpr const char* kServeKey = "pg-serve-test-api-key";

std::string serve_service_toml(const test::TempDir& dir, const fake::FakeService& service) {
  dir.write("api-key", std::string(kServeKey) + "\n");
  dir.write("service-ca.pem", service.ca_pem());
  return "[service]\n"
         "base_url = \"" + service.base_url() + "\"\n"
         "api_key_file = \"api-key\"\n"
         "ca_file = \"service-ca.pem\"\n"
         "read_timeout_s = 60\n";
}

}  // namespace

// Workout-stream notices sent to both instances: each stream fetched once across them, and
// every job ends done with its points stored.
BOOST_AUTO_TEST_CASE(jobs_run_once_across_instances) {
  fake::FakeOptions options;
  options.tls = fake::TlsMode::valid;
  options.api_key = kServeKey;
  fake::FakeService service(options);
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  test::TempDir dir_a, dir_b;
  auto a = serve_on(dir_a, uri, serve_service_toml(dir_a, service));
  auto b = serve_on(dir_b, uri, serve_service_toml(dir_b, service));
  const std::string notice = test::example_file("workout-stream.json");
  const std::string workout = "fdc70dd0-8cc8-4ec8-8b80-121fd9a3302a";
  constexpr int kWorkouts = 12;
  std::vector<ServeDelivery> deliveries;
  for (int w = 0; w < kWorkouts; ++w) {
    deliveries.push_back({"stream-" + std::to_string(w), serve_replaced(notice, workout, "wk-" + std::to_string(w))});
  }
  auto send_all = [&deliveries](const test::ServerProcess* server, uint32_t seed, std::vector<ServeAck>* acks) {
    std::vector<ServeDelivery> order = deliveries;
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    test::HttpClient client(server->port());
    for (const auto& d : order) acks->push_back(serve_post(client, server->secret(), d));
  };
  std::vector<ServeAck> acks_a, acks_b;
  std::thread ta(send_all, a.get(), 3u, &acks_a), tb(send_all, b.get(), 4u, &acks_b);
  ta.join();
  tb.join();
  for (const auto* acks : {&acks_a, &acks_b}) {
    for (const auto& ack : *acks) {
      BOOST_TEST(ack.status == 200, ack.body << serve_errors(*a) << serve_errors(*b));
    }
  }

  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (serve_pg_int(uri, "SELECT count(*) FROM jobs WHERE kind = 'workout_stream' AND state = 'done'") < kWorkouts &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  BOOST_TEST(serve_pg_int(uri, "SELECT count(*) FROM jobs WHERE kind = 'workout_stream'") == kWorkouts,
             serve_errors(*a) << serve_errors(*b));
  BOOST_TEST(serve_pg_int(uri, "SELECT count(*) FROM jobs WHERE kind = 'workout_stream' AND state = 'done'") ==
             kWorkouts);
  BOOST_REQUIRE(serve_caught_up(uri));
  for (int w = 0; w < kWorkouts; ++w) {
    const std::string path = "/v2/timeseries/workouts/wk-" + std::to_string(w) + "/stream";
    BOOST_TEST(service.request_count(path) == 1u, path);
  }
  BOOST_TEST(serve_pg_int(uri, "SELECT count(DISTINCT workout_id) FROM stream_points") == kWorkouts);
  BOOST_TEST(serve_pg_int(uri, "SELECT count(*) FROM workout_streams WHERE fetched_seq IS NULL") == 0);
  BOOST_TEST(a->stop() == 0);
  BOOST_TEST(b->stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // pg_serve_test
