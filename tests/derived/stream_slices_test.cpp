// A fetched stream longer than the store's slice (SqliteProcessingStore::kStreamSlicePoints)
// is applied one slice per processor step: exactly (every point, the earlier fetch's
// points past the new count gone), latest wins, again whole after a crash half-way, and
// a webhook delivery submitted while the stream is applied is committed and acked before
// the stream counts as applied (docs/decisions/094-long-streams-applied-in-slices.md).
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>

#include "processor/processor.h"
#include "store/inbox_writer.h"
#include "store/sqlite/sqlite_inbox.h"
#include "store/sqlite/sqlite_processing_store.h"
#include "tests/derived/corpus.h"
#include "tests/derived/sqlite_processor.h"
#include "tests/derived/store_dump.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(stream_slices_test)

using namespace hh;
using Strings = std::vector<std::string>;

namespace {

constexpr size_t kSlice = store::SqliteProcessingStore::kStreamSlicePoints;
constexpr int64_t kFirstTime = 1717200000;
constexpr int64_t kAnyDurable = std::numeric_limits<int64_t>::max();

// Point i of a stream fetched with `bpm`: time kFirstTime + i, heartrate bpm + i % 50.
store::NewDelivery fetched_stream(const std::string& id, size_t points, int bpm) {
  std::string times = "[", heartrate = "[";
  for (size_t i = 0; i < points; ++i) {
    times += (i ? "," : "") + std::to_string(kFirstTime + static_cast<int64_t>(i));
    heartrate += (i ? "," : "") + std::to_string(bpm + static_cast<int>(i % 50));
  }
  store::NewDelivery d;
  d.message_id = id;
  d.origin = store::Origin::fetch;
  d.received_at_ms = 1717200000000;
  d.event_type = "fetch.workout_stream";
  d.headers_json = R"({"kind":"workout_stream","workout_id":"w1","user_id":"u1","provider":"garmin",)"
                   R"("url":"https://x/v2/timeseries/workouts/w1/stream"})";
  d.body = R"({"time":)" + times + R"(],"heartrate":)" + heartrate + "]}";
  return d;
}

// The stored points that are not point i of the stream fetched with `bpm`, below `below`.
int64_t points_unlike(sqlite::Connection& db, int bpm, size_t below) {
  return test::count(db, "stream_points WHERE workout_id = 'w1' AND idx < " + std::to_string(below) +
                             " AND (time IS NOT " + std::to_string(kFirstTime) + " + idx OR heartrate IS NOT " +
                             std::to_string(bpm) + " + idx % 50)");
}

int64_t applied_seq(sqlite::Connection& db) {
  return std::stoll(test::value(db, "SELECT applied_seq FROM processor_state"));
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_stream_longer_than_a_slice_replaces_every_point_and_again_after_a_crash_half_way) {
  test::TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  const size_t first_points = 2 * kSlice + 1, second_points = 2 * kSlice - 7;  // three slices, then two
  test::append_deliveries(db, {fetched_stream("f-1", first_points, 100)});
  {
    auto processor = test::sqlite_processor(db, processor::kCatchUpSteps).value();
    BOOST_REQUIRE(processor->run_until_caught_up(nullptr));
    BOOST_TEST(processor->stats().steps >= 4u);  // the step before it and three slices
  }
  BOOST_TEST(test::count(db, "stream_points") == static_cast<int64_t>(first_points));
  BOOST_TEST(points_unlike(db, 100, first_points) == 0);

  // A later fetch of the same workout, with fewer points: its first slice, then a crash.
  test::append_deliveries(db, {fetched_stream("f-2", second_points, 60)});
  {
    auto processor = test::sqlite_processor(db, processor::kCatchUpSteps).value();
    BOOST_TEST(processor->run_once(kAnyDurable));  // ends before the stream
    BOOST_TEST(processor->run_once(kAnyDurable));  // its first slice
    BOOST_TEST(processor->applied_seq() == 1);
  }
  // What a reader sees meanwhile: the new stream's first slice, then the earlier one's
  // points; the workout's row and the change feed still say the earlier fetch.
  BOOST_TEST(applied_seq(db) == 1);
  BOOST_TEST(test::count(db, "stream_points") == static_cast<int64_t>(first_points));
  BOOST_TEST(points_unlike(db, 60, kSlice) == 0);
  BOOST_TEST(test::count(db, "stream_points WHERE idx >= " + std::to_string(kSlice) +
                                 " AND heartrate = 100 + idx % 50") == static_cast<int64_t>(first_points - kSlice));
  BOOST_TEST(test::value(db, "SELECT fetched_seq || ' ' || point_count FROM workout_streams") ==
             "'1 " + std::to_string(first_points) + "'");
  BOOST_TEST(test::value(db, "SELECT status FROM deliveries WHERE seq = 2") == "'pending'");

  // Restarted: applied again from its first slice, whole.
  {
    auto processor = test::sqlite_processor(db, processor::kCatchUpSteps).value();
    BOOST_REQUIRE(processor->run_until_caught_up(nullptr));
    BOOST_TEST(processor->applied_seq() == 2);
  }
  BOOST_TEST(test::count(db, "stream_points") == static_cast<int64_t>(second_points));
  BOOST_TEST(points_unlike(db, 60, second_points) == 0);
  BOOST_TEST(test::value(db, "SELECT max(idx) FROM stream_points") == std::to_string(second_points - 1));
  BOOST_TEST(test::dump_table(db, "workout_streams") ==
                 Strings{"'w1'|'u1'|NULL|NULL|NULL|NULL|2|" + std::to_string(second_points) + "|2"},
             boost::test_tools::per_element());
  BOOST_TEST(test::rows(db, "SELECT seq, status, family FROM deliveries ORDER BY seq") ==
                 (Strings{"1|'processed'|'fetched_stream'", "2|'processed'|'fetched_stream'"}),
             boost::test_tools::per_element());
  // One change per stored fetch, as when a stream is applied at once.
  BOOST_TEST(test::rows(db, "SELECT seq, table_name, op, row_count FROM changes ORDER BY change_id") ==
                 (Strings{"1|'workout_streams'|'insert'|1",
                          "1|'stream_points'|'replace'|" + std::to_string(first_points),
                          "2|'workout_streams'|'update'|1",
                          "2|'stream_points'|'replace'|" + std::to_string(second_points)}),
             boost::test_tools::per_element());
}

namespace {

// The processor, as the writer's background work, and a webhook delivery submitted to
// the writer just before the processor's third call: the first ends its step before the
// stream, the second and third apply its first two slices, of three.
class SubmitWhileStreamApplies final : public store::BackgroundWork {
 public:
  SubmitWhileStreamApplies(processor::Processor& processor, store::InboxWriter& writer)
      : processor_(processor), writer_(writer) {}

