// The PostgreSQL derived writer (store/postgres/derived/pg_derived_writer.h) against the
// SQLite one: the same hand-built deliveries (tests/derived/delivery_builders.h) applied
// to both, then every derived table, the change feed and the jobs compared row for row.
// (tests/postgres/derived_dump.h says how they are compared).
#include <limits>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <map>

#include "store/postgres/database.h"
#include "store/postgres/derived/pg_derived_tables.h"
#include "store/postgres/derived/pg_derived_writer.h"
#include "store/sqlite/derived/derived_tables.h"
#include "store/sqlite/derived/sqlite_derived_writer.h"
#include "tests/derived/delivery_builders.h"
#include "tests/derived/store_dump.h"
#include "tests/postgres/derived_dump.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(pg_derived_writer_test)

using namespace hh;
using hh::test::derived_pg_rows;
using hh::test::fetched_stream;
using hh::test::heartrate;
using hh::test::kReceivedAt;
using hh::test::samples;
using hh::test::sleep_summary;
using hh::test::stream_notice;
using Strings = std::vector<std::string>;

namespace {

struct DerivedApplied {
  bool ok = false;
  store::ApplyCounts counts;
  std::string error;
  ErrorKind kind = ErrorKind::other;
};

bool same_apply_counts(const store::ApplyCounts& a, const store::ApplyCounts& b) {
  return a.rows_seen == b.rows_seen && a.rows_written == b.rows_written && a.samples_written == b.samples_written &&
         a.jobs_queued == b.jobs_queued;
}

// The same deliveries through both writers, each in a transaction of its own per apply.
struct DerivedPair {
  explicit DerivedPair(bool deferred = false) : deferred(deferred) {
    if (deferred) {
      lite_writer->defer_changes();
      pg_writer->defer_changes();
    }
  }

  bool deferred;
  test::TempDir dir;
  sqlite::Connection lite = test::open_store(dir.file("healthhook.db"));
  std::unique_ptr<store::DerivedWriter> lite_writer = store::DerivedWriter::create(lite).value();
  pg::Connection pg = [] {
    auto db = store::connect_migrated({test::PostgresCluster::shared().fresh_database(), ""});
    BOOST_REQUIRE_MESSAGE(db, db.error());
    return std::move(*db);
  }();
  std::unique_ptr<store::PgDerivedWriter> pg_writer = [this] {
    auto writer = store::PgDerivedWriter::create(pg);
    BOOST_REQUIRE_MESSAGE(writer, writer.error());
    return std::move(*writer);
  }();

  DerivedApplied apply_lite(const rows::DeliveryRows& delivery, int64_t seq, int64_t received_at) {
    auto txn = sqlite::Transaction::begin(lite);
    BOOST_REQUIRE_MESSAGE(txn, txn.error());
    auto applied = lite_writer->apply(delivery, seq, received_at);
    if (applied && deferred) {
      auto flushed = lite_writer->flush_changes();
      BOOST_REQUIRE_MESSAGE(flushed, flushed.error());
    }
    if (!applied) {
      lite_writer->discard_changes();
      lite_writer->forget_cached_ids();
      return {false, {}, applied.error(), applied.error_kind()};
    }
    BOOST_REQUIRE(txn->commit());
    return {true, *applied, "", ErrorKind::other};
  }

  DerivedApplied apply_pg(const rows::DeliveryRows& delivery, int64_t seq, int64_t received_at) {
    auto txn = pg::Transaction::begin(pg);
    BOOST_REQUIRE_MESSAGE(txn, txn.error());
    auto applied = pg_writer->apply(delivery, seq, received_at);
    if (applied && deferred) {
      auto flushed = pg_writer->flush_changes();
      BOOST_REQUIRE_MESSAGE(flushed, flushed.error());
    }
    if (!applied) {
      pg_writer->discard_changes();
      pg_writer->forget_cached_ids();
      return {false, {}, applied.error(), applied.error_kind()};  // txn rolls back
    }
    auto committed = txn->commit();
    BOOST_REQUIRE_MESSAGE(committed, committed.error());
    return {true, *applied, "", ErrorKind::other};
  }

  // Applies to both; the outcomes must agree. Returns SQLite's.
  DerivedApplied apply(const rows::DeliveryRows& delivery, int64_t seq, int64_t received_at = kReceivedAt) {
    const DerivedApplied lite_result = apply_lite(delivery, seq, received_at);
    const DerivedApplied pg_result = apply_pg(delivery, seq, received_at);
    BOOST_TEST(lite_result.ok == pg_result.ok, "seq " << seq << ": " << lite_result.error << " / " << pg_result.error);
    if (lite_result.ok && pg_result.ok) {
      BOOST_TEST(same_apply_counts(lite_result.counts, pg_result.counts),
                 "seq " << seq << ": counts " << lite_result.counts.rows_seen << "/" << lite_result.counts.rows_written
                        << "/" << lite_result.counts.samples_written << "/" << lite_result.counts.jobs_queued
                        << " vs " << pg_result.counts.rows_seen << "/" << pg_result.counts.rows_written << "/"
                        << pg_result.counts.samples_written << "/" << pg_result.counts.jobs_queued);
    }
    return lite_result;
  }

