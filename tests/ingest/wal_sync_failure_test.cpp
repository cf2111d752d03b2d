// What a client and an operator see over HTTP when the sync thread's fdatasync of the WAL
// fails (store/sqlite/wal_sync.h): the real listener, router, webhook endpoint and /readyz on
// 127.0.0.1, the real writer on a SQLite file; only the fdatasync is replaced, because a
// real disk cannot be made to fail one here.
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "store/sqlite/database.h"
#include "store/inbox_writer.h"
#include "store/sqlite/sqlite_inbox.h"
#include "store/sqlite/wal_sync.h"
#include "tests/support/http_client.h"
#include "tests/support/ingest_stack.h"
#include "tests/support/logged_by.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(wal_sync_failure_test)

using namespace hh;
using namespace hh::test;

namespace {

const std::string kBody = R"({"event_type":"daily.data.sleep.created","data":{"id":"s1"},"user_id":"u1"})";

// `serve`'s ingest stack with synchronous = "full": commits unsynced, acks after the sync
// thread's fdatasync, which here fails from the first call on (as a dying disk would).
struct FailingSyncServer {
  TempDir dir;
  std::string secret = random_secret();
  sqlite::Connection db = open();
  store::SqliteInbox inbox = store::SqliteInbox::create(db).value();
  store::InboxWriter writer{inbox, {}};
  std::unique_ptr<IngestStack> ingest;

  FailingSyncServer() {
    BOOST_REQUIRE(db.exec("PRAGMA synchronous = NORMAL"));
    auto sync = store::WalSync::open(dir.file("inbox.db-wal"),
                                     [](int) -> std::string { return "fdatasync of the WAL: Input/output error"; });
    BOOST_REQUIRE_MESSAGE(sync.ok(), sync.error());
    writer.sync_commits_with(std::move(*sync));
    writer.start();
    http::SessionLimits limits;
    limits.max_body_bytes = 64 * 1024;
    limits.max_header_bytes = 8 * 1024;
    ingest = std::make_unique<IngestStack>(writer, secret, 9, limits);
  }
  ~FailingSyncServer() {
    ingest.reset();  // as `serve` stops: the listener first, then the writer
    writer.stop();
  }
  unsigned short port() const { return ingest->port(); }

 private:
  sqlite::Connection open() {
    auto opened = store::open_for_writing(dir.file("inbox.db"), {});
    BOOST_REQUIRE_MESSAGE(opened.ok(), opened.error());
    // The WAL file exists once the database has been written (WalSync::open needs it).
    return std::move(*opened);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_failed_wal_sync_is_503_and_readyz_names_it_until_a_restart) {
  FailingSyncServer s;
  HttpClient client(s.port());  // closed before the server stops (declared after it)
  BOOST_TEST(client.get("/readyz").status == 200);

  const std::string logged = logged_by([&] {
    auto first = client.post_webhook(s.secret, "msg_1", kBody);
    BOOST_TEST(first.status == 503);  // committed, maybe not on disk: no 2xx
    BOOST_TEST(first.header("retry-after") == "9");
    auto ready = client.get("/readyz");
    BOOST_TEST(ready.status == 503);
    BOOST_TEST(
        ready.body.find("inbox WAL sync failed (fdatasync of the WAL: Input/output error); restart healthhook") !=
            std::string::npos,
        ready.body);
    // The service's retry: still 503, never "duplicate" for a row that may not be on disk.
    auto retry = client.post_webhook(s.secret, "msg_1", kBody);
    BOOST_TEST(retry.status == 503);
    BOOST_TEST(retry.body.find("duplicate") == std::string::npos, retry.body);
    BOOST_TEST(client.post_webhook(s.secret, "msg_2", kBody).status == 503);
  });
  BOOST_TEST(client.get("/healthz").status == 200);  // alive: a restart, not a kill loop, is the fix
  BOOST_TEST(client.get("/readyz").status == 503);
  // Three failed syncs, one log line (store/repeated_failure_log.h): the service retries.
  size_t lines = 0;
  for (size_t at = logged.find("\"inbox_sync_failed\""); at != std::string::npos;
       at = logged.find("\"inbox_sync_failed\"", at + 1)) {
    ++lines;
  }
  BOOST_TEST(lines == 1u, logged);
}

// The database deleted while `serve` runs (an operator's `rm`, a cleanup script): commits
// would go on into files no path reaches, lost at the next start. The next delivery gets
// 503 instead of an ack, and /readyz says why, until a restart (the real binary).
BOOST_AUTO_TEST_CASE(a_database_deleted_while_serving_is_503_not_an_ack) {
  for (const bool moved : {false, true}) {
    BOOST_TEST_CONTEXT((moved ? "moved away" : "deleted")) {
      TempDir dir;
      ServerProcess server(dir);
      HttpClient client(server.port());
      BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "msg_before", kBody).status, 200);
      if (moved) {
        std::filesystem::rename(server.database(), server.database() + ".moved");
      } else {
        for (const std::string suffix : {"", "-wal", "-shm"}) std::filesystem::remove(server.database() + suffix);
      }
      const auto after = client.post_webhook(server.secret(), "msg_after", kBody);
      BOOST_TEST(after.status == 503, after.body);
      const auto ready = client.get("/readyz");
      BOOST_TEST(ready.status == 503);
      BOOST_TEST(ready.body.find("the database file was removed, moved or replaced while serving") !=
                     std::string::npos,
                 ready.body);
      BOOST_TEST(client.post_webhook(server.secret(), "msg_later", kBody).status == 503);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()  // wal_sync_failure_test
