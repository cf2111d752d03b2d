// Reading the derived tables (store/read_store.h on SQLite): filters, orders, page positions,
// the change feed's page cut, and the one output format (row_format.h) as JSON and RFC 4180 CSV,
// both through the library and through `healthhook query`. Rows are inserted with SQL
// here, so these tests do not depend on the processor.
#include <boost/test/unit_test.hpp>

#include "store/open_readers.h"
#include "store/row_format.h"
#include "store/sqlite/database.h"
#include "tests/support/bytes_read.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(query_rows_test)

using namespace hh;
using namespace hh::store;
using hh::test::TempDir;

namespace {

constexpr std::string_view kRows = R"sql(
INSERT INTO series (series_id, user_id, resource, provider, source_type) VALUES
  (1, 'u1', 'heartrate', 'oura', 'ring'), (2, 'u1', 'heartrate', 'garmin', 'watch'),
  (3, 'u2', 'heartrate', 'oura', 'ring'), (4, 'u1', 'blood_pressure', 'omron', 'cuff');
INSERT INTO samples (series_id, t_ms, timezone_offset, value, unit, type, start_ms, end_ms, systolic, diastolic, extra, seq) VALUES
  (1, 1000, 3600, 60, 'bpm', NULL, NULL, NULL, NULL, NULL, NULL, 1),
  (1, 2000, NULL, 61.5, 'bpm', NULL, NULL, NULL, NULL, NULL, NULL, 2),
  (1, 3000, NULL, 62, 'b,pm"x', NULL, 3000, 63000, NULL, NULL, NULL, 3),
  (2, 2000, NULL, 70, 'bpm', NULL, NULL, NULL, NULL, NULL, NULL, 4),
  (2, 4000, NULL, 'high', 'bpm', NULL, NULL, NULL, NULL, NULL, '{"sensor_location":"wrist"}', 5),
  (3, 1500, NULL, 80, '', NULL, NULL, NULL, NULL, NULL, NULL, 6),
  (4, 5000, -18000, NULL, 'mmHg', NULL, NULL, NULL, 121, 79.5, '{"grouping":{"reading_id":"r-1"}}', 7);
INSERT INTO summaries (resource, id, user_id, provider, source_type, calendar_date, start_ms, end_ms, seq, data) VALUES
  ('sleep', 'a', 'u1', 'oura', 'ring', NULL, 2000, NULL, 10, '{"id":"a"}'),
  ('sleep', 'b', 'u1', 'oura', 'ring', NULL, NULL, NULL, 11, '{"id":"b"}'),
  ('sleep', 'c', 'u1', 'oura', 'ring', NULL, 1000, NULL, 12, '{"id":"c"}'),
  ('sleep', 'd', 'u1', 'garmin', 'watch', NULL, 2000, NULL, 13, '{"id":"d"}'),
  ('activity', 'e', 'u1', 'oura', 'ring', NULL, 1500, NULL, 14, '{"id":"e"}'),
  ('sleep', 'f', 'u2', 'oura', 'ring', NULL, 1000, NULL, 15, '{"id":"f"}');
INSERT INTO workout_streams (workout_id, user_id, provider, provider_id, sport, notice_seq, fetched_seq, point_count, seq) VALUES
  ('w1', 'u1', 'strava', 'p-1', 'run', 20, 21, 3, 21), ('w2', 'u2', 'garmin', NULL, NULL, 22, NULL, NULL, 22);
INSERT INTO stream_points (workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, resistance, temperature) VALUES
  ('w1', 0, 1715853600, 0, 120, 2.5, 52.5, 13.4, 34, 80, NULL, NULL, 21.5),
  ('w1', 1, 1715853601, 2.5, 121, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('w1', 2, 1715853602, 5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('w2', 0, 1715860000, 1, 99, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO connections (user_id, provider, status, external_user_id, error_type, error_message, resource_availability, event_type, seq, data) VALUES
  ('u1', 'oura', 'error', 'x-1', 'token_refresh_failed', 'line1
line2', NULL, 'provider.connection.error', 30, '{"a":1}');
INSERT INTO lab_orders (id, user_id, team_id, status, last_event_status, status_detail, interpretation, seq, data) VALUES
  ('o1', 'u1', 't', 'collecting_sample', 'collecting_sample.walk_in_test.appointment_scheduled', NULL, NULL, 31, '{"id":"o1"}');
INSERT INTO changes (change_id, seq, table_name, row_key, op, row_count, from_ms, to_ms) VALUES
  (1, 1, 'summaries', 's/1', 'insert', 1, NULL, NULL),
  (2, 2, 'samples', 'u/heartrate/oura/ring', 'insert', 10, 1000, 9000), (3, 2, 'summaries', 's/2', 'insert', 1, NULL, NULL),
  (4, 3, 'summaries', 's/3', 'insert', 1, NULL, NULL), (5, 3, 'summaries', 's/4', 'insert', 1, NULL, NULL),
  (6, 3, 'summaries', 's/5', 'update', 1, NULL, NULL),
  (7, 4, 'connections', 'u1/oura', 'insert', 1, NULL, NULL);
)sql";

struct Database {
  TempDir dir;
  std::string path = dir.file("q.db");
  sqlite::Connection db = [this] {
    auto opened = open_for_writing(path, StoreOptions{});
    BOOST_REQUIRE_MESSAGE(opened.ok(), opened.error());
    auto inserted = opened->exec(kRows);
    BOOST_REQUIRE_MESSAGE(inserted.ok(), inserted.error());
    return std::move(*opened);
  }();

  std::unique_ptr<ReadStore> reader() {
    auto opened = open_read_store(path);
    BOOST_REQUIRE_MESSAGE(opened.ok(), opened.error());
    return std::move(*opened);
  }
};

template <typename Query, typename Row>
std::vector<std::string> json_rows(Query& query) {
  std::vector<std::string> rows;
  Row row;
  for (;;) {
    auto has_row = query.next(row);
    BOOST_REQUIRE_MESSAGE(has_row.ok(), has_row.error());
    if (!*has_row) break;
    rows.emplace_back();
    append_json(rows.back(), row);
  }
  return rows;
}

// "t_ms/series" of each sample row, for order checks.
std::vector<std::string> positions(SampleQuery& query) {
  std::vector<std::string> out;
  StoredSample row;
  for (;;) {
    auto has_row = query.next(row);
    BOOST_REQUIRE(has_row.ok());
    if (!*has_row) break;
    out.push_back(std::to_string(row.t_ms) + "/" + std::to_string(row.series_id));
  }
  return out;
}

std::vector<int64_t> change_ids(ChangeQuery& query, ChangePosition from, int64_t limit) {
  BOOST_REQUIRE(query.start_page(from, limit).ok());
  std::vector<int64_t> ids;
  StoredChange row;
  for (;;) {
    auto has_row = query.next(row);
    BOOST_REQUIRE(has_row.ok());
    if (!*has_row) break;
    ids.push_back(row.change_id);
  }
  return ids;
}

using Strings = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_CASE(samples_export_in_series_name_order_with_spec_field_names) {
  Database d;
  auto reader = d.reader();
  SampleQuery* query = &reader->samples();
  BOOST_REQUIRE(query->start_by_series({"u1", std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt}).ok());
  const Strings rows = json_rows<SampleQuery, StoredSample>(*query);
  const Strings expected = {
      R"({"user_id":"u1","resource":"blood_pressure","provider":"omron","source_type":"cuff","timestamp":"1970-01-01T00:00:05.000Z","timezone_offset":-18000,"value":null,"unit":"mmHg","type":null,"start":null,"end":null,"extra":{"systolic":121,"diastolic":79.5,"grouping":{"reading_id":"r-1"}},"seq":7})",
      R"({"user_id":"u1","resource":"heartrate","provider":"garmin","source_type":"watch","timestamp":"1970-01-01T00:00:02.000Z","timezone_offset":null,"value":70,"unit":"bpm","type":null,"start":null,"end":null,"extra":null,"seq":4})",
      R"({"user_id":"u1","resource":"heartrate","provider":"garmin","source_type":"watch","timestamp":"1970-01-01T00:00:04.000Z","timezone_offset":null,"value":"high","unit":"bpm","type":null,"start":null,"end":null,"extra":{"sensor_location":"wrist"},"seq":5})",
      R"({"user_id":"u1","resource":"heartrate","provider":"oura","source_type":"ring","timestamp":"1970-01-01T00:00:01.000Z","timezone_offset":3600,"value":60,"unit":"bpm","type":null,"start":null,"end":null,"extra":null,"seq":1})",
      R"({"user_id":"u1","resource":"heartrate","provider":"oura","source_type":"ring","timestamp":"1970-01-01T00:00:02.000Z","timezone_offset":null,"value":61.5,"unit":"bpm","type":null,"start":null,"end":null,"extra":null,"seq":2})",
      R"({"user_id":"u1","resource":"heartrate","provider":"oura","source_type":"ring","timestamp":"1970-01-01T00:00:03.000Z","timezone_offset":null,"value":62,"unit":"b,pm\"x","type":null,"start":"1970-01-01T00:00:03.000Z","end":"1970-01-01T00:01:03.000Z","extra":null,"seq":3})",
  };
  BOOST_TEST(rows == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(sample_filters_combine) {
  Database d;
  auto reader = d.reader();
  SampleQuery* query = &reader->samples();
  // Time range is [since, until) on the sample's instant.
  BOOST_REQUIRE(query->start_by_series({std::nullopt, "heartrate", "oura", "ring", 1500, 3000}).ok());
  BOOST_TEST(positions(*query) == Strings({"2000/1", "1500/3"}), boost::test_tools::per_element());
  BOOST_REQUIRE(query->start_by_series({"u2", std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt}).ok());
  BOOST_TEST(positions(*query) == Strings({"1500/3"}), boost::test_tools::per_element());
  BOOST_REQUIRE(query->start_by_series({"nobody", std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt}).ok());
  BOOST_TEST(positions(*query).empty());
}

BOOST_AUTO_TEST_CASE(time_order_merges_series_and_resumes_after_a_position) {
  Database d;
  auto reader = d.reader();
  SampleQuery* query = &reader->samples();
  const SampleFilter u1_heartrate{"u1", "heartrate", std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  BOOST_REQUIRE(query->start_by_time(u1_heartrate, std::nullopt).ok());
  BOOST_TEST(positions(*query) == Strings({"1000/1", "2000/1", "2000/2", "3000/1", "4000/2"}),
             boost::test_tools::per_element());
  // Between the two samples at 2000: the one of series 2 is still to come.
  BOOST_REQUIRE(query->start_by_time(u1_heartrate, SamplePosition{2000, 1}).ok());
  BOOST_TEST(positions(*query) == Strings({"2000/2", "3000/1", "4000/2"}), boost::test_tools::per_element());
  BOOST_REQUIRE(query->start_by_time(u1_heartrate, SamplePosition{2000, 2}).ok());
  BOOST_TEST(positions(*query) == Strings({"3000/1", "4000/2"}), boost::test_tools::per_element());
  BOOST_REQUIRE(query->start_by_time({"u1", "heartrate", "garmin", std::nullopt, 0, 4000}, std::nullopt).ok());
  BOOST_TEST(positions(*query) == Strings({"2000/2"}), boost::test_tools::per_element());
  // Stopped early, then reused.
  BOOST_REQUIRE(query->start_by_time(u1_heartrate, std::nullopt).ok());
  StoredSample row;
  BOOST_TEST(query->next(row).value());
  query->finish();
  BOOST_TEST(!query->start_by_time({std::nullopt, "heartrate", std::nullopt, std::nullopt, std::nullopt, std::nullopt},
                                   std::nullopt)
                  .ok());  // needs a user
}

BOOST_AUTO_TEST_CASE(summary_pages_go_by_start_then_id_with_missing_starts_first) {
  Database d;
  auto reader = d.reader();
  SummaryQuery* query = &reader->summaries();
  const SummaryFilter u1_sleep{"sleep", "u1", std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  const auto ids = [&](const std::optional<SummaryPosition>& after, int64_t limit, const SummaryFilter& f) {
    BOOST_REQUIRE(query->start_page(f, after, limit).ok());
    Strings out;
    StoredSummary row;
    while (query->next(row).value()) out.emplace_back(row.id);
    return out;
  };
  BOOST_TEST(ids(std::nullopt, 10, u1_sleep) == Strings({"b", "c", "a", "d"}), boost::test_tools::per_element());
  BOOST_TEST(ids(std::nullopt, 2, u1_sleep) == Strings({"b", "c"}), boost::test_tools::per_element());
  BOOST_TEST(ids(SummaryPosition{1000, "c"}, 2, u1_sleep) == Strings({"a", "d"}), boost::test_tools::per_element());
  BOOST_TEST(ids(SummaryPosition{std::nullopt, "b"}, 10, u1_sleep) == Strings({"c", "a", "d"}),
             boost::test_tools::per_element());
  BOOST_TEST(ids(SummaryPosition{2000, "a"}, 10, u1_sleep) == Strings({"d"}), boost::test_tools::per_element());
  // A time range leaves out summaries without a start.
  BOOST_TEST(ids(std::nullopt, 10, {"sleep", "u1", std::nullopt, std::nullopt, 1000, 2000}) == Strings({"c"}),
             boost::test_tools::per_element());
  BOOST_TEST(ids(std::nullopt, 10, {"sleep", "u1", "garmin", std::nullopt, std::nullopt, std::nullopt}) ==
                 Strings({"d"}),
             boost::test_tools::per_element());

  BOOST_REQUIRE(
      query->start_export({std::nullopt, std::nullopt, "oura", std::nullopt, std::nullopt, std::nullopt}).ok());
  const Strings rows = json_rows<SummaryQuery, StoredSummary>(*query);
  BOOST_REQUIRE_EQUAL(rows.size(), 5u);  // activity/e, sleep/a, sleep/b, sleep/c, sleep/f: key order
  BOOST_TEST(rows[0] ==
             R"({"resource":"activity","id":"e","user_id":"u1","provider":"oura","source_type":"ring","seq":14,"data":{"id":"e"}})");
  BOOST_TEST(rows[4].find(R"("id":"f")") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(change_pages_end_at_a_seq_when_they_can_and_never_hold_more_than_limit) {
  Database d;
  auto reader = d.reader();
  ChangeQuery* query = &reader->changes();
  using Ids = std::vector<int64_t>;
  using P = ChangePosition;
  BOOST_TEST(change_ids(*query, P{0, {}}, 2) == Ids({1}), boost::test_tools::per_element());     // seq 2 would not fit
  BOOST_TEST(!query->ends_inside_seq());
  BOOST_TEST(change_ids(*query, P{1, {}}, 2) == Ids({2, 3}), boost::test_tools::per_element());  // seq 2 whole
  // Seq 3 alone has 3 changes: exactly 2 of them, then the rest from inside the seq.
  BOOST_TEST(change_ids(*query, P{2, {}}, 2) == Ids({4, 5}), boost::test_tools::per_element());
  BOOST_TEST(query->ends_inside_seq());
  BOOST_TEST(change_ids(*query, P{3, 5}, 2) == Ids({6, 7}), boost::test_tools::per_element());
  BOOST_TEST(!query->ends_inside_seq());
  BOOST_TEST(change_ids(*query, P{2, {}}, 1) == Ids({4}), boost::test_tools::per_element());
  BOOST_TEST(change_ids(*query, P{3, 4}, 1) == Ids({5}), boost::test_tools::per_element());
  BOOST_TEST(change_ids(*query, P{3, 6}, 1) == Ids({7}), boost::test_tools::per_element());
  BOOST_TEST(change_ids(*query, P{3, {}}, 2) == Ids({7}), boost::test_tools::per_element());
  BOOST_TEST(change_ids(*query, P{4, {}}, 2).empty());
  BOOST_TEST(change_ids(*query, P{0, {}}, 100) == Ids({1, 2, 3, 4, 5, 6, 7}), boost::test_tools::per_element());
  BOOST_TEST(change_ids(*query, P{0, {}}, 3) == Ids({1, 2, 3}), boost::test_tools::per_element());  // exactly fits
  BOOST_REQUIRE(query->start_page(1, 1).ok());
  StoredChange row;
  BOOST_REQUIRE(query->next(row).value());
  std::string json;
  append_json(json, row);
  BOOST_TEST(json ==
             R"({"change_id":2,"seq":2,"table_name":"samples","row_key":"u/heartrate/oura/ring","op":"insert","row_count":10,"from":"1970-01-01T00:00:01.000Z","to":"1970-01-01T00:00:09.000Z","user_id":null})");
  query->finish();
}

BOOST_AUTO_TEST_CASE(stream_points_and_workouts) {
  Database d;
  auto reader = d.reader();
  StreamQuery* query = &reader->streams();
  BOOST_REQUIRE(query->start_page("w1", 0, 1).ok());
  const Strings page = json_rows<StreamQuery, StoredStreamPoint>(*query);
  BOOST_TEST(page == Strings({R"({"workout_id":"w1","time":1715853601,"distance":2.5,"heartrate":121,"velocity_smooth":null,"lat":null,"lng":null,"altitude":null,"cadence":null,"power":null,"resistance":null,"temperature":null})"}),
             boost::test_tools::per_element());
  BOOST_REQUIRE(query->start_export({std::nullopt, "u2", std::nullopt, std::nullopt, std::nullopt}).ok());
  BOOST_TEST((json_rows<StreamQuery, StoredStreamPoint>(*query).size()) == 1u);
  BOOST_REQUIRE(query->start_export({"w1", std::nullopt, std::nullopt, 1715853601000, std::nullopt}).ok());
  BOOST_TEST((json_rows<StreamQuery, StoredStreamPoint>(*query).size()) == 2u);
  StoredWorkoutStream workout;
  BOOST_TEST(query->find_workout("w1", workout).value());
  std::string json;
  append_json(json, workout);
  BOOST_TEST(json ==
             R"({"workout_id":"w1","user_id":"u1","provider":"strava","provider_id":"p-1","sport":"run","point_count":3,"seq":21})");
  BOOST_TEST(!query->find_workout("nope", workout).value());
}

BOOST_AUTO_TEST_CASE(csv_quotes_per_rfc4180_and_tells_null_from_empty) {
  std::string out;
  append_header<StoredConnection>(out, OutputFormat::csv);
  StoredConnection row;
  row.user_id = "u1";
  row.provider = "a,b";
  row.status = "say \"hi\"";
  row.external_user_id = "";  // empty string: quoted
  row.error_message = "line1\nline2";
  row.event_type = "provider.connection.error";
  row.seq = 3;
  row.data = R"({"k":"v"})";
  append_record(out, OutputFormat::csv, row);
  BOOST_TEST(out ==
             "user_id,provider,status,deregistered_at,external_user_id,error_type,error_message,resource_availability,"
             "event_type,seq,data\r\n"
             "u1,\"a,b\",\"say \"\"hi\"\"\",,\"\",,\"line1\nline2\",,provider.connection.error,3,\"{\"\"k\"\":\"\"v\"\"}\"\r\n");
}

BOOST_AUTO_TEST_CASE(deliveries_carry_binary_bodies_as_base64) {
  Database d;
  BOOST_REQUIRE(d.db.exec("INSERT INTO inbox (message_id, received_at, webhook_timestamp, event_type, headers, body) "
                          "VALUES ('m1', 1000, 1, NULL, '{\"a\":\"b\"}', X'FF00')")
                    .ok());
  auto reader = d.reader();
  DeliveryQuery* query = &reader->deliveries();
  StoredDelivery row;
  BOOST_REQUIRE(query->find("m1", row).value());
  std::string json;
  append_json(json, row);
  BOOST_TEST(json ==
             R"({"seq":1,"message_id":"m1","origin":"webhook","received_at":"1970-01-01T00:00:01.000Z","webhook_timestamp":1,"event_type":null,"status":"pending","family":null,"error":null,"headers":{"a":"b"},"body":null,"body_base64":"/wA=","body_removed_at":null,"body_sha256":null})");
  query->finish();
  BOOST_TEST(!query->find("m2", row).value());
}

// A listing by user goes through the table's user index: prepared once with
// `(?1 IS NULL OR t.user_id = ?1)`, SQLite's plan could not know a user was given and read
// every row of the table, for each GET /v1/users/{id} (three tables) and each order of a
// user (a review of the store's query plans).
BOOST_AUTO_TEST_CASE(a_users_listing_reads_the_users_rows_not_the_table) {
  Database d;
  BOOST_REQUIRE(d.db.exec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) "
      "INSERT INTO devices (id, user_id, provider, source_type, seq, data) "
      "SELECT 'dev-' || i, 'user-' || (i % 2000), 'oura', 'ring', i, printf('{\"pad\":\"%.300c\"}', 'x') FROM n"));
  auto reader = d.reader();
  auto& devices = reader->devices();
  RecordFilter filter;
  filter.user_id = "user-7";
  std::vector<std::string> rows;
  const int64_t read = test::bytes_read_by([&] {
    BOOST_REQUIRE(devices.start(filter));
    rows = json_rows<RecordQuery<StoredDevice>, StoredDevice>(devices);
  });
  BOOST_TEST(rows.size() == 10u);
  BOOST_TEST_MESSAGE("one user's devices read " << read << " bytes");
  BOOST_TEST(read < 1'000'000);  // the table is ~7 MB
  // Without a filter, every row, in key order.
  BOOST_REQUIRE(devices.start(RecordFilter{}));
  const auto all = json_rows<RecordQuery<StoredDevice>, StoredDevice>(devices);
  BOOST_TEST(all.size() == 20000u);
}

BOOST_AUTO_TEST_CASE(query_command_prints_csv_and_jsonl) {
  Database d;
  auto csv = test::run_healthhook({"query", "samples", "--database", d.path, "--format", "csv", "--user", "u1",
                                   "--resource", "heartrate", "--provider", "oura"});
  BOOST_TEST(csv.exit_code == 0, csv.stderr_text);
  BOOST_TEST(csv.stdout_text ==
             "user_id,resource,provider,source_type,timestamp,timezone_offset,value,unit,type,start,end,extra,seq\r\n"
             "u1,heartrate,oura,ring,1970-01-01T00:00:01.000Z,3600,60,bpm,,,,,1\r\n"
             "u1,heartrate,oura,ring,1970-01-01T00:00:02.000Z,,61.5,bpm,,,,,2\r\n"
             "u1,heartrate,oura,ring,1970-01-01T00:00:03.000Z,,62,\"b,pm\"\"x\",,1970-01-01T00:00:03.000Z,"
             "1970-01-01T00:01:03.000Z,,3\r\n");

  auto jsonl = test::run_healthhook(
      {"query", "summaries", "--database", d.path, "--user", "u1", "--resource", "sleep", "--since", "1", "--until", "2"});
  BOOST_TEST(jsonl.exit_code == 0, jsonl.stderr_text);
  BOOST_TEST(jsonl.stdout_text ==
             R"({"resource":"sleep","id":"c","user_id":"u1","provider":"oura","source_type":"ring","seq":12,"data":{"id":"c"}})"
             "\n");

  const std::string out = d.dir.file("orders.csv");
  auto orders = test::run_healthhook({"query", "orders", "--database", d.path, "--format", "csv", "-o", out});
  BOOST_TEST(orders.exit_code == 0, orders.stderr_text);
  auto points = test::run_healthhook({"query", "streams", "--database", d.path, "--workout", "w2"});
  BOOST_TEST(points.stdout_text ==
             R"({"workout_id":"w2","time":1715860000,"distance":1,"heartrate":99,"velocity_smooth":null,"lat":null,"lng":null,"altitude":null,"cadence":null,"power":null,"resistance":null,"temperature":null})"
             "\n");
  auto connections = test::run_healthhook({"query", "connections", "--database", d.path, "--provider", "oura"});
  BOOST_TEST(connections.stdout_text.find(R"("error_message":"line1\nline2")") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(query_command_names_the_bad_flag) {
  Database d;
  auto bad_time = test::run_healthhook({"query", "samples", "--database", d.path, "--since", "yesterday"});
  BOOST_TEST(bad_time.exit_code == 2);
  BOOST_TEST(bad_time.stderr_text ==
             "healthhook query: --since: expected RFC 3339, a date or Unix seconds, got \"yesterday\"\n");
  auto missing = test::run_healthhook({"query", "samples", "--database", d.dir.file("nope.db")});
  BOOST_TEST(missing.exit_code == 2);
  BOOST_TEST(missing.stderr_text.find("nope.db does not exist") != std::string::npos, missing.stderr_text);
  auto format = test::run_healthhook({"query", "samples", "--database", d.path, "--format", "xml"});
  BOOST_TEST(format.exit_code == 2);
  BOOST_TEST(format.stderr_text.find("--format") != std::string::npos, format.stderr_text);
}

BOOST_AUTO_TEST_SUITE_END()  // query_rows_test
