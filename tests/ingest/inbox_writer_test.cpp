// The inbox and its writer thread: group commit, seq order, duplicates (forever),
// byte-exact storage, high-water refusal, commit failure (disk full) without half-writes.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "store/sqlite/database.h"
#include "store/inbox_writer.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_inbox.h"
#include "store/sqlite/wal_sync.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(inbox_writer_test)

using namespace hh;
using hh::test::TempDir;
using Kind = store::AppendOutcome::Kind;

namespace {

store::NewDelivery delivery(const std::string& id, std::string body = R"({"event_type":"ping"})") {
  store::NewDelivery d;
  d.message_id = id;
  d.received_at_ms = 1700000000000;
  d.webhook_timestamp = 1700000000;
  d.event_type = "ping";
  d.headers_json = R"({"svix-id":")" + id + R"("})";
  d.body = std::move(body);
  return d;
}

// Holds the writer thread inside a posted task until release(): lets a test queue a
// known set of deliveries that the writer then commits as one group. The task shares
// ownership of the gate's state, so the writer thread may still be waking up inside it
// after the gate (a local in the test) has gone out of scope.
class WriterGate {
 public:
  explicit WriterGate(store::InboxWriter& writer) : state_(std::make_shared<State>()) {
    auto entered_future = state_->entered.get_future();
    writer.post([state = state_] {
      state->entered.set_value();
      std::unique_lock lock(state->mutex);
      state->released_cv.wait(lock, [&] { return state->released; });
    });
    entered_future.wait();
  }
  WriterGate(const WriterGate&) = delete;
  WriterGate& operator=(const WriterGate&) = delete;
  ~WriterGate() { release(); }
  void release() {
    std::lock_guard lock(state_->mutex);
    state_->released = true;
    state_->released_cv.notify_all();
  }

 private:
  struct State {
    std::promise<void> entered;
    std::mutex mutex;
    std::condition_variable released_cv;
    bool released = false;
  };
  std::shared_ptr<State> state_;
};

struct Collected {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::pair<std::string, store::AppendOutcome>> outcomes;

  store::Completion for_id(const std::string& id) {
    return [this, id](const store::AppendOutcome& outcome) {
      std::lock_guard lock(mutex);
      outcomes.emplace_back(id, outcome);
      cv.notify_all();
    };
  }
  void wait_for(size_t n) {
    std::unique_lock lock(mutex);
    BOOST_REQUIRE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return outcomes.size() >= n; }));
  }
};

struct Store {
  TempDir dir;
  sqlite::Connection db = open();
  store::SqliteInbox inbox = store::SqliteInbox::create(db).value();