  // Several deliveries in one transaction on each side, as the processor's steps apply
  // them (deferred feed, flushed before the commit).
  void apply_step(const std::vector<std::pair<rows::DeliveryRows, int64_t>>& deliveries) {
    {
      auto txn = sqlite::Transaction::begin(lite);
      for (const auto& delivery : deliveries) {
        auto applied = lite_writer->apply(delivery.first, delivery.second, kReceivedAt + delivery.second);
        BOOST_REQUIRE_MESSAGE(applied, applied.error());
      }
      BOOST_REQUIRE(lite_writer->flush_changes());
      BOOST_REQUIRE(txn->commit());
    }
    auto txn = pg::Transaction::begin(pg);
    for (const auto& delivery : deliveries) {
      auto applied = pg_writer->apply(delivery.first, delivery.second, kReceivedAt + delivery.second);
      BOOST_REQUIRE_MESSAGE(applied, applied.error());
    }
    auto flushed = pg_writer->flush_changes();
    BOOST_REQUIRE_MESSAGE(flushed, flushed.error());
    BOOST_REQUIRE(txn->commit());
  }

  void forget_cached_ids_on_both() {
    lite_writer->forget_cached_ids();
    pg_writer->forget_cached_ids();
  }

  // A trigger on both stores that refuses `op` ("INSERT", "UPDATE") of a row of `table`
  // where the new row matches (the condition in SQLite's and in PostgreSQL's spelling),
  // with the message "rejected by a test trigger" (a check violation on PostgreSQL).
  void refuse_on_both(const std::string& op, const std::string& table, const std::string& lite_when,
                      const std::string& pg_when) {
    BOOST_REQUIRE(lite.exec("CREATE TRIGGER reject BEFORE " + op + " ON " + table + " WHEN " + lite_when +
                            " BEGIN SELECT RAISE(ABORT, 'rejected by a test trigger'); END"));
    auto created = pg.exec("CREATE FUNCTION reject() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF " + pg_when +
                           " THEN RAISE check_violation USING MESSAGE = 'rejected by a test trigger'; END IF; "
                           "RETURN NEW; END $$; CREATE TRIGGER reject BEFORE " + op + " ON " + table +
                           " FOR EACH ROW EXECUTE FUNCTION reject()");
    BOOST_REQUIRE_MESSAGE(created, created.error());
  }

  // Runs the same statement on both stores (a test's stand-in for the fetcher).
  void exec(const std::string& sql) {
    BOOST_REQUIRE(lite.exec(sql));
    auto done = pg.exec(sql);
    BOOST_REQUIRE_MESSAGE(done, done.error());
  }

  // Every table on both sides, row for row; the number of rows compared.
  size_t compare(bool with_ids = true) { return test::compare_derived_tables(lite, pg, with_ids); }
};

rows::SampleRow derived_sample(int64_t t_ms, rows::SampleValue value) {
  rows::SampleRow s;
  s.t_ms = t_ms;
  s.value = value;
  s.unit = "mg/dL";
  return s;
}

rows::SampleRow bp_sample(int64_t t_ms, double systolic, double diastolic) {
  rows::SampleRow s;
  s.t_ms = t_ms;
  s.timezone_offset = -18000;
  s.unit = "mmHg";
  s.type = "cuff";
  s.systolic = systolic;
  s.diastolic = diastolic;
  return s;
}

rows::DeliveryRows with_delivery_identity(rows::DeliveryRows d, std::optional<std::string_view> user,
                                   std::optional<std::string_view> client_user_id,
                                   std::optional<std::string_view> team_id) {
  d.identity = rows::Identity{user, client_user_id, team_id};
  return d;
}

}  // namespace

BOOST_AUTO_TEST_CASE(summaries_insert_update_and_stale_in_every_order) {
  const std::array<int64_t, 4> seqs{3, 5, 8, 11};
  const std::array<std::string, 4> data{R"({"v":3})", R"({"v":5})", R"({"v":8})", R"({"v":11})"};
  std::array<size_t, 4> order{0, 1, 2, 3};
  DerivedPair s;
  int64_t base = 0;
  // Every order of four versions, each on a summary of its own, in one pair of stores.
  std::vector<std::string> ids;
  do {
    ids.push_back("s" + std::to_string(ids.size()));
  } while (std::next_permutation(order.begin(), order.end()));
  order = {0, 1, 2, 3};
  size_t n = 0;
  do {
    for (size_t i : order) {
      auto d = sleep_summary(ids[n], data[i]);
      if (i == 2) d.summaries[0].calendar_date.reset();  // a version moving its date
      if (i == 3) d.summaries[0].user_id = "u2";
      s.apply(d, base + seqs[i]);
    }
    base += 100;
    ++n;
  } while (std::next_permutation(order.begin(), order.end()));
  BOOST_TEST(n == 24u);
  BOOST_TEST(s.compare() > 24u * 2);  // 24 summaries, as many inserts in the feed, and updates
}

