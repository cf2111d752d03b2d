// store/sqlite/frame_vfs.h: WAL frames written through the shim (a commit's frames held and
// sent in a few large writes) are in the file exactly as SQLite's own writes would be. Checked from
// outside the shim: a reader on SQLite's default VFS, and a copy of the files taken while
// the writer is still open (what a kill -9 right after the commits leaves), which SQLite
// recovers from the WAL alone, checking every frame's checksum.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>

#include "store/sqlite/connection.h"
#include "store/sqlite/frame_vfs.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(frame_vfs_test)

using namespace hh;
using hh::test::TempDir;

namespace {

// The first column of the first row of `sql`, as text.
std::string query_text(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  BOOST_REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  std::string out;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    const auto* value = sqlite3_column_text(stmt, 0);
    out = value ? reinterpret_cast<const char*>(value) : "NULL";
  }
  sqlite3_finalize(stmt);
  return out;
}

// A connection on SQLite's default VFS, not the shim.
struct PlainReader {
  explicit PlainReader(const std::string& path) {
    BOOST_REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  }
  ~PlainReader() { sqlite3_close_v2(db); }
  std::string text(const std::string& sql) const { return query_text(db, sql); }
  sqlite3* db = nullptr;
};

sqlite::Connection open_writer(const std::string& path, int cache_pages, int page_size = 4096) {
  auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_write_create);
  BOOST_REQUIRE(db.ok());
  BOOST_REQUIRE(db->exec("PRAGMA page_size = " + std::to_string(page_size) + ";"
                         "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0;"
                         "PRAGMA cache_size = " + std::to_string(cache_pages) + ";"
                         "CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL);")
                    .ok());
  return std::move(*db);
}

// The database and its WAL as they are on disk now (the writer stays open, so SQLite
// must recover the copy from the WAL file itself).
std::string crash_copy(const TempDir& dir, const std::string& path) {
  const std::string copy = dir.file("copy.db");
  std::filesystem::copy_file(path, copy);
  std::filesystem::copy_file(path + "-wal", copy + "-wal");
  return copy;
}

// What both sides must agree on: row count, bytes, and the first bytes of every value
// (random, so an older version of a row shows).
const char* kContent =
    "SELECT count(*) || '/' || sum(length(v)) || '/' || group_concat(hex(substr(v, 1, 8)), '') FROM "
    "(SELECT v FROM t ORDER BY id)";

// INSERT of `rows` random 500-byte values (the library has no generate_series).
std::string insert_rows(int rows) {
  return "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " + std::to_string(rows) +
         ") INSERT INTO t (v) SELECT randomblob(500) FROM n;";
}

// What the writer committed (`counts`: "rows/bytes/", then the values' first bytes) is what
// a reader on the default VFS sees, and what SQLite recovers from a crash copy.
void check_everywhere(const TempDir& dir, const std::string& path, sqlite::Connection& writer,
                      const std::string& counts) {
  const std::string expected = query_text(writer.get(), kContent);
  BOOST_TEST(expected.starts_with(counts));
  BOOST_TEST(PlainReader(path).text(kContent) == expected);
  PlainReader recovered(crash_copy(dir, path));
  BOOST_TEST(recovered.text(kContent) == expected);
  BOOST_TEST(recovered.text("PRAGMA integrity_check") == "ok");
}

}  // namespace

BOOST_AUTO_TEST_CASE(committed_frames_are_in_the_file_for_other_connections_and_after_a_crash) {
  TempDir dir;
  const std::string path = dir.file("frames.db");
  auto writer = open_writer(path, 2000);
  const uint64_t held_before = sqlite::frame_vfs_writes_held();
  for (int txn = 0; txn < 50; ++txn) {
    BOOST_REQUIRE(writer.exec("BEGIN;" + insert_rows(20) + "COMMIT;").ok());
    // As each commit returns, its frames are in the file for another connection.
    BOOST_TEST_REQUIRE(PlainReader(path).text(kContent) == query_text(writer.get(), kContent));
  }
  // Every frame header (130 pages of rows here, at least one frame per commit) was held
  // and sent with its page.
  BOOST_TEST(sqlite::frame_vfs_writes_held() - held_before >= 130u);
  check_everywhere(dir, path, writer, "1000/500000/");
}

// A transaction larger than the page cache writes frames before its commit, then writes
// pages it already wrote again in place, and SQLite rewrites those frames' checksum
// headers alone at the commit (wal.c, walRewriteChecksums): writes the shim must not
// hold back or reorder.
BOOST_AUTO_TEST_CASE(a_transaction_that_rewrites_its_own_frames_keeps_their_checksums_valid) {
  TempDir dir;
  const std::string path = dir.file("frames.db");
  auto writer = open_writer(path, 10);  // pages: the inserts spill long before the commit
  BOOST_REQUIRE(
      writer.exec("BEGIN;" + insert_rows(2000) + "UPDATE t SET v = randomblob(500) WHERE id % 7 = 0;" +
                  insert_rows(100) + "COMMIT;")
          .ok());
  check_everywhere(dir, path, writer, "2100/1050000/");
}

// Frames of 64 KiB pages: a run is sent before it outgrows what the unix VFS writes in one
// call (128 KiB; a larger write failed the commit with "database or disk is full").
BOOST_AUTO_TEST_CASE(commits_of_large_pages_stay_within_one_write_of_the_unix_vfs) {
  TempDir dir;
  const std::string path = dir.file("frames.db");
  auto writer = open_writer(path, 100, 65536);
  for (int txn = 0; txn < 5; ++txn) BOOST_REQUIRE(writer.exec("BEGIN;" + insert_rows(400) + "COMMIT;").ok());
  check_everywhere(dir, path, writer, "2000/1000000/");
}

// A transaction that wrote frames (its pages did not fit the cache) and rolled back: the
// next commit writes over them, and neither a reader nor recovery sees any of its rows.
BOOST_AUTO_TEST_CASE(frames_of_a_rolled_back_transaction_never_show) {
  TempDir dir;
  const std::string path = dir.file("frames.db");
  auto writer = open_writer(path, 10);
  BOOST_REQUIRE(writer.exec("BEGIN;" + insert_rows(300) + "COMMIT;").ok());
  BOOST_REQUIRE(writer.exec("BEGIN;" + insert_rows(1000) + "ROLLBACK;").ok());
  BOOST_REQUIRE(writer.exec("BEGIN;" + insert_rows(5) + "COMMIT;").ok());
  check_everywhere(dir, path, writer, "305/152500/");
}

BOOST_AUTO_TEST_SUITE_END()  // frame_vfs_test