  sqlite::Connection open() {
    auto c = store::open_for_writing(dir.file("inbox.db"), {});
    BOOST_REQUIRE_MESSAGE(c.ok(), c.error());
    return std::move(*c);
  }
  int64_t count() {
    auto reader = store::open_for_reading(dir.file("inbox.db"));
    BOOST_REQUIRE(reader.ok());
    return reader->query_int("SELECT count(*) FROM deliveries")->value_or(-1);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(queued_deliveries_share_one_commit_and_get_seq_in_order) {
  Store s;
  store::InboxWriter writer(s.inbox, {});
  writer.start();
  Collected collected;
  {
    WriterGate gate(writer);
    for (int i = 0; i < 50; ++i) {
      BOOST_REQUIRE(writer.submit(delivery("msg_" + std::to_string(i)), collected.for_id("msg_" + std::to_string(i))) ==
                    store::InboxWriter::Admission::queued);
    }
    BOOST_TEST(writer.queue_depth() == 50u);
  }
  collected.wait_for(50);
  writer.stop();
  BOOST_TEST(writer.stats().batches.load() == 1u);  // one transaction, one sync for all 50
  for (size_t i = 0; i < collected.outcomes.size(); ++i) {
    BOOST_TEST((collected.outcomes[i].second.kind == Kind::stored));
    BOOST_TEST(collected.outcomes[i].first == "msg_" + std::to_string(i));
    BOOST_TEST(collected.outcomes[i].second.seq == static_cast<int64_t>(i + 1));  // commit order
  }
  BOOST_TEST(s.count() == 50);
}

// A commit that hangs (a PostgreSQL server frozen, a lock held): the writer says it is
// stalled while it runs past options.stalled_commit, so /readyz turns not ready while the
// deliveries waiting on it get their 503s; and says so no more once it has ended.
BOOST_AUTO_TEST_CASE(a_commit_running_past_its_deadline_is_stalled_until_it_ends) {
  Store s;
  s.db.wait_when_busy(std::chrono::seconds(20));
  auto holder = store::open_for_writing(s.dir.file("inbox.db"), {});
  BOOST_REQUIRE(holder.ok());
  BOOST_REQUIRE(holder->exec("BEGIN IMMEDIATE").ok());
  store::WriterOptions options;
  options.stalled_commit = std::chrono::milliseconds(100);
  store::InboxWriter writer(s.inbox, options);
  writer.start();
  BOOST_TEST(!writer.commit_stalled().has_value());  // nothing to commit
  Collected collected;
  BOOST_REQUIRE(writer.submit(delivery("held"), collected.for_id("held")) == store::InboxWriter::Admission::queued);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!writer.commit_stalled() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_REQUIRE(writer.commit_stalled().has_value());
  BOOST_TEST(writer.commit_stalled()->count() > 100);
  BOOST_REQUIRE(holder->exec("ROLLBACK").ok());  // the database answers again
  collected.wait_for(1);
  BOOST_TEST((collected.outcomes.front().second.kind == Kind::stored));
  BOOST_TEST(!writer.commit_stalled().has_value());
  writer.stop();
}

BOOST_AUTO_TEST_CASE(duplicates_inside_a_batch_and_after_restart) {
  TempDir dir;
  {
    auto db = store::open_for_writing(dir.file("i.db"), {});
    auto inbox = store::SqliteInbox::create(*db);
    auto a = delivery("msg_a"), b = delivery("msg_b"), a_again = delivery("msg_a", "different body");
    std::vector<const store::NewDelivery*> batch{&a, &b, &a_again};
    auto results = inbox->append(batch);
    BOOST_REQUIRE_MESSAGE(results.ok(), results.error());
    BOOST_TEST((results->at(0).status == store::AppendStatus::stored));
    BOOST_TEST((results->at(2).status == store::AppendStatus::duplicate));
    BOOST_TEST(results->at(2).seq == results->at(0).seq);
  }
  // Message ids are never forgotten: a resend weeks later is still a duplicate.
  auto db = store::open_for_writing(dir.file("i.db"), {});
  auto inbox = store::SqliteInbox::create(*db);
  BOOST_TEST(inbox->last_seq() == 2);
  auto a = delivery("msg_a");
  std::vector<const store::NewDelivery*> batch{&a};
  auto results = inbox->append(batch);
  BOOST_TEST((results->at(0).status == store::AppendStatus::duplicate));
  BOOST_TEST(results->at(0).seq == 1);
  BOOST_TEST(db->query_int("SELECT count(*) FROM deliveries")->value() == 2);
  // The first version's bytes are the ones kept.
  auto body = db->prepare("SELECT body FROM deliveries WHERE message_id = 'msg_a'");
  BOOST_REQUIRE(body->step().value());
  BOOST_TEST(body->column_blob(0) == R"({"event_type":"ping"})");
}

BOOST_AUTO_TEST_CASE(headers_and_body_are_stored_byte_exact) {
  Store s;
  const std::string binary("\x00\xff{\"a\":1}\r\n\xc3", 12);
  auto d = delivery("msg_bin", binary);
  d.headers_json = R"({"Svix-Id":"msg_bin","X-Odd":"a, b"})";
  std::vector<const store::NewDelivery*> batch{&d};
  BOOST_REQUIRE(s.inbox.append(batch).ok());
  auto row = s.db.prepare("SELECT body, headers, typeof(body), webhook_timestamp, received_at FROM deliveries");
  BOOST_REQUIRE(row->step().value());
  BOOST_TEST(row->column_blob(0) == binary);
  BOOST_TEST(row->column_text(1) == d.headers_json);
  BOOST_TEST(row->column_text(2) == "blob");
  BOOST_TEST(row->column_int(3) == 1700000000);
  BOOST_TEST(row->column_int(4) == 1700000000000);
}

BOOST_AUTO_TEST_CASE(refuses_above_the_high_water_mark) {
  Store s;
  store::WriterOptions options;
  options.high_water = 3;
  store::InboxWriter writer(s.inbox, options);
  writer.start();
  Collected collected;
  {
    WriterGate gate(writer);
    for (int i = 0; i < 3; ++i) {
      BOOST_TEST((writer.submit(delivery("m" + std::to_string(i)), collected.for_id("m")) ==
                  store::InboxWriter::Admission::queued));
    }
    BOOST_TEST(!writer.accepting());
    BOOST_TEST((writer.submit(delivery("m3"), collected.for_id("m3")) ==
                store::InboxWriter::Admission::over_high_water));
  }
  collected.wait_for(3);
  BOOST_TEST(writer.accepting());
  writer.stop();
  BOOST_TEST(s.count() == 3);
}

BOOST_AUTO_TEST_CASE(disk_full_fails_the_whole_batch_and_writes_nothing) {
  Store s;
  store::InboxWriter writer(s.inbox, {});
  writer.start();
  // Cap the file near its current size: a large batch cannot fit (SQLITE_FULL).
  const int64_t pages = s.db.query_int("PRAGMA page_count")->value_or(0);
  writer.post([&] { (void)s.db.exec("PRAGMA max_page_count = " + std::to_string(pages + 8)); });
  Collected collected;
  {
    WriterGate gate(writer);
    writer.submit(delivery("small"), collected.for_id("small"));
    writer.submit(delivery("big", std::string(512 * 1024, 'x')), collected.for_id("big"));
  }
  collected.wait_for(2);
  for (const auto& [id, outcome] : collected.outcomes) BOOST_TEST((outcome.kind == Kind::unavailable), id);
  BOOST_TEST(!writer.last_commit_ok());
  BOOST_TEST(s.count() == 0);  // nothing half-written: not even the small one

  // Space comes back: the sender's retry succeeds.
  writer.post([&] { (void)s.db.exec("PRAGMA max_page_count = 1073741823"); });
  Collected retry;
  writer.submit(delivery("small"), retry.for_id("small"));
  retry.wait_for(1);
  BOOST_TEST((retry.outcomes[0].second.kind == Kind::stored));
  BOOST_TEST(writer.last_commit_ok());
  writer.stop();
  BOOST_TEST(s.count() == 1);
}

BOOST_AUTO_TEST_CASE(stop_commits_what_is_queued_and_refuses_afterwards) {
  Store s;
  store::InboxWriter writer(s.inbox, {});
  writer.start();
  Collected collected;
  {
    WriterGate gate(writer);
    for (int i = 0; i < 10; ++i) writer.submit(delivery("q" + std::to_string(i)), collected.for_id("q"));
    std::thread stopper([&] { writer.stop(); });
    gate.release();
    stopper.join();
  }
  BOOST_TEST(collected.outcomes.size() == 10u);
  BOOST_TEST(s.count() == 10);
  BOOST_TEST((writer.submit(delivery("late"), collected.for_id("late")) == store::InboxWriter::Admission::stopped));
}

BOOST_AUTO_TEST_CASE(low_disk_refuses_before_sqlite_fails) {
  Store s;
  store::WriterOptions options;
  options.disk_path = s.dir.path().string();
  options.min_free_disk_bytes = uint64_t{1} << 62;  // more than any disk has
  store::InboxWriter writer(s.inbox, options);
  writer.start();
  Collected collected;
  BOOST_TEST(writer.disk_low());
  BOOST_TEST((writer.submit(delivery("x"), collected.for_id("x")) == store::InboxWriter::Admission::disk_low));
  writer.stop();
  BOOST_TEST(s.count() == 0);
}

BOOST_AUTO_TEST_CASE(schema_is_migrated_strict_and_wal) {
  Store s;
  BOOST_TEST(s.db.query_int("PRAGMA user_version")->value() == store::schema_version());
  auto mode = s.db.prepare("PRAGMA journal_mode");
  BOOST_REQUIRE(mode->step().value());
  BOOST_TEST(mode->column_text(0) == "wal");
  // STRICT: a wrongly typed value is an error, not silently stored.
  BOOST_TEST(!s.db.exec("INSERT INTO inbox (message_id, received_at, headers, body) VALUES ('x', 'soon', '{}', x'00')").ok());
  BOOST_TEST(s.db.query_int("PRAGMA synchronous")->value() == 2);  // FULL
  BOOST_TEST(s.db.query_int("PRAGMA cache_size")->value() == -64 * 1024);
}

// New databases get kNewDatabasePageSize (8 KiB, measured faster: database.cpp); a
// database an earlier version created with SQLite's 4 KiB keeps it and goes on taking
// deliveries, since SQLite cannot change the page size in WAL mode.
BOOST_AUTO_TEST_CASE(new_databases_get_8_KiB_pages_and_old_ones_keep_theirs) {
  Store fresh;
  BOOST_TEST(fresh.db.query_int("PRAGMA page_size")->value() == store::kNewDatabasePageSize);
  BOOST_TEST(store::kNewDatabasePageSize == 8192);

  TempDir dir;
  const std::string path = dir.file("old.db");
  {
    auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_write_create);
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(db->exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL").ok());
    BOOST_REQUIRE(store::migrate(*db).ok());
    BOOST_REQUIRE(db->exec("INSERT INTO inbox (seq, message_id, received_at, headers, body) "
                           "VALUES (1, 'before', 10, '{}', x'7b7d')").ok());
  }
  auto db = store::open_for_writing(path, {});
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  BOOST_TEST(db->query_int("PRAGMA page_size")->value() == 4096);
  auto inbox = store::SqliteInbox::create(*db);
  BOOST_REQUIRE(inbox.ok());
  store::NewDelivery after;
  after.message_id = "after";
  after.received_at_ms = 20;
  after.headers_json = "{}";
  after.body = std::string(20000, 'x');  // overflow pages of the old size
  const store::NewDelivery* batch[] = {&after};
  auto appended = inbox->append(batch);
  BOOST_REQUIRE_MESSAGE(appended.ok(), appended.error());
  BOOST_TEST(appended->at(0).seq == 2);
  BOOST_TEST(db->query_int("SELECT length(body) FROM inbox WHERE message_id = 'after'")->value() == 20000);
  BOOST_TEST(db->query_int("PRAGMA page_size")->value() == 4096);
}

BOOST_AUTO_TEST_CASE(reopening_an_older_binary_database_refuses_a_newer_schema) {
  TempDir dir;
  {
    auto db = store::open_for_writing(dir.file("n.db"), {});
    BOOST_REQUIRE(db->exec("PRAGMA user_version = 999").ok());
  }
  auto db = store::open_for_writing(dir.file("n.db"), {});
  BOOST_REQUIRE(!db.ok());
  BOOST_TEST(db.error().find("newer") != std::string::npos);
}

namespace {

// A second process opening the store for writing (on a thread here) while another
// connection holds the write lock: `release` runs once the open waits, and must end that
// connection's transaction; returns what the open gave. The wait is for ordering only: a
// slower open makes the test weaker, never falsely failing.
Result<sqlite::Connection> open_while_another_holds_the_lock(const std::string& path,
                                                             const std::function<void()>& release) {
  std::optional<Result<sqlite::Connection>> opened;
  {
    std::jthread second([&] { opened.emplace(store::open_for_writing(path, {})); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    release();
  }  // joined
  return std::move(*opened);
}

}  // namespace

// Two processes opening an older store at once (`serve` and a command during an upgrade):
// the one that waits for the other's migration finds it done, instead of running it again
// (CREATE INDEX … already exists). The other one here holds the write lock and migrates
// while the second open waits for that lock.
BOOST_AUTO_TEST_CASE(a_migration_done_by_another_process_meanwhile_is_not_run_twice) {
  TempDir dir;
  const std::string path = dir.file("old.db");
  const auto& all = store::migrations();
  const size_t older = all.size() - 2;  // two migrations behind
  {
    auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_write_create);
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(db->exec("PRAGMA journal_mode = WAL").ok());
    for (size_t i = 0; i < older; ++i) BOOST_REQUIRE_MESSAGE(db->exec(all[i].sql).ok(), all[i].name);
    BOOST_REQUIRE(db->exec("PRAGMA user_version = " + std::to_string(older)).ok());
  }
  auto other = sqlite::Connection::open(path, sqlite::OpenMode::read_write);
  BOOST_REQUIRE(other.ok());
  BOOST_REQUIRE(other->exec("BEGIN IMMEDIATE").ok());
  // The second open has read the version and waits for the write lock meanwhile.
  auto opened = open_while_another_holds_the_lock(path, [&] {
    for (size_t i = older; i < all.size(); ++i) BOOST_REQUIRE_MESSAGE(other->exec(all[i].sql).ok(), all[i].name);
    BOOST_REQUIRE(other->exec("PRAGMA user_version = " + std::to_string(all.size())).ok());
    BOOST_REQUIRE(other->exec("COMMIT").ok());
  });
  BOOST_TEST(opened.ok(), (opened.ok() ? "" : opened.error()));
  BOOST_TEST(other->query_int("PRAGMA user_version")->value() == store::schema_version());
}

// Two processes creating the store at the same moment: the second waits for the first's
// lock (a new file's auto_vacuum and journal mode take one) instead of failing at once with
// "database is locked" (a no-context review: the busy timeout was set after them).
BOOST_AUTO_TEST_CASE(a_second_process_creating_the_store_waits_for_the_first) {
  TempDir dir;
  const std::string path = dir.file("new.db");
  auto first = sqlite::Connection::open(path, sqlite::OpenMode::read_write_create);
  BOOST_REQUIRE(first.ok());
  BOOST_REQUIRE(first->exec("BEGIN IMMEDIATE").ok());  // still an empty file
  auto opened = open_while_another_holds_the_lock(path, [&] { BOOST_REQUIRE(first->exec("ROLLBACK").ok()); });
  BOOST_TEST(opened.ok(), (opened.ok() ? "" : opened.error()));
}

// A lock held past the busy timeout fails the statement busy (the caller retries or
// answers 503) instead of waiting for ever, and not before the timeout has passed; a zero
// timeout fails at once. How soon a freed lock is taken (sqlite::Connection::
// wait_when_busy) is measured in bench/, not here.
BOOST_AUTO_TEST_CASE(a_lock_held_past_the_busy_timeout_fails_busy) {
  TempDir dir;
  const std::string path = dir.file("held.db");
  auto holder = store::open_for_writing(path, {});
  BOOST_REQUIRE(holder.ok());
  BOOST_REQUIRE(holder->exec("BEGIN IMMEDIATE").ok());
  for (const int timeout_ms : {0, 30}) {
    auto waiter = sqlite::Connection::open(path, sqlite::OpenMode::read_write);
    BOOST_REQUIRE(waiter.ok());
    waiter->wait_when_busy(std::chrono::milliseconds(timeout_ms));
    const auto started = std::chrono::steady_clock::now();
    auto begun = waiter->exec("BEGIN IMMEDIATE");
    BOOST_REQUIRE(!begun.ok());
    BOOST_TEST((begun.error_kind() == hh::ErrorKind::busy), begun.error());
    const auto waited_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    BOOST_TEST(waited_ms >= timeout_ms);
  }
  BOOST_REQUIRE(holder->exec("ROLLBACK").ok());
}

// A file whose schema version no healthhook wrote (negative) is refused, not migrated from
// an index before the first migration.
BOOST_AUTO_TEST_CASE(a_negative_schema_version_is_refused) {
  TempDir dir;
  {
    auto db = store::open_for_writing(dir.file("n.db"), {});
    BOOST_REQUIRE(db->exec("PRAGMA user_version = -1").ok());
  }
  auto db = store::open_for_writing(dir.file("n.db"), {});
  BOOST_REQUIRE(!db.ok());
  BOOST_TEST(db.error().find("is not healthhook's") != std::string::npos, db.error());
}

// Another program's SQLite file is refused, not filled with healthhook's tables beside its
// own, and nothing in it changes: its journal mode stays (WAL was switched on, for good,
// before the refusal), no -wal or -shm beside it, its user_version kept (our migrations ran
// in it from its version on). Told by schema version 0 with tables, or by a version of its
// own without our inbox (a table called `deliveries`, as ours once was, included). An empty
// file is a new store.
BOOST_AUTO_TEST_CASE(another_programs_file_is_refused) {
  TempDir dir;
  const auto expect_refused_unchanged = [&](const std::string& name, const std::string& schema, int64_t version,
                                            const std::string& reason) {
    {
      auto db = sqlite::Connection::open(dir.file(name), sqlite::OpenMode::read_write_create);
      BOOST_REQUIRE(db.ok());
      BOOST_REQUIRE(db->exec(schema + "; PRAGMA user_version = " + std::to_string(version)).ok());
    }
    auto refused = store::open_for_writing(dir.file(name), {});
    BOOST_REQUIRE(!refused.ok());
    BOOST_TEST(refused.error().find(reason) != std::string::npos, refused.error());
    auto theirs = sqlite::Connection::open(dir.file(name), sqlite::OpenMode::read_write);
    BOOST_REQUIRE(theirs.ok());
    BOOST_TEST(theirs->query_int("SELECT count(*) FROM sqlite_master")->value_or(-1) == 1, name);
    BOOST_TEST(theirs->query_int("PRAGMA user_version")->value_or(-1) == version, name);
    auto mode = theirs->prepare("PRAGMA journal_mode");
    BOOST_REQUIRE(mode.ok());
    auto row = mode->step();
    BOOST_REQUIRE(row.ok() && *row);
    BOOST_TEST(mode->column_text(0) == "delete", name);
    BOOST_TEST(!std::filesystem::exists(dir.file(name + "-wal")), name);
    BOOST_TEST(!std::filesystem::exists(dir.file(name + "-shm")), name);
  };
  expect_refused_unchanged("theirs.db", "CREATE TABLE t (x)", 0, "tables or indexes of another program");
  expect_refused_unchanged("versioned.db", "CREATE TABLE notes (x)", 1, "schema version 1 is another program's");
  expect_refused_unchanged("named.db", "CREATE TABLE deliveries (id INTEGER PRIMARY KEY, address TEXT)", 1,
                           "schema version 1 is another program's");
  { std::ofstream(dir.file("empty.db")); }
  BOOST_TEST(store::open_for_writing(dir.file("empty.db"), {}).ok());
}

// The commands that only read or administer a store say the same of such a file: they
// printed the first query's "no such table", or called it an outbox `serve` would migrate.
BOOST_AUTO_TEST_CASE(the_reading_commands_name_another_programs_file_too) {
  test::TempDir dir;
  const std::string path = dir.file("versioned.db");
  {
    auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_write_create);
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(db->exec("CREATE TABLE notes (x); PRAGMA user_version = 7").ok());
  }
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"query", "samples"}, {"capture", "-o", dir.file("out.jsonl")}, {"jobs"},
        {"forward", "list"}, {"purge-user", "00000000-0000-4000-8000-000000000000", "--dry-run"}}) {
    std::vector<std::string> args = command;
    args.insert(args.end(), {"--database", path});
    const auto result = test::run_healthhook(args);
    BOOST_TEST(result.exit_code != 0, command.front());
    BOOST_TEST(result.stderr_text.find("versioned.db: not a healthhook database: its schema version 7 is another "
                                       "program's") != std::string::npos,
               command.front() << ": " << result.stderr_text);
  }
}