BOOST_AUTO_TEST_CASE(samples_batches_with_repeated_timestamps_full_and_plain) {
  DerivedPair s;
  s.apply(samples({heartrate(1000, 60), heartrate(2000, 61), heartrate(3000, 62)}), 4);
  // Repeated timestamps in one batch, out of order: the first of each stays.
  auto repeated = samples({heartrate(3000, 90), heartrate(2000, 71), heartrate(3000, 91), heartrate(4000, 73),
                           heartrate(2000, 92), heartrate(500, 50)});
  BOOST_TEST(s.apply(repeated, 9).counts.samples_written == 4);
  s.apply(samples({heartrate(2000, 1), heartrate(3000, 2)}), 6);  // stale
  // A full sample replacing a plain one, then plain again: the replacement clears.
  rows::SampleRow full = heartrate(1000, 0);
  full.value = std::string_view("high \"quoted\" \\ back\nslash é 🫀");
  full.type = "reading";
  full.start_ms = 1000;
  full.end_ms = 6000;
  full.systolic = 121.0;
  full.diastolic = 79.5;
  full.extra_json = R"({"grouping":{"reading_id":"r-\"1\""}})";
  auto mixed = samples({full, heartrate(7000, 77)});
  s.apply(mixed, 12);
  rows::SampleRow real = heartrate(7000, 0);
  real.value = 72.0;
  rows::SampleRow tiny = heartrate(8000, 0);
  tiny.value = 0.1;
  rows::SampleRow big = heartrate(9000, 0);
  big.value = int64_t{-9007199254740993};
  rows::SampleRow none = heartrate(10000, 0);
  none.value = std::monostate{};
  none.unit.reset();
  none.timezone_offset.reset();
  s.apply(samples({real, tiny, big, none}), 13);
  // Round floats whose shortest form has an exponent stay floats (jsonb would print 1e+05
  // as 100000, which reads back as an integer). (-0.0 is left out: jsonb has no negative
  // zero and keeps 0.0.)
  std::vector<rows::SampleRow> round_floats;
  int64_t at = 5'000'000'000;  // after the times the batches below write again
  for (const double value : {1e5, -2.5e6, 1e15, 1e16, 1e20, 1.7976931348623157e308, 123456789.0, 1.5e300}) {
    round_floats.push_back(heartrate(at += 1000, 0));
    round_floats.back().value = value;
  }
  s.apply(samples(round_floats), 13);
  s.apply(samples({heartrate(1000, 80)}), 14);
  // Two batches of one series and one of another user in one delivery: one change each.
  auto d = samples({heartrate(1000, 60)});
  d.sample_batches.push_back(d.sample_batches[0]);
  d.sample_batches[1].samples = {heartrate(500, 59), heartrate(1000, 61)};
  d.sample_batches.push_back(samples({heartrate(1000, 50)}, "u2").sample_batches[0]);
  s.apply(d, 20);
  // Many samples with repeats in one batch.
  std::vector<rows::SampleRow> many;
  for (int64_t i = 0; i < 3000; ++i) many.push_back(heartrate((i % 2000) * 1000, 60 + i));
  s.apply(samples(many), 21);
  s.apply(samples({}), 22);  // an empty batch: nothing
  BOOST_TEST(s.compare() > 2000u);
}

// PostgreSQL inserts the samples after a series' newest stored time without ON CONFLICT,
// trusting the time it cached: what others write behind its back must not make a valid
// delivery fail as invalid, nor leave other rows than SQLite's.
BOOST_AUTO_TEST_CASE(samples_after_the_newest_time_are_inserted_and_a_stale_newest_time_is_not_the_deliverys_fault) {
  DerivedPair s;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // A new series: nothing stored, so even the first time there is goes through the upsert.
  BOOST_TEST(s.apply(samples({heartrate(kMin, 40), heartrate(1000, 60), heartrate(3000, 62)}), 1)
                 .counts.samples_written == 3);
  // Before, between and after the stored ones, with a repeat of a new time (the first stays).
  BOOST_TEST(s.apply(samples({heartrate(500, 55), heartrate(2000, 61), heartrate(3000, 63), heartrate(4000, 64),
                              heartrate(5000, 65), heartrate(4000, 99)}),
                     2)
                 .counts.samples_written == 5);
  // Written behind the writer's back after its newest time (5000): the insert meets the key,
  // the error is busy (apply again), not data (the delivery's fault).
  const std::string written_behind =
      "INSERT INTO samples (series_id, t_ms, value, unit, seq) SELECT series_id, 7000, 77, 'bpm', 100 "
      "FROM series WHERE user_id = 'u1'";
  BOOST_REQUIRE(s.lite.exec(written_behind));
  BOOST_REQUIRE(s.pg.exec(std::string(written_behind).replace(written_behind.find("77"), 2, "'77'::jsonb")));
  // With a stored sample too, so that the upsert runs first in the same round trip.
  const auto behind = samples({heartrate(1000, 59), heartrate(6000, 66), heartrate(7000, 67), heartrate(8000, 68)});
  const auto refused = s.apply_pg(behind, 3, kReceivedAt);
  BOOST_TEST(!refused.ok);
  BOOST_TEST((refused.kind == ErrorKind::busy), refused.error);
  // Applied again after the rollback (the writer forgot what it cached): the stored 7000
  // (seq 100) wins over seq 3, as on SQLite; 1000 is replaced.
  const auto again = s.apply_pg(behind, 3, kReceivedAt);
  BOOST_TEST(again.ok, again.error);
  BOOST_TEST(again.counts.samples_written == 3);
  BOOST_TEST(s.apply_lite(behind, 3, kReceivedAt).counts.samples_written == 3);
  // Removed behind its back before its newest time: upserted, so inserted again.
  s.exec("DELETE FROM samples WHERE t_ms = 2000");
  BOOST_TEST(s.apply(samples({heartrate(2000, 72), heartrate(kMax, 90)}), 4).counts.samples_written == 2);
  BOOST_TEST(s.apply(samples({heartrate(kMax, 91), heartrate(8000, 92)}), 5).counts.samples_written == 2);
  BOOST_TEST(derived_pg_rows(s.pg, "SELECT count(*), sum((value::text)::bigint)::bigint FROM samples") ==
             Strings{"11|744"});
  BOOST_TEST(s.compare() == 29u);  // every table row for row: 11 samples and their value types, a series, the feed
}

