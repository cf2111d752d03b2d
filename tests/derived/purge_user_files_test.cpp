// What `healthhook purge-user` leaves in the SQLite files (docs/erasure-and-retention.md,
// "Space"; decision 100): the raw bytes of the database and its WAL are searched for the
// erased user's id. It stays only in the erasure's own record (the `erasures` row and its
// index entry, migration 006), also while a backend keeps the file open; a reader in the
// middle of a read is waited for, then named. And the placeholder row an erasure leaves
// takes a message id no delivery can carry (migration 019).
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "events/envelope_peek.h"
#include "store/sqlite/connection.h"
#include "tests/derived/store_dump.h"
#include "tests/derived/two_users.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(purge_user_files_test)

using namespace hh;
using hh::test::TempDir;

namespace {

// The erasure's own record names the user twice in the file: its row and its index entry.
constexpr int64_t kRecordCopies = 2;

// A heart-rate delivery of `user` whose body carries `note` too.
store::NewDelivery files_heart_rate(const std::string& user, int index, int64_t received_at) {
  const std::string minute = std::to_string(10 + index % 50);
  const std::string day = std::to_string(10 + (index / 50) % 18);
  const std::string body =
      R"({"event_type":"daily.data.heartrate.created","user_id":")" + user +
      R"(","client_user_id":"cu","team_id":"team1","data":{"user_id":")" + user +
      R"(","source":{"provider":"oura","type":"ring"},"source_id":7,"note":"diagnosis )" + std::to_string(index) +
      R"(","data":[{"timestamp":"2024-05-)" + day + "T10:" + minute +
      R"(:00+00:00","timezone_offset":3600,"type":null,"unit":"bpm","value":)" + std::to_string(40 + index % 100) +
      "}]}}";
  return test::two_users_webhook("files-" + user + "-" + std::to_string(index), body, received_at);
}

// `count` deliveries, four of five of them `user`'s and the rest `other`'s, applied.
void files_fill(const std::string& path, const std::string& user, const std::string& other, int count) {
  auto db = test::open_store(path);
  std::vector<store::NewDelivery> deliveries;
  for (int i = 0; i < count; ++i) {
    deliveries.push_back(files_heart_rate(i % 5 == 0 ? other : user, i, test::kTwoUsersBaseMs + i * 1000LL));
  }
  test::append_deliveries(db, deliveries);
  test::apply_inbox(db);
}

// How often `needle` occurs in the raw bytes of the database and its WAL. Read by `cat`,
// not opened here: closing any descriptor of the file drops every POSIX lock this process
// holds on it, the backend connection's too (its reads then failed with "disk I/O error").
int64_t files_copies(const std::string& path, const std::string& needle) {
  const std::string command = "cat '" + path + "' '" + path + "-wal' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  std::string bytes;
  char chunk[65536];
  for (size_t got; (got = std::fread(chunk, 1, sizeof chunk, pipe)) > 0;) bytes.append(chunk, got);
  pclose(pipe);
  int64_t copies = 0;
  for (size_t at = bytes.find(needle); at != std::string::npos; at = bytes.find(needle, at + 1)) ++copies;
  return copies;
}

int64_t files_wal_bytes(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path + "-wal", error);
  return error ? 0 : static_cast<int64_t>(size);
}

// A backend's connection: read-only, as docs/getting-data-out.md allows.
sqlite::Connection files_reader(const std::string& path) {
  auto reader = sqlite::Connection::open(path, sqlite::OpenMode::read_only);
  BOOST_REQUIRE_MESSAGE(reader, reader.error());
  BOOST_REQUIRE(reader->open_wal());
  return std::move(*reader);
}

}  // namespace