// 004-outcomes: a database written before it (outcomes in the inbox row) keeps every
// status, family and error, and `deliveries` reads exactly as it did.
BOOST_AUTO_TEST_CASE(migration_004_moves_outcomes_out_of_the_inbox_row) {
  TempDir dir;
  const std::string path = dir.file("old.db");
  {
    auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_write_create);
    BOOST_REQUIRE(db.ok());
    for (size_t i = 0; i < 3; ++i) BOOST_REQUIRE(db->exec(store::migrations()[i].sql).ok());
    BOOST_REQUIRE(db->exec("PRAGMA user_version = 3").ok());
    BOOST_REQUIRE(db->exec(
        "INSERT INTO deliveries (seq, message_id, received_at, status, family, error, headers, body) VALUES "
        "(1, 'a', 10, 'processed', 'summary', NULL, '{}', x'7b7d'), "
        "(2, 'b', 20, 'invalid', NULL, '$.data.id: missing', '{}', x'00ff'), "
        "(3, 'c', 30, 'pending', NULL, NULL, '{\"k\":\"v\"}', x'7b7d')").ok());
  }
  auto db = store::open_for_writing(path, {});
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  auto rows = db->prepare(
      "SELECT seq || '|' || message_id || '|' || received_at || '|' || status || '|' || ifnull(family, '-') || '|' || "
      "ifnull(error, '-') || '|' || headers || '|' || hex(body) FROM deliveries ORDER BY seq");
  BOOST_REQUIRE(rows.ok());
  std::vector<std::string> seen;
  while (rows->step().value()) seen.emplace_back(rows->column_text(0));
  BOOST_TEST(seen == (std::vector<std::string>{"1|a|10|processed|summary|-|{}|7B7D",
                                               "2|b|20|invalid|-|$.data.id: missing|{}|00FF",
                                               "3|c|30|pending|-|-|{\"k\":\"v\"}|7B7D"}),
             boost::test_tools::per_element());
  BOOST_TEST(db->query_int("SELECT count(*) FROM delivery_outcomes")->value() == 2);  // pending = no row
  // Message ids are still remembered by the inbox's unique index.
  BOOST_TEST(!db->exec("INSERT INTO inbox (message_id, received_at, headers, body) VALUES ('a', 1, '{}', x'00')").ok());
  // Outcomes are checked as before.
  BOOST_TEST(!db->exec("INSERT INTO delivery_outcomes (seq, status) VALUES (3, 'done')").ok());
}