// The upsert and the plain insert go in one round trip: a failure of the first is the
// delivery's (data), and the second, skipped after it, neither hides nor replaces it.
BOOST_AUTO_TEST_CASE(a_refused_replacement_beside_new_samples_is_the_deliverys_fault) {
  DerivedPair s;
  s.refuse_on_both("UPDATE", "samples", "NEW.value = 666", "NEW.value = '666'::jsonb");
  s.apply(samples({heartrate(1000, 60), heartrate(2000, 61)}), 1);
  const auto poison = samples({heartrate(2000, 666), heartrate(3000, 62), heartrate(4000, 63)});
  const auto lite = s.apply_lite(poison, 2, kReceivedAt);
  const auto pg = s.apply_pg(poison, 2, kReceivedAt);
  BOOST_TEST(!lite.ok);
  BOOST_TEST(!pg.ok);
  BOOST_TEST((lite.kind == ErrorKind::data));
  BOOST_TEST((pg.kind == ErrorKind::data), pg.error);
  BOOST_TEST(pg.error.find("rejected by a test trigger") != std::string::npos, pg.error);
  BOOST_TEST(s.pg.last_sqlstate() == "23514");
  // Nothing of it stayed, and the next delivery goes on from the stored newest time.
  BOOST_TEST(s.apply(samples({heartrate(2000, 71), heartrate(3000, 72)}), 3).counts.samples_written == 2);
  BOOST_TEST(derived_pg_rows(s.pg, "SELECT count(*) FROM samples") == Strings{"3"});
  BOOST_TEST(s.compare() == 10u);  // every table, row for row
}

BOOST_AUTO_TEST_CASE(blood_pressure_and_series_source_ids) {
  DerivedPair s;
  auto bp = samples({bp_sample(1000, 120, 80), bp_sample(2000, 118.5, 79.25)});
  bp.sample_batches[0].resource = "blood_pressure";
  bp.sample_batches[0].source_id = int64_t{16};
  s.apply(bp, 1);
  bp.sample_batches[0].samples = {bp_sample(2000, 130, 85), bp_sample(3000, 125, 82)};
  bp.sample_batches[0].source_id = 16.0;  // equal as a number: kept as it is
  s.apply(bp, 2);
  bp.sample_batches[0].source_id = std::string_view("dev-\"7\"");
  s.apply(bp, 3);
  bp.sample_batches[0].source_id = std::monostate{};  // absent: kept
  s.apply(bp, 4);
  bp.sample_batches[0].source_id = 2.5;
  s.apply(bp, 5);
  bp.sample_batches[0].source_id = std::string_view("dev-\"7\"");
  s.apply(bp, 6);
  auto glucose = samples({derived_sample(1000, int64_t{5}), derived_sample(2000, 5.5)});
  glucose.sample_batches[0].resource = "glucose";
  glucose.sample_batches[0].source_id = int64_t{3};
  s.apply(glucose, 7);
  s.forget_cached_ids_on_both();
  glucose.sample_batches[0].source_id = int64_t{3};
  s.apply(glucose, 8);
  BOOST_TEST(s.compare() > 5u);
}

BOOST_AUTO_TEST_CASE(users_follow_identity_rules) {
  DerivedPair s;
  const auto summary = sleep_summary("s1", "{}");
  const auto user = [&](std::string_view id, std::optional<std::string_view> client_user_id,
                        std::optional<std::string_view> team_id, int64_t seq, int64_t received_at) {
    s.apply(with_delivery_identity(summary, id, client_user_id, team_id), seq, received_at);
  };
  user("u1", std::nullopt, std::nullopt, 1, kReceivedAt);
  user("u1", "member-1", std::nullopt, 2, kReceivedAt + 1000);    // identity
  user("u1", "member-1", std::nullopt, 3, kReceivedAt + 30000);   // nothing
  user("u1", std::nullopt, std::nullopt, 4, kReceivedAt + 61000);  // last seen
  user("u1", "member-0", "t-0", 0, kReceivedAt - 5000);            // older: fills the team only
  user("u1", "member-2", std::nullopt, 5, kReceivedAt + 62000);    // identity
  user("u1", std::nullopt, "t-1", 6, kReceivedAt + 200000);        // identity
  user("u2", "member-9", "t-9", 7, kReceivedAt);
  user("u2", "member-9", "t-9", 8, kReceivedAt - 60000);  // first seen
  s.forget_cached_ids_on_both();
  user("u2", "member-9", "t-9", 9, kReceivedAt + 10);  // nothing
  user("u2", "member-'x'", "t-9", 10, kReceivedAt + 20);
  BOOST_TEST(s.compare() > 10u);
}

