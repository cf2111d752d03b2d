// Every request has an end-to-end deadline (spec §2): a commit that does not finish in
// time (here: a WAL sync that hangs, as on a failing disk) is answered 503 with
// Retry-After, and does not hold the session. The delivery may still be committed later;
// the service's retry is then a duplicate.
#include <boost/test/unit_test.hpp>

#include <condition_variable>
#include <mutex>

#include "store/sqlite/database.h"
#include "store/inbox_writer.h"
#include "store/sqlite/sqlite_inbox.h"
#include "store/sqlite/wal_sync.h"
#include "tests/support/http_client.h"
#include "tests/support/ingest_stack.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(request_deadline_test)

using namespace hh;
using namespace hh::test;

namespace {

const std::string kBody = R"({"event_type":"daily.data.sleep.created","data":{"id":"s1"},"user_id":"u1"})";

// An fdatasync that does not return until released.
struct HungSync {
  std::mutex mutex;
  std::condition_variable cv;
  bool released = false;
  std::string sync() {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return released; });
    return {};
  }
  void release() {
    std::lock_guard lock(mutex);
    released = true;
    cv.notify_all();
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_commit_that_hangs_is_503_at_the_request_deadline) {
  TempDir dir;
  const std::string secret = random_secret();
  auto db = store::open_for_writing(dir.file("inbox.db"), {});
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  BOOST_REQUIRE(db->exec("PRAGMA synchronous = NORMAL"));
  auto inbox = store::SqliteInbox::create(*db);
  BOOST_REQUIRE(inbox.ok());
  auto hung = std::make_shared<HungSync>();
  store::InboxWriter writer(*inbox, {});
  auto sync = store::WalSync::open(dir.file("inbox.db-wal"), [hung](int) { return hung->sync(); });
  BOOST_REQUIRE_MESSAGE(sync.ok(), sync.error());
  writer.sync_commits_with(std::move(*sync));
  writer.start();
  {
    http::SessionLimits limits;
    IngestStack ingest(writer, secret, 7, limits, 64, std::chrono::milliseconds(300));
    HttpClient client(ingest.port());
    const auto answer = client.post_webhook(secret, "msg_hung", kBody);
    BOOST_TEST(answer.status == 503);
    BOOST_TEST(answer.header("retry-after") == "7");
    BOOST_TEST(answer.body.find("request_deadline_ms") != std::string::npos, answer.body);
    BOOST_TEST(client.get("/healthz").status == 200);  // the session was not held

    hung->release();  // the disk comes back: the row was committed, now it is on disk
    const auto retry = client.post_webhook(secret, "msg_hung", kBody);
    BOOST_TEST(retry.status == 200);
    BOOST_TEST(retry.body.find("\"duplicate\"") != std::string::npos, retry.body);
    client.close();
  }
  writer.stop();
}

// A delivery refused because the inbox queue is above queue_high_water is a refusal like the
// others: counted under "queue_full", so the periodic `refusals` line shows it (it left no
// trace in the log).
BOOST_AUTO_TEST_CASE(a_full_queue_is_counted_as_a_refusal) {
  TempDir dir;
  const std::string secret = random_secret();
  auto db = store::open_for_writing(dir.file("inbox.db"), {});
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  auto inbox = store::SqliteInbox::create(*db);
  BOOST_REQUIRE(inbox.ok());
  store::WriterOptions options;
  options.high_water = 0;  // every delivery finds the queue full
  store::InboxWriter writer(*inbox, options);
  writer.start();
  {
    http::Refusals refusals;
    http::SessionLimits limits;
    IngestStack ingest(writer, secret, 7, limits, 64, std::chrono::seconds(10), &refusals);
    HttpClient client(ingest.port());
    const auto answer = client.post_webhook(secret, "msg_full", kBody);
    BOOST_TEST(answer.status == 503);
    BOOST_TEST(answer.body.find("inbox queue is full") != std::string::npos, answer.body);
    BOOST_TEST(refusals.total(http::Refusal::queue_full) == 1u);
    BOOST_TEST(http::refusal_name(http::Refusal::queue_full) == "queue_full");
    client.close();
  }
  writer.stop();
}

BOOST_AUTO_TEST_SUITE_END()  // request_deadline_test