// With a WalSync (store/sqlite/wal_sync.h) commits do not sync inside COMMIT; each ack waits for
// an fdatasync of the WAL that began after its commit.
namespace {

// Opens the sync thread on the store's WAL and makes the connection commit unsynced, as
// `serve` does with synchronous = "full".
std::unique_ptr<store::WalSync> sync_for(Store& s, store::WalSync::SyncFile sync_file = {}) {
  BOOST_REQUIRE(s.db.exec("PRAGMA synchronous = NORMAL"));
  auto sync = store::WalSync::open(s.dir.file("inbox.db-wal"), std::move(sync_file));
  BOOST_REQUIRE_MESSAGE(sync.ok(), sync.error());
  return std::move(*sync);
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_ack_waits_for_a_wal_sync_that_began_after_its_commit) {
  Store s;
  std::mutex mutex;
  std::condition_variable cv;
  bool entered = false, released = false;
  int64_t committed_at_sync = -1;
  store::InboxWriter writer(s.inbox, {});
  const std::string path = s.dir.file("inbox.db");
  writer.sync_commits_with(sync_for(s, [&](int fd) -> std::string {
    // What a reader sees: the commit is done. (No Boost.Test macros off the test's
    // thread: they are not thread-safe.)
    int64_t committed = -1;
    if (auto reader = store::open_for_reading(path); reader.ok()) {
      if (auto rows = reader->query_int("SELECT count(*) FROM deliveries"); rows.ok()) committed = rows->value_or(-1);
    }
    std::unique_lock lock(mutex);
    committed_at_sync = committed;
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return released; });
    return ::fdatasync(fd) == 0 ? "" : "fdatasync failed";
  }));
  writer.start();
  Collected collected;
  BOOST_REQUIRE(writer.submit(delivery("msg_1"), collected.for_id("msg_1")) == store::InboxWriter::Admission::queued);
  {
    std::unique_lock lock(mutex);
    BOOST_REQUIRE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return entered; }));
    BOOST_TEST(committed_at_sync == 1);
    // The sync has begun and not returned: the ack (run after it, on its thread) waits.
    std::lock_guard collected_lock(collected.mutex);
    BOOST_TEST(collected.outcomes.empty());
    released = true;
    cv.notify_all();
  }
  collected.wait_for(1);
  writer.stop();
  BOOST_TEST((collected.outcomes[0].second.kind == Kind::stored));
  BOOST_TEST(collected.outcomes[0].second.seq == 1);
}