BOOST_AUTO_TEST_CASE(every_record_table_follows_latest_wins) {
  DerivedPair s;
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

  rows::DeliveryRows device;
  device.device = rows::DeviceRow{"d1", "u1", "garmin", "watch", std::nullopt, "Garmin", "Forerunner", "19.1",
                                    "338", R"({"id":"d1"})"};
  s.apply(device, 13);
  device.device->device_version = "19.2";
  s.apply(device, 14);
  s.apply(device, 14);  // the same seq again: stale

  rows::DeliveryRows labs;
  labs.lab_order = rows::LabOrderRow{"o1", "u1", "t1", "received", "received.walk_in_test.ordered", std::nullopt,
                                       std::nullopt, "{}"};
  labs.lab_appointment = rows::LabAppointmentRow{"a1", "o1", "u1", "confirmed", "scheduled",
                                                   "2024-05-02T14:00:00+00:00", "2024-05-02T14:30:00+00:00", "{}"};
  labs.lab_result = rows::LabResultRow{"o1", "u1", "123", "partial", "critical", "{}"};
  labs.lab_parsing_job =
      rows::LabParsingJobRow{"j1", "completed", std::nullopt, false, true, R"({"results":[]})", "{}", "u1"};
  s.apply(labs, 15);
  labs.lab_order->status_detail = "awaiting_remaining_markers";
  labs.lab_parsing_job->needs_human_review.reset();
  s.apply(labs, 9);  // older than all of them
  s.apply(labs, 16);

  rows::DeliveryRows providers;
  providers.family = rows::Family::fetched_providers;
  providers.providers.push_back(rows::ProviderRow{"oura", "Oura", "Ring", "https://x/oura.png", "oauth",
                                                    R"(["sleep","activity"])", R"({"slug":"oura"})"});
  providers.providers.push_back(rows::ProviderRow{"zwift", "Zwift", std::nullopt, std::nullopt, "password",
                                                    std::nullopt, R"({"slug":"zwift"})"});
  s.apply(providers, 17);
  providers.providers[0].name = "Oura Ring";
  s.apply(providers, 18);
  s.apply(providers, 17);

  // Connections: an error event keeps the account's id and availability (u2's), a created
  // event's null replaces them (u1's, after its error above).
  rows::DeliveryRows other;
  other.family = rows::Family::connection;
  other.connection = rows::ConnectionRow{"u2", "oura", "connected", "ext-2", std::nullopt, std::nullopt,
                                           R"({"sleep":{"status":"available"}})", "provider.connection.created", "{}"};
  s.apply(other, 19);
  other.connection = rows::ConnectionRow{"u2", "oura", "error", std::nullopt, "token_refresh_failed", "revoked",
                                           std::nullopt, "provider.connection.error", "{}"};
  s.apply(other, 20);
  d.connection = rows::ConnectionRow{"u1", "oura", "connected", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                       "provider.connection.created", "{}"};
  s.apply(d, 21);
  BOOST_TEST(s.compare() > 10u);
}