// After many deliveries, most of them the user's, deleting rows leaves copies of their
// cells in the unused space of pages still in use (secure_delete or not): the file is
// rewritten. --no-vacuum says what it leaves.
BOOST_AUTO_TEST_CASE(purge_user_leaves_no_copy_of_the_users_id_in_the_file) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  files_fill(path, "victim-files", "other-files", 400);
  BOOST_REQUIRE(files_copies(path, "victim-files") > 320);

  auto purged = test::run_healthhook({"purge-user", "victim-files", "--database", path});
  BOOST_TEST(purged.exit_code == 0, purged.stderr_text);
  BOOST_TEST(purged.stdout_text.find("space: file rewritten (VACUUM)") != std::string::npos, purged.stdout_text);
  BOOST_TEST(purged.stderr_text == "");
  BOOST_TEST(files_copies(path, "victim-files") == kRecordCopies);
  BOOST_TEST(files_copies(path, "diagnosis") >= 80);  // the other user's deliveries stay whole
  BOOST_TEST(files_wal_bytes(path) == 0);

  // --no-vacuum: the freed pages go, and what may stay is said.
  files_fill(path, "second-victim", "second-other", 400);
  auto kept = test::run_healthhook({"purge-user", "second-victim", "--database", path, "--no-vacuum"});
  BOOST_TEST(kept.exit_code == 0, kept.stderr_text);
  BOOST_TEST(kept.stdout_text.find("space: freed pages returned to the file system (incremental vacuum)") !=
                 std::string::npos,
             kept.stdout_text);
  BOOST_TEST(kept.stderr_text == "healthhook purge-user: warning: not rewritten (--no-vacuum): unused space in pages "
                                 "still in use may hold copies of the erased rows (ids, parts of bodies) until SQLite "
                                 "reuses it; `sqlite3 " + path + " VACUUM` removes them\n");
}

// A backend reading the file keeps it open: the last connection to close would have
// copied the WAL into the database, and purge-user's is not the last. Its checkpoint
// overwrites the old pages in the database and empties the WAL.
BOOST_AUTO_TEST_CASE(purge_user_checkpoints_the_wal_while_a_backend_keeps_the_file_open) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  { auto created = test::open_store(path); }
  auto backend = files_reader(path);  // open, reading now and then, as docs/getting-data-out.md allows
  files_fill(path, "victim-wal", "other-wal", 60);
  BOOST_REQUIRE(test::count(backend, "inbox") == 60);
  BOOST_REQUIRE(files_copies(path, "victim-wal") > 48);

  auto purged = test::run_healthhook({"purge-user", "victim-wal", "--database", path});
  BOOST_TEST(purged.exit_code == 0, purged.stderr_text);
  BOOST_TEST(purged.stderr_text == "");
  BOOST_TEST(files_wal_bytes(path) == 0);
  BOOST_TEST(files_copies(path, "victim-wal") == kRecordCopies);
  BOOST_TEST(test::count(backend, "inbox") == 13);  // 12 of the other user's, and the placeholder

  // A reader in the middle of a read, on the snapshot from before: waited for as long as
  // a commit waits for a lock (commit_deadline_ms), then named with what to do; the
  // erasure is done and recorded all the same.
  files_fill(path, "victim-read", "other-read", 60);
  BOOST_REQUIRE(backend.exec("BEGIN"));
  BOOST_REQUIRE_EQUAL(test::count(backend, "inbox"), 73);
  const std::string config = dir.file("healthhook.toml");
  std::ofstream(config) << "database = \"" << path << "\"\ncommit_deadline_ms = 100\n";
  auto waited = test::run_healthhook({"purge-user", "victim-read", "--config", config});
  BOOST_TEST(waited.exit_code == 0, waited.stderr_text);
  BOOST_TEST(waited.stderr_text ==
                 "healthhook purge-user: warning: " + path + " still holds pages from before the erasure, and " + path +
                     "-wal frames of them (another process kept reading it for 100 ms); a checkpoint that completes "
                     "overwrites them: when no process is in the middle of a read, run `sqlite3 " + path +
                     " 'PRAGMA wal_checkpoint(TRUNCATE)'` (done when it prints 0|0|0)\n",
             waited.stderr_text);
  BOOST_TEST(test::count(backend, "inbox") == 73);  // its snapshot
  BOOST_REQUIRE(backend.exec("COMMIT"));
  BOOST_TEST(test::count(backend, "erasures WHERE user_id = 'victim-read'") == 1);
  // What the line says to do, done.
  auto own = test::open_store(path);
  BOOST_TEST(test::rows(own, "PRAGMA wal_checkpoint(TRUNCATE)") == std::vector<std::string>{"0|0|0"},
             boost::test_tools::per_element());
  BOOST_TEST(files_copies(path, "victim-read") == kRecordCopies);
}