// Background work (the processor) is given only rows whose WAL sync has returned
// (inbox_writer.h says why), and runs soon after one has: the writer's idle wake-up is
// set far beyond the test's time limit, so only its look for synced rows can run it.
namespace {

class RecordingWork : public store::BackgroundWork {
 public:
  bool run_once(int64_t durable_seq) override {  // on the writer thread: no Boost.Test macros
    std::lock_guard lock(mutex_);
    ++calls_;
    given_.push_back(durable_seq);
    cv_.notify_all();
    return false;
  }
  // Waits (bounded) until run_once() has been called `calls` times; returns what it was given.
  std::vector<int64_t> wait_for_calls(size_t calls) {
    std::unique_lock lock(mutex_);
    BOOST_REQUIRE(cv_.wait_for(lock, std::chrono::seconds(30), [&] { return calls_ >= calls; }));
    return given_;
  }
  // Waits (bounded) until run_once() has been given `seq`.
  void wait_for_seq(int64_t seq) {
    std::unique_lock lock(mutex_);
    BOOST_REQUIRE(cv_.wait_for(lock, std::chrono::seconds(30), [&] { return !given_.empty() && given_.back() >= seq; }));
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  size_t calls_ = 0;
  std::vector<int64_t> given_;
};

// A SyncFile that holds the sync thread until release().
struct HeldSync {
  std::mutex mutex;
  std::condition_variable cv;
  bool entered = false, released = false;