// Issue 47: a deregistration marks the connection row and keeps the rest (a later
// connection event clears the mark); a completed parsing job without results queues its
// fetch, the fetched job fills the results and queues nothing; App IDs on summaries and
// series (the latest naming one wins).
BOOST_AUTO_TEST_CASE(deregistrations_parsing_results_and_app_ids) {
  DerivedPair s;
  rows::DeliveryRows connected;
  connected.family = rows::Family::connection;
  connected.connection = rows::ConnectionRow{"u1", "oura", "connected", "ext-1", std::nullopt, std::nullopt,
                                               R"({"sleep":{"status":"available"}})", "provider.connection.created",
                                               R"({"user_id":"u1"})"};
  s.apply(connected, 10);
  rows::DeliveryRows deregistered;
  deregistered.family = rows::Family::fetched_deregistration;
  deregistered.deregistration =
      rows::DeregistrationRow{"u1", "oura", kReceivedAt + 5, "fetch.deregistration", R"({"success":true})"};
  s.apply(deregistered, 11);
  s.apply(deregistered, 9);  // stale
  deregistered.deregistration->provider = "fitbit";  // a connection not seen yet
  s.apply(deregistered, 12);
  BOOST_TEST(test::rows(s.lite, "SELECT status, deregistered_at, external_user_id, event_type, seq, data FROM "
                                "connections ORDER BY provider") ==
             (Strings{"'deregistered'|" + std::to_string(kReceivedAt + 5) + "|NULL|'fetch.deregistration'|12|'{}'",
                      "'deregistered'|" + std::to_string(kReceivedAt + 5) +
                          "|'ext-1'|'fetch.deregistration'|11|'{\"user_id\":\"u1\"}'"}),
             boost::test_tools::per_element());
  BOOST_TEST(test::rows(s.lite, "SELECT seq, table_name, row_key, op FROM changes WHERE table_name = 'connections' "
                                "ORDER BY change_id") ==
             (Strings{"10|'connections'|'u1/oura'|'insert'", "11|'connections'|'u1/oura'|'update'",
                      "12|'connections'|'u1/fitbit'|'insert'"}),
             boost::test_tools::per_element());
  s.apply(connected, 13);  // connected again: the mark goes
  BOOST_TEST(test::rows(s.lite, "SELECT status, deregistered_at FROM connections WHERE provider = 'oura'") ==
             (Strings{"'connected'|NULL"}));

  rows::DeliveryRows completed;
  completed.family = rows::Family::lab_parsing_job;
  completed.identity.user_id = "u1";
  completed.lab_parsing_job =
      rows::LabParsingJobRow{"j1", "completed", std::nullopt, false, false, std::nullopt, R"({"id":"j1"})"};
  s.apply(completed, 14);
  rows::DeliveryRows fetched;
  fetched.family = rows::Family::fetched_parsing_job;
  fetched.lab_parsing_job = rows::LabParsingJobRow{"j1", "completed", std::nullopt, false, false,
                                                     R"({"results":[{"test_name":"LDL"}]})", R"({"id":"j1"})"};
  s.apply(fetched, 15);
  // A fetched job without results again, and an older webhook: no second job.
  fetched.lab_parsing_job->results_json.reset();
  s.apply(fetched, 16);
  rows::DeliveryRows started = completed;
  started.lab_parsing_job->status = "started";
  s.apply(started, 17);
  BOOST_TEST(test::rows(s.lite, "SELECT kind, job_key, trigger_seq, payload FROM jobs") ==
             (Strings{R"('parsing_job'|'j1'|14|'{"job_id":"j1","user_id":"u1"}')"}));

  rows::DeliveryRows summary = test::sleep_summary("s1", R"({"id":"s1"})");
  summary.summaries[0].app_id = "com.example.sleepy";
  s.apply(summary, 18);
  rows::DeliveryRows named = test::samples({test::heartrate(1715900000000, 60)});
  named.sample_batches[0].app_id = "com.example.hr";
  s.apply(named, 19);
  rows::DeliveryRows unnamed = test::samples({test::heartrate(1715900060000, 61)});
  s.apply(unnamed, 20);  // names none: the series keeps its App ID
  named.sample_batches[0].app_id = "com.example.hr2";
  named.sample_batches[0].samples[0].t_ms += 120000;
  s.apply(named, 21);
  BOOST_TEST(test::rows(s.lite, "SELECT app_id FROM summaries") == (Strings{"'com.example.sleepy'"}));
  BOOST_TEST(test::rows(s.lite, "SELECT app_id FROM series") == (Strings{"'com.example.hr2'"}));
  BOOST_TEST(s.compare() > 10u);
}

BOOST_AUTO_TEST_CASE(workout_streams_notices_fetches_and_their_jobs) {
  DerivedPair s;
  s.apply(stream_notice("running"), 5);
  s.exec("UPDATE jobs SET state = 'done', attempts = 2, last_error = 'timeout'");
  s.apply(stream_notice("running"), 5, kReceivedAt + 99);  // the same notice again: left done
  s.apply(stream_notice("cycling"), 8, kReceivedAt + 5000);  // re-queued from scratch
  s.apply(fetched_stream(R"({"time":[100,101,102],"heartrate":[120,null,122.5],"lat":[1.5,-0.1]})", 3), 20);
  s.apply(fetched_stream(R"({"time":[200,201],"power":[250,251.5],"temperature":[1e3]})", 2), 30);
  s.apply(fetched_stream(R"({"time":[1]})", 1), 25);  // an older fetch: ignored
  s.apply(stream_notice("walking"), 6);               // an older notice: stale

  // A stream fetched before its notice gets its row; the notice then completes it.
  auto early = fetched_stream(R"({"time":[1,2],"distance":[0.5,1.25]})", 2);
  early.fetched_stream->workout_id = "w2";
  s.apply(early, 40);
  auto notice = stream_notice("rowing");
  notice.workout_stream->workout_id = "w2";
  s.apply(notice, 35);
  auto empty = fetched_stream(R"({})", 0);
  empty.fetched_stream->workout_id = "w2";
  s.apply(empty, 41);
  BOOST_TEST(s.compare() > 10u);
}

BOOST_AUTO_TEST_CASE(backfill_notices_and_their_jobs) {
  DerivedPair s;
  rows::DeliveryRows d;
  d.family = rows::Family::backfill;
  d.backfill = rows::BackfillNotice{"u1", "workouts", "zwift", 1592727781000, 1730558368000, true};
  BOOST_TEST(s.apply(d, 3).counts.jobs_queued == 1);
  s.apply(d, 3, kReceivedAt + 10);  // applied again: nothing
  s.exec("UPDATE jobs SET state = 'dead', attempts = 9, last_error = 'gone'");
  d.backfill->is_final.reset();
  s.apply(d, 7, kReceivedAt + 20);  // a later notice of the same window: re-queued
  d.backfill->start_ms = 1592727782000;
  s.apply(d, 6, kReceivedAt + 30);  // another window
  BOOST_TEST(s.compare() > 4u);
}