// The placeholder keeping an erased newest seq taken has an id no delivery can carry: a
// delivery with the old form's id ("erased:<seq>") is stored, not taken for a duplicate,
// and one stored before a later placeholder of the same seq keeps that erasure from
// nothing. Placeholders of the old form are converted by migration 019; a delivery that a
// sender gave such an id is not.
BOOST_AUTO_TEST_CASE(an_erasures_placeholder_takes_an_id_no_delivery_carries) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  files_fill(path, "victim-id", "other-id", 4);  // seq 4 is the victim's: the newest
  auto purged = test::run_healthhook({"purge-user", "victim-id", "--database", path});
  BOOST_REQUIRE_MESSAGE(purged.exit_code == 0, purged.stderr_text);
  auto db = test::open_store(path);
  BOOST_TEST(test::rows(db, "SELECT seq, message_id FROM inbox ORDER BY seq") ==
                 (std::vector<std::string>{"1|'files-other-id-0'", "4|' erased:4'"}),
             boost::test_tools::per_element());

  // A sender's ids of the old form: the placeholder's seq, and the seq the next one gets.
  auto alice = files_heart_rate("alice", 0, test::kTwoUsersBaseMs + 10'000);
  alice.message_id = "erased:4";
  auto bob = files_heart_rate("bob", 0, test::kTwoUsersBaseMs + 11'000);
  bob.message_id = "erased:7";
  test::append_deliveries(db, {alice, bob, files_heart_rate("carol", 0, test::kTwoUsersBaseMs + 12'000)});
  test::apply_inbox(db);
  BOOST_TEST(test::rows(db, "SELECT seq, message_id FROM inbox WHERE seq > 4 ORDER BY seq") ==
                 (std::vector<std::string>{"5|'erased:4'", "6|'erased:7'", "7|'files-carol-0'"}),
             boost::test_tools::per_element());
  BOOST_TEST(test::count(db, "users WHERE user_id = 'alice'") == 1);
  auto carol = test::run_healthhook({"purge-user", "carol", "--database", path});
  BOOST_TEST(carol.exit_code == 0, carol.stderr_text);
  BOOST_TEST(test::value(db, "SELECT message_id FROM inbox WHERE seq = 7") == "' erased:7'");

  // A store from before: its placeholder takes the new form; a sender's id that names its
  // own seq stays (it has headers and a body).
  const std::string older = dir.file("older.db");
  files_fill(older, "victim-old", "other-old", 4);
  auto old_purge = test::run_healthhook({"purge-user", "victim-old", "--database", older});
  BOOST_REQUIRE_MESSAGE(old_purge.exit_code == 0, old_purge.stderr_text);
  {
    auto old_db = test::open_store(older);
    BOOST_REQUIRE(old_db.exec("UPDATE inbox SET message_id = 'erased:4' WHERE seq = 4"));
    auto sender = files_heart_rate("dave", 0, test::kTwoUsersBaseMs + 20'000);
    sender.message_id = "erased:5";
    test::append_deliveries(old_db, {sender});
    BOOST_REQUIRE(old_db.exec("PRAGMA user_version = 18"));
  }
  auto migrated = test::open_store(older);
  BOOST_TEST(test::rows(migrated, "SELECT seq, message_id FROM inbox ORDER BY seq") ==
                 (std::vector<std::string>{"1|'files-other-old-0'", "4|' erased:4'", "5|'erased:5'"}),
             boost::test_tools::per_element());

  // capture writes a placeholder as a removed body; replay counts it, as any such line.
  const std::string capture = dir.file("capture.jsonl");
  auto captured = test::run_healthhook({"capture", "--database", path, "--output", capture});
  BOOST_REQUIRE_MESSAGE(captured.exit_code == 0, captured.stderr_text);
  auto replayed = test::run_healthhook({"replay", capture, "--database", dir.file("copy.db")});
  BOOST_TEST(replayed.exit_code == 0, replayed.stdout_text << replayed.stderr_text);
  auto copy = test::open_store(dir.file("copy.db"));
  BOOST_TEST(test::count(copy, "inbox") == 3);
}

BOOST_AUTO_TEST_SUITE_END()