  store::WalSync::SyncFile sync_file() {
    return [this](int fd) -> std::string {
      std::unique_lock lock(mutex);
      entered = true;
      cv.notify_all();
      cv.wait(lock, [&] { return released; });
      return ::fdatasync(fd) == 0 ? "" : "fdatasync failed";
    };
  }
  void wait_entered() {
    std::unique_lock lock(mutex);
    BOOST_REQUIRE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return entered; }));
  }
  void release() {
    std::lock_guard lock(mutex);
    released = true;
    cv.notify_all();
  }
};

// Declared after the writer: releases the sync before the writer's destructor waits for it
// (when a check fails early).
struct ReleaseAtExit {
  HeldSync& held;
  ~ReleaseAtExit() { held.release(); }
};

store::WriterOptions no_idle_wakeup() {
  store::WriterOptions options;
  options.idle_wakeup = std::chrono::minutes(10);
  return options;
}

}  // namespace

namespace {

// A started writer with RecordingWork as its background work and its WAL sync held;
// run_once() has been called once (at start).
struct HeldSyncWriter {
  Store s;
  HeldSync held;
  RecordingWork work;
  store::InboxWriter writer{s.inbox, no_idle_wakeup()};
  ReleaseAtExit release_at_exit{held};  // after the writer: destroyed before it

