// GET /metrics: the exposition format (escaping, histograms), the database reads, and the
// counters of the real binary after signed deliveries, duplicates and bad signatures.
#include <boost/test/unit_test.hpp>
#include <atomic>
#include <cmath>
#include <thread>

#include "metrics/pipeline_metrics.h"
#include "store/sqlite/wal_checkpointer.h"
#include "metrics/metric_histogram.h"
#include "metrics/prometheus_text.h"
#include "metrics/store_metrics.h"
#include "store/sqlite/database.h"
#include "tests/fake_service/fake_service.h"
#include "tests/ops/prometheus_parser.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(metrics_test)

using namespace hh::test;
namespace http = hh::http;
namespace metrics = hh::metrics;

namespace {

const std::string kSteps =
    R"({"event_type":"daily.data.steps.created","data":{"data":[{"timestamp":"2023-05-16T10:00:00+00:00","unit":"count","value":237}],"source":{"provider":"oura","type":"ring"},"user_id":"u1"},"user_id":"u1"})";

PromExposition scrape(unsigned short port) {
  HttpClient client(port);
  auto response = client.get("/metrics");
  BOOST_REQUIRE_EQUAL(response.status, 200);
  BOOST_TEST(response.header("content-type") == "text/plain; version=0.0.4; charset=utf-8");
  try {
    return PromExposition::parse(response.body);
  } catch (const std::exception& e) {
    BOOST_FAIL(std::string("not a valid exposition: ") + e.what() + "\n" + response.body);
  }
  return {};
}

double value_of(const PromExposition& metrics, const std::string& name,
                const std::map<std::string, std::string>& labels = {}) {
  auto value = metrics.value(name, labels);
  BOOST_REQUIRE_MESSAGE(value.has_value(), "no sample " + name);
  return *value;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(exposition_format)

BOOST_AUTO_TEST_CASE(label_values_and_help_are_escaped) {
  metrics::PrometheusText out;
  out.family("x_total", "counter", "line one\nback\\slash")
      .sample("x_total", {{"path", "a\"b\\c\nd"}, {"kind", "plain"}}, uint64_t{3});
  BOOST_TEST(out.text() ==
             "# HELP x_total line one\\nback\\\\slash\n"
             "# TYPE x_total counter\n"
             "x_total{path=\"a\\\"b\\\\c\\nd\",kind=\"plain\"} 3\n");
  const auto parsed = PromExposition::parse(out.text());
  BOOST_TEST(parsed.family("x_total").help == "line one\nback\\slash");
  BOOST_TEST(*parsed.value("x_total", {{"path", "a\"b\\c\nd"}, {"kind", "plain"}}) == 3);
}

BOOST_AUTO_TEST_CASE(histogram_buckets_are_cumulative_with_inf_sum_and_count) {
  static constexpr double bounds[] = {0.5, 1, 2.5};
  metrics::Histogram histogram(bounds);
  for (double v : {0.1, 0.5, 0.7, 3.0, 100.0}) histogram.observe(v);
  metrics::PrometheusText out;
  out.histogram("h_seconds", "A histogram", histogram.snapshot());
  BOOST_TEST(out.text() ==
             "# HELP h_seconds A histogram\n"
             "# TYPE h_seconds histogram\n"
             "h_seconds_bucket{le=\"0.5\"} 2\n"
             "h_seconds_bucket{le=\"1\"} 3\n"
             "h_seconds_bucket{le=\"2.5\"} 3\n"
             "h_seconds_bucket{le=\"+Inf\"} 5\n"
             "h_seconds_sum 104.3\n"
             "h_seconds_count 5\n");
  BOOST_CHECK_NO_THROW(PromExposition::parse(out.text()));
}

BOOST_AUTO_TEST_CASE(special_values_are_spelled_as_prometheus_reads_them) {
  std::string out;
  metrics::append_sample_value(out, HUGE_VAL);
  out.push_back(' ');
  metrics::append_sample_value(out, -HUGE_VAL);
  out.push_back(' ');
  metrics::append_sample_value(out, NAN);
  out.push_back(' ');
  metrics::append_sample_value(out, 0.25);
  out.push_back(' ');
  metrics::append_sample_value(out, 0.0005);
  out.push_back(' ');
  metrics::append_sample_value(out, 1e-9);
  out.push_back(' ');
  metrics::append_sample_value(out, 1125899906842624.0);
  BOOST_TEST(out == "+Inf -Inf NaN 0.25 0.0005 1e-09 1.125899906842624e+15");
}

BOOST_AUTO_TEST_CASE(the_test_parser_rejects_what_prometheus_rejects) {
  // The parser is what the end-to-end checks rely on: it must be able to fail.
  BOOST_CHECK_THROW(PromExposition::parse("x 1\n"), std::runtime_error);  // no TYPE
  BOOST_CHECK_THROW(PromExposition::parse("# TYPE x gauge\n# TYPE x gauge\n"), std::runtime_error);
  BOOST_CHECK_THROW(PromExposition::parse("# TYPE x gauge\ny 1\n"), std::runtime_error);
  BOOST_CHECK_THROW(PromExposition::parse("# TYPE x gauge\nx{a=\"b} 1\n"), std::runtime_error);
  BOOST_CHECK_THROW(PromExposition::parse("# TYPE x gauge\nx{a=\"\\t\"} 1\n"), std::runtime_error);
  BOOST_CHECK_THROW(PromExposition::parse("# TYPE x_total counter\nx_total -1\n"), std::runtime_error);
  BOOST_CHECK_THROW(PromExposition::parse("# TYPE x counter\nx 1\n"), std::runtime_error);
  BOOST_CHECK_THROW(PromExposition::parse("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
                                          "h_sum 1\nh_count 1\n"),
                    std::runtime_error);
  BOOST_CHECK_THROW(PromExposition::parse("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n"),
                    std::runtime_error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(database_reads)

// Rows as the inbox writer and the processor leave them, written by hand.
void add_delivery(hh::sqlite::Connection& db, int64_t seq, const char* family, const char* status,
                  int64_t received_at_ms) {
  auto insert = db.prepare(
      "INSERT INTO inbox (seq, message_id, received_at, headers, body) VALUES (?1, ?2, ?3, '{}', x'7b7d')");
  BOOST_REQUIRE_MESSAGE(insert.ok(), insert.error());
  const std::string message_id = "m" + std::to_string(seq);
  insert->bind(1, seq).bind(2, std::string_view(message_id)).bind(3, received_at_ms);
  auto ran = insert->run();
  BOOST_REQUIRE_MESSAGE(ran.ok(), ran.error());
  if (std::string_view(status) == "pending") return;  // pending = no outcome row
  auto outcome = db.prepare("INSERT INTO delivery_outcomes (seq, status, family) VALUES (?1, ?2, ?3)");
  BOOST_REQUIRE_MESSAGE(outcome.ok(), outcome.error());
  outcome->bind(1, seq).bind(2, std::string_view(status));
  if (family) outcome->bind(3, std::string_view(family));
  else outcome->bind_null(3);
  auto recorded = outcome->run();
  BOOST_REQUIRE_MESSAGE(recorded.ok(), recorded.error());
}

void add_job(hh::sqlite::Connection& db, const std::string& key, const char* state) {
  auto insert = db.prepare(
      "INSERT INTO jobs (kind, job_key, state, next_attempt_at, trigger_seq, payload, created_at, updated_at) "
      "VALUES ('workout_stream', ?1, ?2, 0, 1, '{}', 0, 0)");
  BOOST_REQUIRE_MESSAGE(insert.ok(), insert.error());
  insert->bind(1, std::string_view(key)).bind(2, std::string_view(state));
  auto ran = insert->run();
  BOOST_REQUIRE_MESSAGE(ran.ok(), ran.error());
}

void set_applied(hh::sqlite::Connection& db, int64_t seq) {
  auto ran = db.exec("UPDATE processor_state SET applied_seq = " + std::to_string(seq));
  BOOST_REQUIRE_MESSAGE(ran.ok(), ran.error());
}

PromExposition collect(metrics::StoreMetrics& store_metrics) {
  metrics::PrometheusText out;
  store_metrics.collect(out);
  return PromExposition::parse(out.text());
}

BOOST_AUTO_TEST_CASE(lag_families_jobs_and_size_come_from_the_database) {
  TempDir dir;
  const std::string path = dir.file("metrics.db");
  auto db = hh::store::open_for_writing(path, {});
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  const int64_t now_ms = std::stoll(now_seconds()) * 1000;
  add_delivery(*db, 1, "timeseries", "processed", now_ms - 900000);
  add_delivery(*db, 2, "summary", "processed", now_ms - 800000);
  add_delivery(*db, 3, nullptr, "invalid", now_ms - 700000);
  add_delivery(*db, 4, "timeseries", "processed", now_ms - 600000);
  add_delivery(*db, 5, nullptr, "pending", now_ms - 600000);  // not applied yet: waited >= 600 s
  set_applied(*db, 4);
  add_job(*db, "w1", "queued");
  add_job(*db, "w2", "dead");
  add_job(*db, "w3", "dead");

  auto store_metrics = metrics::StoreMetrics::open(path);
  BOOST_REQUIRE_MESSAGE(store_metrics.ok(), store_metrics.error());
  auto first = collect(**store_metrics);
  BOOST_TEST(value_of(first, "healthhook_inbox_last_seq") == 5);
  BOOST_TEST(value_of(first, "healthhook_processor_applied_seq") == 4);
  BOOST_TEST(value_of(first, "healthhook_processor_lag_deliveries") == 1);
  BOOST_TEST(value_of(first, "healthhook_processor_lag_seconds") >= 600);
  BOOST_TEST(value_of(first, "healthhook_inbox_deliveries", {{"family", "timeseries"}, {"status", "processed"}}) == 2);
  BOOST_TEST(value_of(first, "healthhook_inbox_deliveries", {{"family", "summary"}, {"status", "processed"}}) == 1);
  BOOST_TEST(value_of(first, "healthhook_inbox_deliveries", {{"family", "none"}, {"status", "invalid"}}) == 1);
  BOOST_TEST(first.family("healthhook_inbox_deliveries").samples.size() == 3u);  // seq 5 is not applied
  BOOST_TEST(value_of(first, "healthhook_jobs", {{"state", "queued"}}) == 1);
  BOOST_TEST(value_of(first, "healthhook_jobs", {{"state", "running"}}) == 0);
  BOOST_TEST(value_of(first, "healthhook_jobs", {{"state", "done"}}) == 0);
  BOOST_TEST(value_of(first, "healthhook_jobs", {{"state", "dead"}}) == 2);
  const int64_t page_bytes = db->query_int("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")
                                 ->value_or(-1);
  BOOST_TEST(value_of(first, "healthhook_database_bytes") == page_bytes);
  BOOST_TEST(value_of(first, "healthhook_store_metrics_ok") == 1);

  // The processor applies seq 5 and 6 arrives: counts advance from where they were.
  auto marked = db->exec("REPLACE INTO delivery_outcomes (seq, status, family) VALUES (5, 'ignored', 'hypnogram')");
  BOOST_REQUIRE(marked.ok());
  add_delivery(*db, 6, "timeseries", "processed", now_ms);
  set_applied(*db, 6);
  auto second = collect(**store_metrics);
  BOOST_TEST(value_of(second, "healthhook_inbox_deliveries", {{"family", "timeseries"}, {"status", "processed"}}) == 3);
  BOOST_TEST(value_of(second, "healthhook_inbox_deliveries", {{"family", "hypnogram"}, {"status", "ignored"}}) == 1);
  BOOST_TEST(value_of(second, "healthhook_processor_lag_deliveries") == 0);
  BOOST_TEST(value_of(second, "healthhook_processor_lag_seconds") == 0);

  // `rebuild` resets applied_seq: the counts start again instead of counting rows twice.
  auto reset = db->exec("DELETE FROM delivery_outcomes");
  BOOST_REQUIRE(reset.ok());
  set_applied(*db, 2);
  auto rebuilt = collect(**store_metrics);
  BOOST_TEST(value_of(rebuilt, "healthhook_inbox_deliveries", {{"family", "none"}, {"status", "pending"}}) == 2);
  BOOST_TEST(rebuilt.family("healthhook_inbox_deliveries").samples.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(checkpointer_metrics)

// The checkpointer's thread stops for good after a failed sync of the database file
// (store/sqlite/wal_checkpointer.h): deliveries stay safe, so /readyz stays 200, and this
// gauge is what tells an operator why the -wal file keeps growing.
BOOST_AUTO_TEST_CASE(a_failed_database_sync_shows_as_checkpoints_stopped) {
  TempDir dir;
  const std::string path = dir.file("checkpoints.db");
  auto db = hh::store::open_for_writing(path, {});
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  BOOST_REQUIRE(db->exec("PRAGMA synchronous = OFF"));
  BOOST_REQUIRE(db->exec("CREATE TABLE load (id INTEGER PRIMARY KEY, payload BLOB)"));
  std::atomic<bool> fail{false};
  auto checkpointer = hh::store::WalCheckpointer::start(*db, path, 64, [&fail](hh::sqlite::Connection&) {
    return fail ? std::string("sync of the database file: disk I/O error") : std::string();
  });
  BOOST_REQUIRE_MESSAGE(checkpointer.ok(), checkpointer.error());
  const auto collector = hh::metrics::checkpointer_metrics(**checkpointer);
  auto collect_now = [&collector] {
    metrics::PrometheusText out;
    collector(out);
    return PromExposition::parse(out.text());
  };
  // Writes 16 KiB commits until `done` holds (bounded: 20 s).
  auto write_until = [&](auto done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      BOOST_REQUIRE(db->exec("INSERT INTO load (payload) VALUES (zeroblob(16384))"));
      (*checkpointer)->finish_on_writer();
    }
    return done();
  };
  BOOST_REQUIRE(write_until([&] { return (*checkpointer)->rewinds() > 0; }));
  const auto healthy = collect_now();
  BOOST_TEST(value_of(healthy, "healthhook_wal_checkpoints_stopped") == 0);
  BOOST_TEST(value_of(healthy, "healthhook_wal_checkpoints_total") >= 1);
  BOOST_TEST(value_of(healthy, "healthhook_wal_database_syncs_total") >= 1);

  fail = true;
  BOOST_REQUIRE(write_until([&] { return (*checkpointer)->stopped_by_failure(); }));
  const auto stopped = collect_now();
  BOOST_TEST(value_of(stopped, "healthhook_wal_checkpoints_stopped") == 1);
  checkpointer->reset();
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(served_metrics)

BOOST_AUTO_TEST_CASE(counters_move_with_deliveries_duplicates_and_bad_signatures) {
  TempDir dir;
  ServerProcess server(dir, "max_body_bytes = 4096\n");
  const auto before = scrape(server.port());
  BOOST_TEST(value_of(before, "healthhook_deliveries_total", {{"outcome", "stored"}}) == 0);
  BOOST_TEST(value_of(before, "healthhook_deliveries_total", {{"outcome", "too_large"}}) == 0);
  BOOST_TEST(value_of(before, "healthhook_inbox_commit_seconds_count") == 0);

  HttpClient client(server.port());
  BOOST_TEST(client.post_webhook(server.secret(), "msg_1", kSteps).status == 200);
  BOOST_TEST(client.post_webhook(server.secret(), "msg_2", kSteps).status == 200);
  BOOST_TEST(client.post_webhook(server.secret(), "msg_1", kSteps).status == 200);  // duplicate
  BOOST_TEST(client.post_webhook(random_secret(), "msg_3", kSteps).status == 401);  // wrong secret
  HttpClient big_sender(server.port());  // a 413 closes its connection
  BOOST_TEST(big_sender.post_webhook(server.secret(), "msg_4", std::string(8192, ' ')).status == 413);

  const auto after = scrape(server.port());
  BOOST_TEST(value_of(after, "healthhook_deliveries_total", {{"outcome", "stored"}}) == 2);
  BOOST_TEST(value_of(after, "healthhook_deliveries_total", {{"outcome", "duplicate"}}) == 1);
  BOOST_TEST(value_of(after, "healthhook_deliveries_total", {{"outcome", "rejected_signature"}}) == 1);
  BOOST_TEST(value_of(after, "healthhook_deliveries_total", {{"outcome", "unavailable"}}) == 0);
  BOOST_TEST(value_of(after, "healthhook_deliveries_total", {{"outcome", "too_large"}}) == 1);
  BOOST_TEST(value_of(after, "healthhook_signature_failures_total") == 1);
  BOOST_TEST(value_of(after, "healthhook_duplicates_total") == 1);
  // A delivery verified a moment ago (the test does not run for a minute).
  BOOST_TEST(value_of(after, "healthhook_seconds_since_last_verified_delivery") < 60);
  // One request at a time: each delivery (the duplicate too) was its own group commit.
  BOOST_TEST(value_of(after, "healthhook_inbox_commits_total", {{"result", "ok"}}) == 3);
  BOOST_TEST(value_of(after, "healthhook_inbox_commits_total", {{"result", "failed"}}) == 0);
  BOOST_TEST(value_of(after, "healthhook_inbox_commit_seconds_count") == 3);
  // synchronous = "full" (default): each commit's 2xx waited for its own WAL sync, on the
  // sync thread (store/sqlite/wal_sync.h), not inside COMMIT.
  BOOST_TEST(value_of(before, "healthhook_inbox_wal_syncs_total") == 0);
  BOOST_TEST(value_of(after, "healthhook_inbox_wal_syncs_total") == 3);
  BOOST_TEST(value_of(after, "healthhook_inbox_commit_batch_size_count") == 3);
  BOOST_TEST(value_of(after, "healthhook_inbox_commit_batch_size_bucket", {{"le", "1"}}) == 3);
  BOOST_TEST(value_of(after, "healthhook_inbox_commit_batch_size_sum") == 3);
  BOOST_TEST(value_of(after, "healthhook_inbox_queue_depth") == 0);
  BOOST_TEST(value_of(after, "healthhook_inbox_queue_high_water") == 4096);
  BOOST_TEST(value_of(after, "healthhook_ready") == 1);
  BOOST_TEST(value_of(after, "healthhook_inbox_disk_low") == 0);
  BOOST_TEST(value_of(after, "healthhook_inbox_last_seq") == 2);
  BOOST_TEST(value_of(after, "healthhook_processor_lag_deliveries") ==
             2 - value_of(after, "healthhook_processor_applied_seq"));
  BOOST_TEST(value_of(after, "healthhook_jobs", {{"state", "dead"}}) == 0);
  BOOST_TEST(value_of(after, "healthhook_database_bytes") > 0);
  BOOST_TEST(value_of(after, "healthhook_disk_free_bytes") > 0);
  BOOST_TEST(value_of(after, "healthhook_store_metrics_ok") == 1);
  BOOST_TEST(after.has("healthhook_processed_deliveries_total"));
  BOOST_TEST(!after.has("healthhook_fetch_requests_total"));  // no API key: no fetcher
  BOOST_TEST(value_of(after, "healthhook_wal_checkpoints_stopped") == 0);
  BOOST_TEST(after.has("healthhook_wal_checkpoints_total"));
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(fetch_requests_are_counted_through_the_fetcher_hook) {
  hh::fake::FakeService service;
  TempDir dir;
  dir.write("api-key", "test-api-key\n");
  ServerProcess server(dir, "[service]\nbase_url = \"" + service.base_url() + "\"\napi_key_file = \"api-key\"\n");
  const std::string workout_stream =
      R"({"event_type":"daily.data.workout_stream.created","data":{"workout_id":"w-metrics-1","user_id":"u1",)"
      R"("source":{"provider":"fitbit"}},"user_id":"u1"})";
  HttpClient client(server.port());
  BOOST_TEST(client.post_webhook(server.secret(), "msg_stream", workout_stream).status == 200);

  // The processor queues the stream fetch, the fetcher runs it; wait for the job to be done.
  // The job's state is in the database as soon as its page commits; the fetcher's counters
  // (pages_stored before jobs_done) go up a moment later on its own thread, so wait for both.
  PromExposition metrics;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    metrics = scrape(server.port());
    // Two requests: the stream, and the provider list serve fetches at start.
    if (metrics.value("healthhook_jobs", {{"state", "done"}}).value_or(0) == 1 &&
        metrics.value("healthhook_fetch_jobs_total", {{"result", "done"}}).value_or(0) == 1 &&
        metrics.value("healthhook_fetch_requests_total", {{"outcome", "ok"}}).value_or(0) == 2)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  BOOST_REQUIRE_EQUAL(value_of(metrics, "healthhook_jobs", {{"state", "done"}}), 1);
  BOOST_TEST(value_of(metrics, "healthhook_fetch_requests_total", {{"outcome", "ok"}}) == 2);
  BOOST_TEST(value_of(metrics, "healthhook_fetch_requests_total", {{"outcome", "http_5xx"}}) == 0);
  BOOST_TEST(value_of(metrics, "healthhook_fetch_request_seconds_count") == 2);
  BOOST_TEST(value_of(metrics, "healthhook_fetch_jobs_total", {{"result", "done"}}) == 1);
  BOOST_TEST(value_of(metrics, "healthhook_fetch_pages_stored_total") == 1);
  BOOST_TEST(service.requests().size() == 2u);
  BOOST_TEST(service.request_count("/v2/providers") == 1u);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // metrics_test
