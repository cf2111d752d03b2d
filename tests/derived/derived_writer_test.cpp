// Latest-wins upserts of every derived table, the change feed and the follow-up jobs,
// driven with hand-built DeliveryRows (the parser's output contract, event_rows.h).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <filesystem>

#include "store/sqlite/derived/sqlite_derived_writer.h"
#include "tests/derived/delivery_builders.h"
#include "tests/derived/store_dump.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(derived_writer_test)

using namespace hh;
using hh::test::fetched_stream;
using hh::test::heartrate;
using hh::test::kReceivedAt;
using hh::test::rows;
using hh::test::samples;
using hh::test::sleep_summary;
using hh::test::stream_notice;
using hh::test::TempDir;
using hh::test::value;
using Strings = std::vector<std::string>;

namespace {

struct Store {
  TempDir dir;
  sqlite::Connection db = test::open_store(dir.file("healthhook.db"));
  std::unique_ptr<store::DerivedWriter> writer = store::DerivedWriter::create(db).value();

  store::ApplyCounts apply(const rows::DeliveryRows& delivery, int64_t seq, int64_t received_at = kReceivedAt) {
    auto txn = sqlite::Transaction::begin(db);
    BOOST_REQUIRE_MESSAGE(txn, txn.error());
    auto applied = writer->apply(delivery, seq, received_at);
    BOOST_REQUIRE_MESSAGE(applied, applied.error());
    BOOST_REQUIRE(txn->commit());
    return *applied;
  }
  Strings changes() {
    return rows(db, "SELECT seq, table_name, row_key, op, row_count, from_ms, to_ms FROM changes ORDER BY change_id");
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(summaries)

BOOST_AUTO_TEST_CASE(a_later_seq_replaces_the_row_and_an_earlier_one_changes_nothing) {
  Store s;
  BOOST_TEST(s.apply(sleep_summary("s1", R"({"v":5})"), 5).rows_written == 1);
  BOOST_TEST(s.apply(sleep_summary("s1", R"({"v":7})"), 7).rows_written == 1);
  BOOST_TEST(s.apply(sleep_summary("s1", R"({"v":6})"), 6).rows_written == 0);  // stale
  BOOST_TEST(test::dump_table(s.db, "summaries") ==
                 Strings{R"('sleep'|'s1'|'u1'|'oura'|'ring'|'2024-05-16'|1715900000000|1715930000000|7|'{"v":7}'|NULL)"},
             boost::test_tools::per_element());
  BOOST_TEST(s.changes() == (Strings{"5|'summaries'|'sleep/s1'|'insert'|1|NULL|NULL",
                                     "7|'summaries'|'sleep/s1'|'update'|1|NULL|NULL"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(every_order_of_four_versions_leaves_the_highest_seq) {
  const std::array<int64_t, 4> seqs{3, 5, 8, 11};
  const std::array<std::string, 4> data{R"({"v":3})", R"({"v":5})", R"({"v":8})", R"({"v":11})"};
  std::array<size_t, 4> order{0, 1, 2, 3};
  int permutations = 0;
  do {
    Store s;
    int64_t highest = 0;
    Strings expected_changes;
    for (size_t i : order) {
      s.apply(sleep_summary("s1", data[i]), seqs[i]);
      if (highest == 0 || seqs[i] > highest) {
        expected_changes.push_back(std::to_string(seqs[i]) + "|'summaries'|'sleep/s1'|'" +
                                   (highest == 0 ? "insert" : "update") + "'|1|NULL|NULL");
        highest = seqs[i];
      }
    }
    BOOST_TEST(value(s.db, "SELECT seq || ' ' || data FROM summaries") == R"('11 {"v":11}')");
    BOOST_TEST(s.changes() == expected_changes, boost::test_tools::per_element());
    ++permutations;
  } while (std::next_permutation(order.begin(), order.end()));
  BOOST_TEST(permutations == 24);
}

BOOST_AUTO_TEST_CASE(a_version_that_moves_user_or_date_moves_its_index_entry_and_a_stale_one_does_not) {
  // The update that keeps the summaries_user_time entry (latest_wins.h) changes nothing
  // here, so the full update must run after it.
  Store s;
  const auto ids_by_user_and_date = [&](std::string_view user, std::string_view date_condition) {
    return rows(s.db, "SELECT id || ' ' || seq FROM summaries INDEXED BY summaries_user_time WHERE user_id = '" +
                          std::string(user) + "' AND resource = 'sleep' AND calendar_date " +
                          std::string(date_condition));
  };
  s.apply(sleep_summary("s1", "{}"), 5);
  auto moved = sleep_summary("s1", "{}");
  moved.summaries[0].user_id = "u2";
  moved.summaries[0].calendar_date = "2024-05-17";
  BOOST_TEST(s.apply(moved, 7).rows_written == 1);
  BOOST_TEST(ids_by_user_and_date("u2", "= '2024-05-17'") == Strings{"'s1 7'"}, boost::test_tools::per_element());
  BOOST_TEST(ids_by_user_and_date("u1", "= '2024-05-16'").empty());

  auto stale = sleep_summary("s1", "{}");
  stale.summaries[0].user_id = "u3";
  BOOST_TEST(s.apply(stale, 6).rows_written == 0);
  BOOST_TEST(ids_by_user_and_date("u3", "= '2024-05-16'").empty());

  auto undated = moved;
  undated.summaries[0].calendar_date.reset();
  BOOST_TEST(s.apply(undated, 9).rows_written == 1);
  BOOST_TEST(s.apply(undated, 10).rows_written == 1);  // NULL date kept: the cheap update
  BOOST_TEST(ids_by_user_and_date("u2", "IS NULL") == Strings{"'s1 10'"}, boost::test_tools::per_element());
  BOOST_TEST(s.apply(undated, 8).rows_written == 0);
  BOOST_TEST(s.changes() == (Strings{"5|'summaries'|'sleep/s1'|'insert'|1|NULL|NULL",
                                     "7|'summaries'|'sleep/s1'|'update'|1|NULL|NULL",
                                     "9|'summaries'|'sleep/s1'|'update'|1|NULL|NULL",
                                     "10|'summaries'|'sleep/s1'|'update'|1|NULL|NULL"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_version_that_keeps_user_and_date_leaves_the_index_pages_alone) {
  // Counted in WAL frames (one per page a commit wrote): a new version that keeps its user
  // and date writes one page fewer than one that changes its date, the index's.
  Store s;
  const std::string wal = s.dir.file("healthhook.db") + "-wal";
  const auto frames_written_by = [&](const rows::DeliveryRows& delivery, int64_t seq) {
    BOOST_REQUIRE(s.db.exec("PRAGMA wal_checkpoint(TRUNCATE)"));
    BOOST_REQUIRE(std::filesystem::file_size(wal) == 0);
    s.apply(delivery, seq);
    const auto page_size = static_cast<uintmax_t>(s.db.query_int("PRAGMA page_size")->value());
    return (std::filesystem::file_size(wal) - 32) / (24 + page_size);  // WAL header, then frames
  };
  s.apply(sleep_summary("s1", "{}"), 1);
  const auto kept = frames_written_by(sleep_summary("s1", R"({"v":2})"), 2);
  auto redated = sleep_summary("s1", R"({"v":3})");
  redated.summaries[0].calendar_date = "2024-05-17";
  const auto moved = frames_written_by(redated, 3);
  BOOST_TEST(kept + 1 == moved);
  BOOST_TEST(value(s.db, "SELECT seq || ' ' || calendar_date FROM summaries") == "'3 2024-05-17'");
}

BOOST_AUTO_TEST_CASE(keys_are_resource_and_id) {
  Store s;
  auto workouts = sleep_summary("s1", "{}");
  workouts.summaries[0].resource = "workouts";
  s.apply(sleep_summary("s1", "{}"), 1);
  s.apply(workouts, 2);
  BOOST_TEST(rows(s.db, "SELECT resource, id, seq FROM summaries ORDER BY resource") ==
                 (Strings{"'sleep'|'s1'|1", "'workouts'|'s1'|2"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(record_tables)

BOOST_AUTO_TEST_CASE(connection_device_and_lab_rows_follow_latest_wins) {
  Store s;
  rows::DeliveryRows d;
  d.family = rows::Family::connection;
  d.connection = rows::ConnectionRow{"u1", "oura", "connected", "ext-1", std::nullopt, std::nullopt,
                                       R"({"sleep":{"status":"available"}})", "provider.connection.created", "{}"};
  s.apply(d, 10);
  d.connection->status = "error";
  d.connection->error_type = "token_refresh_failed";
  d.connection->error_message = "revoked";
  // An error event carries neither: the connection's are kept.
  d.connection->external_user_id.reset();
  d.connection->resource_availability_json.reset();
  d.connection->event_type = "provider.connection.error";
  s.apply(d, 12);
  d.connection->status = "connected";
  s.apply(d, 11);  // stale
  BOOST_TEST(test::dump_table(s.db, "connections") ==
                 Strings{"'u1'|'oura'|'error'|'ext-1'|'token_refresh_failed'|'revoked'|"
                         "'{\"sleep\":{\"status\":\"available\"}}'|'provider.connection.error'|12|'{}'|NULL"},
             boost::test_tools::per_element());

  rows::DeliveryRows device;
  device.device = rows::DeviceRow{"d1", "u1", "garmin", "watch", std::nullopt, "Garmin", "Forerunner", "19.1",
                                    "338", R"({"id":"d1"})"};
  s.apply(device, 13);
  device.device->device_version = "19.2";
  s.apply(device, 14);
  BOOST_TEST(test::dump_table(s.db, "devices") ==
                 Strings{R"('d1'|'u1'|'garmin'|'watch'|NULL|'Garmin'|'Forerunner'|'19.2'|'338'|14|'{"id":"d1"}')"},
             boost::test_tools::per_element());

  rows::DeliveryRows labs;
  labs.lab_order = rows::LabOrderRow{"o1", "u1", "t1", "received", "received.walk_in_test.ordered", std::nullopt,
                                       std::nullopt, "{}"};
  labs.lab_appointment = rows::LabAppointmentRow{"a1", "o1", "u1", "confirmed", "scheduled",
                                                   "2024-05-02T14:00:00+00:00", "2024-05-02T14:30:00+00:00", "{}"};
  labs.lab_result = rows::LabResultRow{"o1", "u1", "123", "partial", "critical", "{}"};
  labs.lab_parsing_job =
      rows::LabParsingJobRow{"j1", "completed", std::nullopt, false, true, R"({"results":[]})", "{}", "u1"};
  s.apply(labs, 15);
  BOOST_TEST(test::dump_table(s.db, "lab_orders") ==
                 Strings{"'o1'|'u1'|'t1'|'received'|'received.walk_in_test.ordered'|NULL|NULL|15|'{}'"},
             boost::test_tools::per_element());
  BOOST_TEST(test::dump_table(s.db, "lab_appointments") ==
                 Strings{"'a1'|'o1'|'u1'|'confirmed'|'scheduled'|'2024-05-02T14:00:00+00:00'|"
                         "'2024-05-02T14:30:00+00:00'|15|'{}'"},
             boost::test_tools::per_element());
  BOOST_TEST(test::dump_table(s.db, "lab_results") == Strings{"'o1'|'u1'|'123'|'partial'|'critical'|15|'{}'"},
             boost::test_tools::per_element());
  BOOST_TEST(test::dump_table(s.db, "lab_parsing_jobs") ==
                 Strings{R"('j1'|'completed'|NULL|0|1|'{"results":[]}'|15|'{}'|'u1')"},
             boost::test_tools::per_element());
  // Every change names whom its row is about (purge-user finds the feed's rows by it).
  BOOST_TEST(test::rows(s.db, "SELECT DISTINCT user_id FROM changes WHERE seq = 15") == Strings{"'u1'"},
             boost::test_tools::per_element());
  labs.lab_order->status_detail = "awaiting_remaining_markers";
  s.apply(labs, 9);  // older than all of them: nothing changes
  BOOST_TEST(value(s.db, "SELECT status_detail FROM lab_orders") == "NULL");

  // A created event's null is the provider's answer (another account, no id given): it
  // replaces them.
  rows::DeliveryRows reconnected;
  reconnected.family = rows::Family::connection;
  reconnected.connection = rows::ConnectionRow{"u1", "oura", "connected", std::nullopt, std::nullopt, std::nullopt,
                                               std::nullopt, "provider.connection.created", "{}"};
  s.apply(reconnected, 20);
  BOOST_TEST(test::dump_table(s.db, "connections") ==
                 Strings{"'u1'|'oura'|'connected'|NULL|NULL|NULL|NULL|'provider.connection.created'|20|'{}'|NULL"},
             boost::test_tools::per_element());
  BOOST_TEST(s.changes() == (Strings{"10|'connections'|'u1/oura'|'insert'|1|NULL|NULL",
                                     "12|'connections'|'u1/oura'|'update'|1|NULL|NULL",
                                     "13|'devices'|'d1'|'insert'|1|NULL|NULL",
                                     "14|'devices'|'d1'|'update'|1|NULL|NULL",
                                     "15|'lab_orders'|'o1'|'insert'|1|NULL|NULL",
                                     "15|'lab_appointments'|'a1'|'insert'|1|NULL|NULL",
                                     "15|'lab_results'|'o1'|'insert'|1|NULL|NULL",
                                     "15|'lab_parsing_jobs'|'j1'|'insert'|1|NULL|NULL",
                                     "20|'connections'|'u1/oura'|'update'|1|NULL|NULL"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sample_rows)

BOOST_AUTO_TEST_CASE(one_change_per_delivery_and_series_insert_then_update_then_stale) {
  Store s;
  auto first = s.apply(samples({heartrate(1000, 60), heartrate(2000, 61), heartrate(3000, 62)}), 4);
  BOOST_TEST(first.samples_written == 3);
  BOOST_TEST(test::dump_table(s.db, "series") == Strings{"1|'u1'|'heartrate'|'garmin'|'watch'|NULL|NULL"},
             boost::test_tools::per_element());

  // Two of three keys exist: the change is an update covering all three.
  auto second = s.apply(samples({heartrate(2000, 71), heartrate(3000, 72), heartrate(4000, 73)}), 9);
  BOOST_TEST(second.samples_written == 3);
  // Older than what is stored: nothing written, no change.
  auto stale = s.apply(samples({heartrate(2000, 1), heartrate(3000, 2)}), 6);
  BOOST_TEST(stale.samples_written == 0);
  BOOST_TEST(stale.rows_seen == 2);

  BOOST_TEST(test::dump_table(s.db, "samples") == (Strings{"1|1000|3600|60|'bpm'|NULL|NULL|NULL|NULL|NULL|NULL|4",
                                                           "1|2000|3600|71|'bpm'|NULL|NULL|NULL|NULL|NULL|NULL|9",
                                                           "1|3000|3600|72|'bpm'|NULL|NULL|NULL|NULL|NULL|NULL|9",
                                                           "1|4000|3600|73|'bpm'|NULL|NULL|NULL|NULL|NULL|NULL|9"}),
             boost::test_tools::per_element());
  BOOST_TEST(s.changes() == (Strings{"4|'samples'|'u1/heartrate/garmin/watch'|'insert'|3|1000|3000",
                                     "9|'samples'|'u1/heartrate/garmin/watch'|'update'|3|2000|4000"}),
             boost::test_tools::per_element());
  BOOST_TEST(value(s.db, "SELECT user_id || '/' || t_ms || '/' || value FROM samples_named WHERE t_ms = 4000") ==
             "'u1/4000/73'");
}

BOOST_AUTO_TEST_CASE(a_replacement_replaces_every_field_and_a_duplicate_in_one_delivery_keeps_the_first) {
  Store s;
  rows::SampleRow full;
  full.t_ms = 5000;
  full.value = std::string_view("high");
  full.unit = "mmHg";
  full.type = "reading";
  full.start_ms = 5000;
  full.end_ms = 6000;
  full.systolic = 121.0;
  full.diastolic = 79.5;
  full.extra_json = R"({"grouping":{"reading_id":"r-1"}})";
  s.apply(samples({full}), 1);
  BOOST_TEST(value(s.db, "SELECT * FROM samples") ==
             R"(1|5000|NULL|'high'|'mmHg'|'reading'|5000|6000|121|79.5|'{"grouping":{"reading_id":"r-1"}}'|1)");

  // A plain sample for the same key clears what it does not have; of two samples with
  // one timestamp in one delivery the first is kept (same seq: not newer).
  rows::SampleRow plain = heartrate(5000, 80);
  plain.value = 80.5;
  auto applied = s.apply(samples({plain, heartrate(5000, 99)}), 2);
  BOOST_TEST(applied.samples_written == 1);
  BOOST_TEST(value(s.db, "SELECT * FROM samples") == "1|5000|3600|80.5|'bpm'|NULL|NULL|NULL|NULL|NULL|NULL|2");
  BOOST_TEST(s.changes().back() == "2|'samples'|'u1/heartrate/garmin/watch'|'update'|1|5000|5000");
}

// The writer reads the timestamps stored within a batch's span first (a batch of 8 or more,
// with at most its size + 16 stored there), else tries each sample as an insert first; both
// ways follow the same rules.
BOOST_AUTO_TEST_CASE(batches_read_first_or_not_follow_the_same_rules) {
  Store s;
  std::vector<rows::SampleRow> dense;
  for (int64_t t = 1000; t <= 100000; t += 1000) dense.push_back(heartrate(t, 60));
  BOOST_TEST(s.apply(samples(dense), 5).samples_written == 100);

  // 100 stored in the span of 8 samples: not read. One stored (older), one new twice.
  auto sparse = s.apply(samples({heartrate(500, 1), heartrate(50000, 2), heartrate(200000, 3),
                                 heartrate(200000, 4), heartrate(300000, 5), heartrate(400000, 6),
                                 heartrate(500000, 7), heartrate(600000, 8)}),
                        6);
  BOOST_TEST(sparse.samples_written == 7);
  // Read first: two stored, one new twice (the first stays), one stored twice, five new.
  auto read = s.apply(samples({heartrate(99000, 11), heartrate(100000, 12), heartrate(100500, 13),
                               heartrate(100500, 14), heartrate(99000, 15), heartrate(101000, 16),
                               heartrate(102000, 17), heartrate(103000, 18), heartrate(104000, 19),
                               heartrate(105000, 20)}),
                      7);
  BOOST_TEST(read.samples_written == 8);
  // Read first, older than what is stored: eight stale, one new.
  std::vector<rows::SampleRow> stale;
  for (int64_t t = 1000; t <= 8000; t += 1000) stale.push_back(heartrate(t, 30));
  stale.push_back(heartrate(8500, 31));
  BOOST_TEST(s.apply(samples(stale), 3).samples_written == 1);
  // Exactly 8 + 16 stored in the span (10000-33000): read first; 8 + 17 (40000-64000): not.
  for (const auto& [from, to, seq] : {std::tuple{10000, 33000, 8}, std::tuple{40000, 64000, 9}}) {
    std::vector<rows::SampleRow> edge{heartrate(from, 40), heartrate(to, 41)};
    for (int64_t t = from + 500; edge.size() < 8; t += 1000) edge.push_back(heartrate(t, 42));
    BOOST_TEST(s.apply(samples(edge), seq).samples_written == 8);
  }

  BOOST_TEST(rows(s.db, "SELECT t_ms, value, seq FROM samples WHERE t_ms IN (500, 1000, 8000, 8500, 10000, 10500, "
                        "33000, 40000, 64000, 50000, 99000, 100000, 100500, 200000) ORDER BY t_ms") ==
                 (Strings{"500|1|6", "1000|60|5", "8000|60|5", "8500|31|3", "10000|40|8", "10500|42|8",
                          "33000|41|8", "40000|40|9", "50000|2|6", "64000|41|9", "99000|11|7", "100000|12|7",
                          "100500|13|7", "200000|3|6"}),
             boost::test_tools::per_element());
  BOOST_TEST(value(s.db, "SELECT count(*) FROM samples") == "125");
  BOOST_TEST(s.changes() == (Strings{"5|'samples'|'u1/heartrate/garmin/watch'|'insert'|100|1000|100000",
                                     "6|'samples'|'u1/heartrate/garmin/watch'|'update'|7|500|600000",
                                     "7|'samples'|'u1/heartrate/garmin/watch'|'update'|8|99000|105000",
                                     "3|'samples'|'u1/heartrate/garmin/watch'|'insert'|1|8500|8500",
                                     "8|'samples'|'u1/heartrate/garmin/watch'|'update'|8|10000|33000",
                                     "9|'samples'|'u1/heartrate/garmin/watch'|'update'|8|40000|64000"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(two_batches_of_one_series_in_a_delivery_make_one_change) {
  Store s;
  auto d = samples({heartrate(1000, 60)});
  d.sample_batches.push_back(d.sample_batches[0]);
  d.sample_batches[1].samples = {heartrate(500, 59), heartrate(1000, 60)};
  auto other_user = samples({heartrate(1000, 50)}, "u2");
  d.sample_batches.push_back(other_user.sample_batches[0]);
  s.apply(d, 3);
  BOOST_TEST(s.changes() == (Strings{"3|'samples'|'u1/heartrate/garmin/watch'|'insert'|2|500|1000",
                                     "3|'samples'|'u2/heartrate/garmin/watch'|'insert'|1|1000|1000"}),
             boost::test_tools::per_element());
  BOOST_TEST(test::dump_table(s.db, "series") ==
                 (Strings{"1|'u1'|'heartrate'|'garmin'|'watch'|NULL|NULL", "2|'u2'|'heartrate'|'garmin'|'watch'|NULL|NULL"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(ids_cached_in_a_rolled_back_transaction_are_forgotten) {
  Store s;
  {
    auto txn = sqlite::Transaction::begin(s.db);
    BOOST_REQUIRE(s.writer->apply(samples({heartrate(1000, 60)}, "ghost"), 1, kReceivedAt));
  }  // rolled back: series 1 ('ghost') never existed
  s.writer->forget_cached_ids();
  s.apply(samples({heartrate(1000, 61)}, "u1"), 2);
  s.apply(samples({heartrate(2000, 62)}, "ghost"), 3);
  BOOST_TEST(test::dump_table(s.db, "series") ==
                 (Strings{"1|'u1'|'heartrate'|'garmin'|'watch'|NULL|NULL", "2|'ghost'|'heartrate'|'garmin'|'watch'|NULL|NULL"}),
             boost::test_tools::per_element());
  BOOST_TEST(rows(s.db, "SELECT user_id, t_ms FROM samples_named ORDER BY t_ms") ==
                 (Strings{"'u1'|1000", "'ghost'|2000"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(workout_streams_and_jobs)

BOOST_AUTO_TEST_CASE(a_notice_upserts_the_stream_row_and_queues_a_fetch_once_per_seq) {
  Store s;
  BOOST_TEST(s.apply(stream_notice("running"), 5).jobs_queued == 1);
  BOOST_TEST(test::dump_table(s.db, "workout_streams") == Strings{"'w1'|'u1'|'fitbit'|'5127'|'running'|5|NULL|NULL|5"},
             boost::test_tools::per_element());
  BOOST_TEST(rows(s.db, "SELECT kind, job_key, state, attempts, next_attempt_at, last_error, trigger_seq, payload, "
                        "created_at, updated_at FROM jobs") ==
                 Strings{R"('workout_stream'|'w1'|'queued'|0|1717200000000|NULL|5|)"
                         R"('{"workout_id":"w1","user_id":"u1","provider":"fitbit"}'|1717200000000|1717200000000)"},
             boost::test_tools::per_element());

  // The fetcher finished it; the same notice applied again (rebuild) leaves it done.
  BOOST_REQUIRE(s.db.exec("UPDATE jobs SET state = 'done', attempts = 2, last_error = 'timeout'"));
  BOOST_TEST(s.apply(stream_notice("running"), 5, kReceivedAt + 99).jobs_queued == 0);
  BOOST_TEST(value(s.db, "SELECT state || ' ' || attempts || ' ' || trigger_seq FROM jobs") == "'done 2 5'");

  // A later notice re-queues it from scratch.
  BOOST_TEST(s.apply(stream_notice("cycling"), 8, kReceivedAt + 5000).jobs_queued == 1);
  BOOST_TEST(rows(s.db, "SELECT state, attempts, last_error, trigger_seq, next_attempt_at, created_at, updated_at "
                        "FROM jobs") == Strings{"'queued'|0|NULL|8|1717200005000|1717200000000|1717200005000"},
             boost::test_tools::per_element());
  BOOST_TEST(value(s.db, "SELECT sport || ' ' || notice_seq FROM workout_streams") == "'cycling 8'");
  BOOST_TEST(s.changes() == (Strings{"5|'workout_streams'|'w1'|'insert'|1|NULL|NULL",
                                     "8|'workout_streams'|'w1'|'update'|1|NULL|NULL"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_fetched_stream_replaces_all_points_unless_a_later_fetch_is_stored) {
  Store s;
  s.apply(stream_notice("running"), 5);
  s.apply(fetched_stream(R"({"time":[100,101,102],"heartrate":[120,null,122],"lat":[1.5]})", 3), 20);
  BOOST_TEST(test::dump_table(s.db, "stream_points") ==
                 (Strings{"'w1'|0|100|NULL|120|NULL|1.5|NULL|NULL|NULL|NULL|NULL|NULL",
                          "'w1'|1|101|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
                          "'w1'|2|102|NULL|122|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"}),
             boost::test_tools::per_element());
  s.apply(fetched_stream(R"({"time":[200,201],"power":[250,251.5]})", 2), 30);
  s.apply(fetched_stream(R"({"time":[1]})", 1), 25);  // older fetch: ignored
  BOOST_TEST(test::dump_table(s.db, "stream_points") ==
                 (Strings{"'w1'|0|200|NULL|NULL|NULL|NULL|NULL|NULL|NULL|250|NULL|NULL",
                          "'w1'|1|201|NULL|NULL|NULL|NULL|NULL|NULL|NULL|251.5|NULL|NULL"}),
             boost::test_tools::per_element());
  BOOST_TEST(test::dump_table(s.db, "workout_streams") == Strings{"'w1'|'u1'|'fitbit'|'5127'|'running'|5|30|2|30"},
             boost::test_tools::per_element());
  BOOST_TEST(s.changes() == (Strings{"5|'workout_streams'|'w1'|'insert'|1|NULL|NULL",
                                     "20|'workout_streams'|'w1'|'update'|1|NULL|NULL",
                                     "20|'stream_points'|'w1'|'replace'|3|NULL|NULL",
                                     "30|'workout_streams'|'w1'|'update'|1|NULL|NULL",
                                     "30|'stream_points'|'w1'|'replace'|2|NULL|NULL"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_stream_fetched_without_a_notice_gets_its_row_and_a_later_notice_completes_it) {
  Store s;
  s.apply(fetched_stream(R"({"time":[1,2]})", 2), 7);
  BOOST_TEST(test::dump_table(s.db, "workout_streams") == Strings{"'w1'|NULL|NULL|NULL|NULL|NULL|7|2|7"},
             boost::test_tools::per_element());
  s.apply(stream_notice("running"), 4);  // an older notice still fills in what the fetch lacked
  BOOST_TEST(test::dump_table(s.db, "workout_streams") == Strings{"'w1'|'u1'|'fitbit'|'5127'|'running'|4|7|2|7"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_backfill_notice_records_the_window_and_queues_its_fetch) {
  Store s;
  rows::DeliveryRows d;
  d.family = rows::Family::backfill;
  d.backfill = rows::BackfillNotice{"u1", "workouts", "zwift", 1592727781000, 1730558368000, true};
  BOOST_TEST(s.apply(d, 3).jobs_queued == 1);
  BOOST_TEST(test::dump_table(s.db, "backfills") == Strings{"'u1'|'workouts'|'zwift'|1592727781000|1730558368000|1|3"},
             boost::test_tools::per_element());
  BOOST_TEST(rows(s.db, "SELECT kind, job_key, state, trigger_seq, payload FROM jobs") ==
                 Strings{"'backfill'|'u1/workouts/zwift/1592727781000/1730558368000'|'queued'|3|"
                         R"('{"user_id":"u1","resource":"workouts","provider":"zwift",)"
                         R"("start":"2020-06-21T08:23:01.000Z","end":"2024-11-02T14:39:28.000Z"}')"},
             boost::test_tools::per_element());
  BOOST_TEST(s.changes() ==
                 Strings{"3|'backfills'|'u1/workouts/zwift/1592727781000/1730558368000'|'insert'|1|NULL|NULL"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_fetched_workouts_page_queues_one_stream_fetch_per_workout) {
  Store s;
  rows::DeliveryRows d = sleep_summary("wk1", "{}");
  d.family = rows::Family::fetched_summaries;
  d.summaries[0].resource = "workouts";
  d.summaries[0].provider = "zwift";
  d.summaries.push_back(d.summaries[0]);
  d.summaries[1].id = "wk2";
  d.summaries[1].user_id = "u2";
  d.summaries[0].provider_id = "z-1";
  d.summaries[0].sport = "cycling";
  d.workout_ids_to_fetch = {"wk1", "wk2"};
  BOOST_TEST(s.apply(d, 6).jobs_queued == 2);
  BOOST_TEST(rows(s.db, "SELECT kind, job_key, trigger_seq, payload FROM jobs ORDER BY job_key") ==
                 (Strings{R"('workout_stream'|'wk1'|6|'{"workout_id":"wk1","user_id":"u1","provider":"zwift"}')",
                          R"('workout_stream'|'wk2'|6|'{"workout_id":"wk2","user_id":"u2","provider":"zwift"}')"}),
             boost::test_tools::per_element());
  BOOST_TEST(test::count(s.db, "summaries WHERE resource = 'workouts'") == 2);
  // Each workout's stream row says whose it is, from the page, as a webhook notice would
  // (black-box attack: a backfilled stream had no provider, provider id or sport).
  BOOST_TEST(rows(s.db, "SELECT workout_id, user_id, provider, provider_id, sport, notice_seq FROM workout_streams "
                        "ORDER BY workout_id") ==
                 (Strings{"'wk1'|'u1'|'zwift'|'z-1'|'cycling'|6", "'wk2'|'u2'|'zwift'|NULL|NULL|6"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(failures)

BOOST_AUTO_TEST_CASE(rows_the_schema_rejects_are_the_deliverys_fault) {
  Store s;
  BOOST_REQUIRE(s.db.exec("CREATE TRIGGER reject BEFORE INSERT ON summaries WHEN NEW.id = 'poison' "
                          "BEGIN SELECT RAISE(ABORT, 'rejected by a test trigger'); END"));
  auto txn = sqlite::Transaction::begin(s.db);
  auto applied = s.writer->apply(sleep_summary("poison", "{}"), 1, kReceivedAt);
  BOOST_TEST(!applied.ok());
  BOOST_TEST(applied.error() == "summaries: rejected by a test trigger");
  BOOST_TEST((applied.error_kind() == ErrorKind::data));
}

BOOST_AUTO_TEST_CASE(a_full_disk_is_the_stores_fault) {
  Store s;
  const int64_t pages = std::stoll(value(s.db, "PRAGMA page_count"));
  BOOST_REQUIRE(s.db.exec("PRAGMA max_page_count = " + std::to_string(pages)));
  std::vector<rows::SampleRow> many;
  for (int64_t i = 0; i < 5000; ++i) many.push_back(heartrate(i * 1000, 60));
  auto txn = sqlite::Transaction::begin(s.db);
  auto applied = s.writer->apply(samples(many), 1, kReceivedAt);
  BOOST_TEST(!applied.ok());
  BOOST_TEST(applied.error().find("full") != std::string::npos, applied.error());
  BOOST_TEST((applied.error_kind() == ErrorKind::full));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // derived_writer_test