  HeldSyncWriter() {
    writer.add_background(&work);
    writer.sync_commits_with(sync_for(s, held.sync_file()));
    writer.start();
    BOOST_TEST(work.wait_for_calls(1) == std::vector<int64_t>{0}, boost::test_tools::per_element());
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(background_work_gets_a_row_only_after_its_wal_sync_returned, HeldSyncWriter) {
  Collected collected;
  BOOST_REQUIRE(writer.submit(delivery("msg_1"), collected.for_id("msg_1")) == store::InboxWriter::Admission::queued);
  held.wait_entered();
  // At start, after the commit, and at each look while the sync is held: the row is not
  // on disk, so never past 0.
  BOOST_TEST(std::ranges::max(work.wait_for_calls(2)) == 0);
  BOOST_TEST(writer.durable_seq() == 0);
  BOOST_TEST(s.count() == 1);  // committed, visible to readers
  held.release();
  work.wait_for_seq(1);  // found by the writer's look for synced rows, not the ten-minute idle wake-up
  BOOST_TEST(writer.durable_seq() == 1);
  collected.wait_for(1);
  writer.stop();
  BOOST_TEST((collected.outcomes[0].second.kind == Kind::stored));
}

BOOST_FIXTURE_TEST_CASE(rows_a_posted_task_commits_are_synced_before_background_work_gets_them, HeldSyncWriter) {
  // What the fetcher does: a page appended by a task on the writer thread, no ack waiting.
  writer.post([this] {
    const store::NewDelivery page = delivery("fetch:1:1");
    const store::NewDelivery* batch[] = {&page};
    (void)s.inbox.append(batch);
  });
  held.wait_entered();  // the writer asked for the page's sync
  BOOST_TEST(s.count() == 1);
  BOOST_TEST(writer.durable_seq() == 0);
  held.release();
  work.wait_for_seq(1);
  BOOST_TEST(writer.durable_seq() == 1);
  writer.stop();
}

BOOST_AUTO_TEST_CASE(wake_runs_background_work_without_waiting_for_the_idle_wake_up) {
  Store s;
  RecordingWork work;
  store::InboxWriter writer(s.inbox, no_idle_wakeup());
  writer.add_background(&work);
  writer.start();
  work.wait_for_calls(1);  // at start
  writer.wake();           // e.g. a fetched page was stored
  work.wait_for_calls(2);
  writer.stop();
}

BOOST_AUTO_TEST_CASE(a_failed_wal_sync_answers_unavailable_until_a_restart) {
  Store s;
  int calls = 0;  // on the sync thread only
  store::InboxWriter writer(s.inbox, {});
  writer.sync_commits_with(sync_for(s, [&calls](int) -> std::string {
    return ++calls == 1 ? "fdatasync of the WAL: Input/output error" : "";
  }));
  writer.start();
  Collected collected;
  writer.submit(delivery("msg_1"), collected.for_id("first"));
  collected.wait_for(1);
  writer.submit(delivery("msg_1"), collected.for_id("retry"));
  collected.wait_for(2);
  writer.stop();
  const store::AppendOutcome& first = collected.outcomes[0].second;
  BOOST_TEST((first.kind == Kind::unavailable));  // no 2xx: maybe not on disk
  BOOST_TEST(first.error.find("Input/output error") != std::string::npos);
  // The next fdatasync would report success for pages the kernel may have dropped, and
  // the row is committed: no "duplicate" 2xx either, and readiness is down for good.
  const store::AppendOutcome& retry = collected.outcomes[1].second;
  BOOST_TEST((retry.kind == Kind::unavailable));
  BOOST_TEST(retry.error.find("restart healthhook") != std::string::npos);
  BOOST_TEST(calls == 1);
  BOOST_TEST(!writer.last_commit_ok());
  BOOST_TEST(writer.wal_sync_failure() == "fdatasync of the WAL: Input/output error");
  BOOST_TEST(writer.stats().failed.load() == 2u);
  BOOST_TEST(s.count() == 1);
}

BOOST_AUTO_TEST_CASE(after_a_restart_the_committed_delivery_is_a_duplicate) {
  Store s;
  {
    store::InboxWriter writer(s.inbox, {});
    writer.sync_commits_with(sync_for(s, [](int) -> std::string { return "fdatasync of the WAL: Input/output error"; }));
    writer.start();
    Collected collected;
    writer.submit(delivery("msg_1"), collected.for_id("first"));
    collected.wait_for(1);
    BOOST_TEST((collected.outcomes[0].second.kind == Kind::unavailable));
  }
  store::InboxWriter writer(s.inbox, {});  // a new process: a new sync thread
  writer.sync_commits_with(sync_for(s));
  writer.start();
  Collected collected;
  writer.submit(delivery("msg_1"), collected.for_id("retry"));
  collected.wait_for(1);
  BOOST_TEST((collected.outcomes[0].second.kind == Kind::duplicate));
  BOOST_TEST(collected.outcomes[0].second.seq == 1);
  BOOST_TEST(writer.last_commit_ok());
}

BOOST_AUTO_TEST_CASE(stop_syncs_and_acks_every_committed_batch) {
  Store s;
  store::InboxWriter writer(s.inbox, {});
  auto sync = sync_for(s);  // the real fdatasync
  const store::WalSync* wal_sync = sync.get();
  writer.sync_commits_with(std::move(sync));
  writer.start();
  Collected collected;
  for (int i = 0; i < 20; ++i) writer.submit(delivery("s" + std::to_string(i)), collected.for_id("s"));
  writer.stop();  // joins the writer, then the sync thread
  BOOST_TEST(collected.outcomes.size() == 20u);
  for (const auto& [id, outcome] : collected.outcomes) BOOST_TEST((outcome.kind == Kind::stored));
  BOOST_TEST(wal_sync->syncs() >= 1u);
  BOOST_TEST(wal_sync->syncs() <= writer.stats().batches.load());  // one sync can cover several
  BOOST_TEST(s.count() == 20);
}

BOOST_AUTO_TEST_CASE(a_wal_sync_needs_the_wal_file) {
  TempDir dir;
  auto sync = store::WalSync::open(dir.file("missing.db-wal"));
  BOOST_REQUIRE(!sync.ok());
  BOOST_TEST(sync.error().find("missing.db-wal") != std::string::npos);
}

// A delivery longer than SQLite's row limit used to fail its whole group commit, again at
// every retry (the zeroblob's bind result was not checked). Now it alone is refused.
BOOST_AUTO_TEST_CASE(a_delivery_too_large_for_a_row_does_not_fail_its_group) {
  Store s;
  sqlite3_limit(s.db.get(), SQLITE_LIMIT_LENGTH, 2 * 1024 * 1024);  // a small store, same rule
  BOOST_TEST(s.inbox.max_delivery_bytes() < 2u * 1024 * 1024);
  store::InboxWriter writer(s.inbox, {});
  writer.start();
  Collected collected;
  {
    WriterGate gate(writer);  // all three in one group commit
    writer.submit(delivery("msg_before"), collected.for_id("msg_before"));
    writer.submit(delivery("msg_huge", std::string(3 * 1024 * 1024, 'x')), collected.for_id("msg_huge"));
    writer.submit(delivery("msg_after", std::string(1024 * 1024 + 1, 'y')), collected.for_id("msg_after"));
  }
  collected.wait_for(3);
  writer.stop();
  BOOST_TEST(writer.stats().batches.load() == 1u);
  BOOST_TEST((collected.outcomes[0].second.kind == Kind::stored));
  BOOST_TEST((collected.outcomes[1].second.kind == Kind::too_large));
  BOOST_TEST((collected.outcomes[2].second.kind == Kind::stored));  // written in place (zeroblob)
  BOOST_TEST(collected.outcomes[2].second.seq == 2);                 // no seq spent on the refused one
  BOOST_TEST(s.count() == 2);
}

BOOST_AUTO_TEST_SUITE_END()  // inbox_writer_test
