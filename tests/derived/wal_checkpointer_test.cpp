// Checkpoints off the writer's thread (store/sqlite/wal_checkpointer.h) and live steps that
// commit without a sync of their own (store/sqlite/step_durability.h).
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "processor/processor.h"
#include "store/sqlite/wal_checkpointer.h"
#include "store/sqlite/sqlite_inbox.h"
#include "tests/derived/corpus.h"
#include "tests/derived/sqlite_processor.h"
#include "tests/derived/store_dump.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(wal_checkpointer_test)

using namespace hh;
using hh::test::TempDir;
using hh::test::value;

namespace {

// `transactions` commits of one 8 KiB row each (2 WAL frames or more), with the short
// pause between them of a busy writer thread waiting for its next batch, in which it
// lets the checkpointer finish; returns the largest size the WAL file had.
uintmax_t write_steadily(sqlite::Connection& db, const std::string& wal_path, int transactions,
                         store::WalCheckpointer& checkpointer) {
  BOOST_REQUIRE(db.exec("CREATE TABLE load (id INTEGER PRIMARY KEY, body BLOB)"));
  auto insert = db.prepare("INSERT INTO load (body) VALUES (zeroblob(8192))");
  BOOST_REQUIRE_MESSAGE(insert, insert.error());
  uintmax_t largest = 0;
  for (int i = 0; i < transactions; ++i) {
    BOOST_REQUIRE(db.exec("BEGIN IMMEDIATE"));
    BOOST_REQUIRE(insert->step());
    insert->reset();
    BOOST_REQUIRE(db.exec("COMMIT"));
    largest = std::max(largest, std::filesystem::file_size(wal_path));
    checkpointer.finish_on_writer();
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return largest;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_wal_is_copied_and_rewound_while_a_writer_commits_steadily) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto db = test::open_store(path);
  BOOST_REQUIRE(db.exec("PRAGMA synchronous = OFF"));  // the test's speed; syncs do not matter here
  constexpr int kCheckpointFrames = 1000;
  auto checkpointer = store::WalCheckpointer::start(db, path, kCheckpointFrames);
  BOOST_REQUIRE_MESSAGE(checkpointer, checkpointer.error());
  // 6,000 x 8 KiB = 48 MiB of rows. Without restarts the WAL holds all of it (a passive
  // checkpoint never rewinds it); with none at all the database file stays empty.
  const uintmax_t largest_wal = write_steadily(db, path + "-wal", 6000, **checkpointer);
  BOOST_TEST((*checkpointer)->rewinds() > 0u);
  // Without rewinds the WAL would hold every row: 6,000 x 3 frames with 4 KiB pages (74 MB),
  // 6,000 x 2 with the 8 KiB pages of a new database (99 MB). The bound, eight rounds of
  // kCheckpointFrames, leaves room for a checkpointer thread starved for a while by a
  // loaded CI machine (it copies and syncs that many frames a round).
  const auto frame_bytes = static_cast<uintmax_t>(db.query_int("PRAGMA page_size")->value()) + 24;
  BOOST_TEST(largest_wal < 8 * kCheckpointFrames * frame_bytes, "the WAL reached " << largest_wal << " bytes");
  BOOST_TEST_MESSAGE("largest WAL: " << largest_wal);
  BOOST_TEST(std::filesystem::file_size(path) > 16u * 1024 * 1024, "the rows were copied into the database");
  checkpointer->reset();
  BOOST_TEST(value(db, "PRAGMA wal_autocheckpoint") == "1000", "SQLite's own checkpoints are back");
  BOOST_TEST(value(db, "SELECT count(*) FROM load") == "6000");
}

BOOST_AUTO_TEST_CASE(the_thread_syncs_the_database_file_after_its_copies) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto db = test::open_store(path);
  BOOST_REQUIRE(db.exec("PRAGMA synchronous = OFF"));
  // Counted here, checked after the thread has stopped (no Boost.Test on its thread).
  std::atomic<int> syncs_on_this_thread{0};
  std::atomic<int> syncs_through_the_writer{0};
  std::atomic<int> syncs{0};
  const auto test_thread = std::this_thread::get_id();
  auto checkpointer = store::WalCheckpointer::start(db, path, 1000, [&](sqlite::Connection& own) {
    ++syncs;
    if (std::this_thread::get_id() == test_thread) ++syncs_on_this_thread;
    if (own.get() == db.get()) ++syncs_through_the_writer;
    return std::string();
  });
  BOOST_REQUIRE_MESSAGE(checkpointer, checkpointer.error());
  write_steadily(db, path + "-wal", 3000, **checkpointer);
  const uint64_t counted = (*checkpointer)->database_syncs();
  const uint64_t rewinds = (*checkpointer)->rewinds();
  checkpointer->reset();
  BOOST_TEST(counted > 0u);
  BOOST_TEST(static_cast<uint64_t>(syncs.load()) >= counted);  // the thread may sync once more before it stops
  BOOST_TEST(syncs_on_this_thread.load() == 0, "the writer's thread never waits for this sync");
  BOOST_TEST(syncs_through_the_writer.load() == 0);
  BOOST_TEST(rewinds > 0u);
}

BOOST_AUTO_TEST_CASE(a_failed_database_sync_stops_checkpoints_and_a_restart_copies_everything) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  uintmax_t largest_wal = 0;
  {
    auto db = test::open_store(path);
    BOOST_REQUIRE(db.exec("PRAGMA synchronous = OFF"));
    auto checkpointer = store::WalCheckpointer::start(
        db, path, 1000, [](sqlite::Connection&) { return std::string("sync of the database file: I/O error"); });
    BOOST_REQUIRE_MESSAGE(checkpointer, checkpointer.error());
    largest_wal = write_steadily(db, path + "-wal", 6000, **checkpointer);
    BOOST_TEST((*checkpointer)->stopped_by_failure());
    BOOST_TEST((*checkpointer)->database_syncs() == 0u);
    BOOST_TEST((*checkpointer)->rewinds() == 0u, "the writer never finished a checkpoint after the failure");
  }
  // Without checkpoints the WAL kept the rows (6,000 x 8 KiB; at most the first 1,000
  // frames can have been copied and rewound before the failure).
  BOOST_TEST(largest_wal > 32u * 1024 * 1024, "the WAL reached only " << largest_wal << " bytes");
  // The restart: a new process opens the file and has every row.
  auto reopened = test::open_store(path);
  BOOST_TEST(value(reopened, "SELECT count(*) FROM load") == "6000");
  BOOST_TEST(value(reopened, "PRAGMA integrity_check") == "'ok'");
}

BOOST_AUTO_TEST_CASE(a_live_step_leaves_ingest_commits_synchronous_full) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  BOOST_REQUIRE(value(db, "PRAGMA synchronous") == "2");  // FULL, the default setting
  auto inbox = store::SqliteInbox::create(db);
  BOOST_REQUIRE_MESSAGE(inbox, inbox.error());
  const auto delivery = test::sleep_delivery("msg_1", "sleep-1", 70);
  const store::NewDelivery* batch[] = {&delivery};
  BOOST_REQUIRE(inbox->append(batch));
  auto p = test::sqlite_processor(db);
  BOOST_REQUIRE_MESSAGE(p, p.error());
  BOOST_TEST(!(*p)->run_once(1));
  BOOST_TEST((*p)->applied_seq() == 1);
  BOOST_TEST(value(db, "PRAGMA synchronous") == "2");
}

BOOST_AUTO_TEST_SUITE_END()  // wal_checkpointer_test