BOOST_AUTO_TEST_CASE(a_fetched_workouts_page_queues_one_stream_fetch_per_workout) {
  DerivedPair s;
  rows::DeliveryRows d = sleep_summary("wk1", "{}");
  d.family = rows::Family::fetched_summaries;
  d.summaries[0].resource = "workouts";
  d.summaries[0].provider = "zwift";
  d.summaries[0].provider_id = "z-1";
  d.summaries[0].sport = "cycling";
  d.summaries.push_back(d.summaries[0]);
  d.summaries[1].id = "wk2";
  d.summaries[1].user_id = "u2";
  d.summaries.push_back(d.summaries[0]);
  d.summaries[2].id = "wk3";
  d.summaries[2].user_id.reset();
  d.workout_ids_to_fetch = {"wk3", "wk1", "wk2", "wk-missing"};  // not in page order; one without a summary
  BOOST_TEST(s.apply(d, 6).counts.jobs_queued == 4);
  BOOST_TEST(s.apply(d, 6).counts.jobs_queued == 0);
  // Summaries and their feed rows, the workouts' stream rows (provider, provider id and sport
  // from the page) and their feed rows, jobs: alike on both.
  BOOST_TEST(s.compare() == 3u + 3u + 3u + 3u + 4u);
}

BOOST_AUTO_TEST_CASE(a_malformed_stream_is_the_deliverys_fault_and_writes_nothing) {
  DerivedPair s;
  s.apply(stream_notice("running"), 5);
  s.apply(fetched_stream(R"({"time":[1,2]})", 2), 6);
  // The parser validated it, so this means parser and reader disagree: both refuse.
  const auto lite = s.apply_lite(fetched_stream(R"({"time":[1,2,)", 2), 7, kReceivedAt);
  const auto pg = s.apply_pg(fetched_stream(R"({"time":[1,2,)", 2), 7, kReceivedAt);
  BOOST_TEST(!lite.ok);
  BOOST_TEST(!pg.ok);
  BOOST_TEST((lite.kind == ErrorKind::data));
  BOOST_TEST((pg.kind == ErrorKind::data));
  BOOST_TEST(pg.error == lite.error);
  BOOST_TEST(pg.error.starts_with("stream_points: stream: "), pg.error);
  s.apply(fetched_stream(R"({"time":[3]})", 1), 8);  // the connection works on
  BOOST_TEST(s.compare() > 3u);
}

BOOST_AUTO_TEST_CASE(rows_the_schema_rejects_are_the_deliverys_fault) {
  DerivedPair s;
  s.refuse_on_both("INSERT", "summaries", "NEW.id = 'poison'", "NEW.id = 'poison'");
  s.apply(samples({heartrate(1000, 60)}), 1);
  auto poison = sleep_summary("poison", "{}");
  poison.sample_batches = samples({heartrate(2000, 61)}).sample_batches;
  const auto lite = s.apply_lite(poison, 2, kReceivedAt);
  const auto pg = s.apply_pg(poison, 2, kReceivedAt);
  BOOST_TEST(!lite.ok);
  BOOST_TEST(!pg.ok);
  BOOST_TEST((lite.kind == ErrorKind::data));
  BOOST_TEST((pg.kind == ErrorKind::data));
  BOOST_TEST(pg.error.starts_with("summaries: "), pg.error);
  BOOST_TEST(pg.error.find("rejected by a test trigger") != std::string::npos, pg.error);
  s.apply(samples({heartrate(3000, 62)}), 3);  // the series id cached before stays good
  BOOST_TEST(s.compare() == (2u + 1u) + 1u + 2u + 2u);  // value types, series, samples, feed
}

BOOST_AUTO_TEST_CASE(series_ids_cached_in_a_rolled_back_transaction_are_not_reused) {
  DerivedPair s;
  for (int side = 0; side < 2; ++side) {
    const auto ghost = samples({heartrate(1000, 60)}, "ghost");
    if (side == 0) {
      auto txn = sqlite::Transaction::begin(s.lite);
      BOOST_REQUIRE(s.lite_writer->apply(ghost, 1, kReceivedAt));
    } else {
      auto txn = pg::Transaction::begin(s.pg);
      BOOST_REQUIRE(s.pg_writer->apply(with_delivery_identity(ghost, "ghost", "c", std::nullopt), 1, kReceivedAt));
    }  // rolled back: the ghost's series and user never existed
  }
  s.lite_writer->forget_cached_ids();
  s.pg_writer->forget_cached_ids();
  s.apply(samples({heartrate(1000, 61)}, "u1"), 2);
  s.apply(with_delivery_identity(samples({heartrate(2000, 62)}, "ghost"), "ghost", "c", std::nullopt), 3);
  // Both hand the rolled-back ids out again (SQLite's rowids, PostgreSQL's max + 1), so a
  // cache that kept the ghost's would write u1's samples under it: compared with the ids.
  BOOST_TEST(s.compare() == (2u + 2u) + 2u + 2u + 1u + 3u);  // value types, series, samples, users, feed
  BOOST_TEST(derived_pg_rows(s.pg, "SELECT count(*) FROM samples JOIN series USING (series_id) "
                                   "WHERE user_id = 'ghost'") == Strings{"1"});
}