  bool run_once(int64_t durable_seq) override {
    if (++calls_ == 3) {
      auto done = [this](const store::AppendOutcome& outcome) {
        std::lock_guard lock(mutex_);
        acked_seq_ = outcome.seq;
        applied_when_acked_ = processor_.applied_seq();
        acked_.notify_all();
      };
      // Checked by wait_for_ack(): Boost.Test's checks belong to the test's thread.
      queued_ = writer_.submit(test::sleep_delivery("msg_1", "sleep-1", 77), done) ==
                store::InboxWriter::Admission::queued;
    }
    return processor_.run_once(durable_seq);
  }

  // The acked delivery's seq and the processor's applied_seq when it was acked.
  std::pair<int64_t, int64_t> wait_for_ack() {
    std::unique_lock lock(mutex_);
    BOOST_REQUIRE(acked_.wait_for(lock, std::chrono::seconds(120), [&] { return acked_seq_ != 0; }));
    BOOST_TEST(queued_.load());
    return {acked_seq_, applied_when_acked_};
  }

 private:
  processor::Processor& processor_;
  store::InboxWriter& writer_;
  int calls_ = 0;  // writer thread
  std::atomic<bool> queued_{false};
  std::mutex mutex_;
  std::condition_variable acked_;
  int64_t acked_seq_ = 0, applied_when_acked_ = 0;  // GUARDED_BY(mutex_)
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_delivery_submitted_while_a_long_stream_is_applied_is_acked_before_the_stream_is_applied) {
  test::TempDir dir;
  const std::string path = dir.file("healthhook.db");
  const size_t points = 2 * kSlice + 1;
  {
    auto db = test::open_store(path);
    test::append_deliveries(db, {fetched_stream("f-1", points, 100)});  // seq 1, before the writer runs
  }
  auto db = test::open_store(path);
  auto inbox = store::SqliteInbox::create(db).value();
  auto processor = test::sqlite_processor(db, processor::kCatchUpSteps).value();
  store::InboxWriter writer(inbox, {});
  processor->yield_to([&writer] { return writer.queue_depth() > 0; });
  SubmitWhileStreamApplies work(*processor, writer);
  writer.add_background(&work);
  writer.start();

  const auto [acked_seq, applied_when_acked] = work.wait_for_ack();
  BOOST_TEST(acked_seq == 2);
  BOOST_TEST(applied_when_acked == 0);  // committed and acked before the stream (seq 1) counted as applied
  for (int i = 0; i < 6000 && processor->applied_seq() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  writer.stop();
  BOOST_REQUIRE_EQUAL(processor->applied_seq(), 2);
  BOOST_TEST(test::count(db, "stream_points") == static_cast<int64_t>(points));
  BOOST_TEST(points_unlike(db, 100, points) == 0);
  BOOST_TEST(test::rows(db, "SELECT seq, status, family FROM deliveries ORDER BY seq") ==
                 (Strings{"1|'processed'|'fetched_stream'", "2|'processed'|'summary'"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
