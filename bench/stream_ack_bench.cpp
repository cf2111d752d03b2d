// stream_ack_bench: how long webhook acks wait while the processor applies one long
// fetched workout stream, on SQLite, in process: the InboxWriter with the processor as its
// background work (as in `serve`), one stream of --points points in the inbox, and a small
// delivery submitted every --every-ms until the stream is applied. Prints each ack's wait
// and the slowest (docs/decisions/094-long-streams-applied-in-slices.md).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "processor/processor.h"
#include "store/inbox_writer.h"
#include "store/sqlite/database.h"
#include "store/sqlite/sqlite_inbox.h"
#include "store/sqlite/sqlite_processing_store.h"

using namespace hh;
using Clock = std::chrono::steady_clock;

namespace {

store::NewDelivery stream_delivery(size_t points) {
  std::string times = "[", heartrate = "[";
  for (size_t i = 0; i < points; ++i) {
    times += (i ? "," : "") + std::to_string(1717200000 + i);
    heartrate += (i ? "," : "") + std::to_string(100 + i % 50);
  }
  store::NewDelivery d;
  d.message_id = "stream-1";
  d.origin = store::Origin::fetch;
  d.event_type = "fetch.workout_stream";
  d.headers_json = R"({"kind":"workout_stream","workout_id":"w1","user_id":"u1","provider":"garmin"})";
  d.body = R"({"time":)" + times + R"(],"heartrate":)" + heartrate + "]}";
  return d;
}

store::NewDelivery small_delivery(int i) {
  store::NewDelivery d;
  d.message_id = "msg_" + std::to_string(i);
  d.event_type = "daily.data.steps.created";
  d.headers_json = "{}";
  d.body = R"({"event_type":"daily.data.steps.created","data":{}})";
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("ack waits while one long workout stream is applied");
  size_t points = 3'300'000;
  int every_ms = 200;
  std::string path = "stream_ack_bench.db";
  app.add_option("--points", points, "points of the stream");
  app.add_option("--every-ms", every_ms, "one small delivery this often");
  app.add_option("--database", path, "a scratch file (replaced)");
  CLI11_PARSE(app, argc, argv);

  for (const char* suffix : {"", "-wal", "-shm", "-processor.lock"}) std::filesystem::remove(path + suffix);
  auto db = store::open_for_writing(path, {});
  if (!db) return std::fprintf(stderr, "%s\n", db.error().c_str()), 1;
  {
    auto inbox = store::SqliteInbox::create(*db);
    const store::NewDelivery stream = stream_delivery(points);
    const store::NewDelivery* batch[] = {&stream};
    if (!inbox || !inbox->append(batch)) return std::fprintf(stderr, "cannot store the stream\n"), 1;
    std::printf("stream: %zu points, %zu bytes\n", points, stream.body.size());
  }
  auto inbox = store::SqliteInbox::create(*db).value();
  auto processing = store::open_sqlite_processing(*db);
  if (!processing) return std::fprintf(stderr, "%s\n", processing.error().c_str()), 1;
  auto processor = processor::Processor::create(std::move(*processing), processor::kCatchUpSteps).value();
  store::InboxWriter writer(inbox, {});
  processor->yield_to([&writer] { return writer.queue_depth() > 0; });
  writer.add_background(processor.get());

  std::mutex mutex;
  std::condition_variable acked;
  std::vector<double> waits;
  size_t submitted = 0;
  const auto start = Clock::now();
  writer.start();
  while (processor->applied_seq() < 1) {
    const auto sent = Clock::now();
    auto done = [&, sent](const store::AppendOutcome&) {
      std::lock_guard lock(mutex);
      waits.push_back(std::chrono::duration<double>(Clock::now() - sent).count());
      acked.notify_all();
    };
    if (writer.submit(small_delivery(static_cast<int>(submitted)), done) == store::InboxWriter::Admission::queued) {
      ++submitted;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(every_ms));
  }
  const double applied_after = std::chrono::duration<double>(Clock::now() - start).count();
  {
    std::unique_lock lock(mutex);
    acked.wait(lock, [&] { return waits.size() == submitted; });
  }
  writer.stop();
  std::sort(waits.begin(), waits.end());
  std::printf("stream applied after %.2f s; %zu acks, median %.3f s, slowest %.3f s\n", applied_after, waits.size(),
              waits.empty() ? 0.0 : waits[waits.size() / 2], waits.empty() ? 0.0 : waits.back());
  return 0;
}