BOOST_AUTO_TEST_CASE(deferred_changes_keep_their_order_and_ids) {
  DerivedPair s(true);
  for (int64_t seq = 1; seq <= 30; ++seq) {
    rows::DeliveryRows d =
        with_delivery_identity(samples({heartrate(seq * 1000, 60), heartrate(seq * 1000 + 1, 61)}), "u1",
                               seq % 3 == 0 ? std::optional<std::string_view>("m") : std::nullopt, std::nullopt);
    const std::string id = "s" + std::to_string(seq % 4);
    auto summary = sleep_summary(id, "{}");
    d.summaries = summary.summaries;
    d.device = rows::DeviceRow{"d1", "u1", "garmin", "watch", std::nullopt, "G", "F", "1", "1", "{}"};
    s.apply(d, seq, kReceivedAt + seq * 61000);
  }
  // A failure in the middle discards its buffered changes on both.
  const auto lite = s.apply_lite(fetched_stream(R"({"time":[)", 1), 31, kReceivedAt);
  const auto pg = s.apply_pg(fetched_stream(R"({"time":[)", 1), 31, kReceivedAt);
  BOOST_TEST((!lite.ok && !pg.ok));
  s.apply(stream_notice("running"), 32);
  // A step with more changes than PostgreSQL's change feed keeps (PgChangeInserts::kMaxBuffered:
  // it flushes on its own), keys with the characters an array literal quotes.
  std::vector<std::string> ids;
  for (int i = 0; i < 4200; ++i) ids.push_back("w\"" + std::to_string(i) + "\\,{x} NULL");
  rows::DeliveryRows page = sleep_summary("", "{}");
  page.family = rows::Family::fetched_summaries;
  page.summaries.resize(ids.size(), page.summaries[0]);
  for (size_t i = 0; i < ids.size(); ++i) page.summaries[i].id = ids[i];
  BOOST_TEST(s.apply(page, 33).counts.rows_written == 4200);
  BOOST_TEST(s.compare() > 4200u * 2);
}

BOOST_AUTO_TEST_CASE(a_step_writes_and_rewrites_rows_in_one_transaction) {
  // Inserted, then replaced, then stale within one transaction: the upsert's inserted flag
  // (xmax = 0) must tell the replacement of a row this transaction inserted too.
  DerivedPair s(true);
  auto u1 = with_delivery_identity(samples({heartrate(1000, 60), heartrate(2000, 61)}), "u1", "m1", std::nullopt);
  auto u1_again = with_delivery_identity(samples({heartrate(2000, 70), heartrate(3000, 71)}), "u1", "m2", "t1");
  auto stale = samples({heartrate(1000, 1)});
  auto backfill = rows::DeliveryRows{};
  backfill.backfill = rows::BackfillNotice{"u1", "sleep", "oura", 1000, 2000, false};
  s.apply_step({{sleep_summary("s1", R"({"v":1})"), 1},
                {u1, 2},
                {sleep_summary("s1", R"({"v":3})"), 3},
                {u1_again, 4},
                {stale, 3},
                {sleep_summary("s1", R"({"v":2})"), 2},
                {stream_notice("running"), 5},
                {stream_notice("cycling"), 6},
                {fetched_stream(R"({"time":[1,2]})", 2), 7},
                {fetched_stream(R"({"time":[3]})", 1), 8},
                {backfill, 9},
                {backfill, 10}});
  BOOST_TEST(s.compare() > 12u);
}

BOOST_AUTO_TEST_CASE(emptied_derived_tables_fill_again_with_the_same_ids) {
  // What `rebuild` does: empty the derived tables, forget the ids, apply the inbox again.
  DerivedPair s;
  const auto apply_all = [&] {
    s.apply(with_delivery_identity(samples({heartrate(1000, 60)}, "u1"), "u1", "m1", std::nullopt), 1);
    s.apply(samples({heartrate(1000, 70)}, "u2"), 2);
    s.apply(sleep_summary("s1", "{}"), 3);
    s.apply(stream_notice("running"), 4);
  };
  apply_all();
  {
    auto lite_txn = sqlite::Transaction::begin(s.lite);
    BOOST_REQUIRE(store::clear_derived_tables(s.lite));
    BOOST_REQUIRE(lite_txn->commit());
    auto pg_txn = pg::Transaction::begin(s.pg);
    auto cleared = store::clear_derived_tables(s.pg);
    BOOST_REQUIRE_MESSAGE(cleared, cleared.error());
    BOOST_REQUIRE(pg_txn->commit());
  }
  s.forget_cached_ids_on_both();
  BOOST_TEST(derived_pg_rows(s.pg, "SELECT count(*) FROM changes") == Strings{"0"});
  apply_all();
  BOOST_TEST(s.compare() > 8u);
}

BOOST_AUTO_TEST_SUITE_END()

