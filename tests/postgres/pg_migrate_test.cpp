// `healthhook migrate` (cli/migrate_command.cpp, store/migrate/sqlite_to_postgres.h)
// run as a process: a SQLite store with real content (a generated corpus of every family,
// processed; a body of several MB, bodies that are not UTF-8; outcomes, removed bodies,
// jobs, erasures, an outbox whose AUTOINCREMENT mark is past its rows) copied into a fresh
// PostgreSQL store, then every table compared row for row with the source. Also: the
// sequences continue after the copied maxima, an interrupted copy resumed ends the same,
// refusals (a target holding another store's rows, the processing lock held, a missing
// source), a half-copied target refused by every other opener until migrate has finished
// it, and `healthhook rebuild` on the copy re-derives the same tables.
//
// Values are rendered by the target column's type, the same way on both sides: integers
// as digits, reals with %.17g, text quoted, bytes in hex, a jsonb scalar as SQLite types
// it (i:72, r:72, s:text). Rows are compared sorted (the collations differ).
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <thread>

#include "store/open_readers.h"
#include "store/open_store.h"
#include "store/schema/tables.h"
#include "store/postgres/database.h"
#include "store/sqlite/database.h"
#include "store/sqlite/processing_lock.h"
#include "tests/derived/corpus.h"
#include "store/postgres/copy_progress.h"
#include "store/unfinished_copy.h"
#include "tests/derived/store_dump.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(pg_migrate_test)

using namespace hh;
using Strings = std::vector<std::string>;
using Tables = std::map<std::string, Strings>;

namespace {

constexpr size_t kMigrateCorpus = 400;
constexpr size_t kMigrateBigBody = 5u << 20;

// Every table migrate copies, and processor_state.
Strings migrate_tables() {
  Strings tables{"inbox", "delivery_outcomes", "removed_bodies", "processor_state", "jobs", "erasures", "outbox",
                 "outbox_dropped", "forward_pauses", "retention_walk"};
  for (std::string_view table : store::schema::derived_tables()) tables.emplace_back(table);
  return tables;
}

std::string migrate_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "x'";
  for (char c : bytes) {
    out.push_back(kDigits[static_cast<unsigned char>(c) >> 4]);
    out.push_back(kDigits[static_cast<unsigned char>(c) & 15]);
  }
  return out + "'";
}

std::string migrate_real(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::string migrate_real_text(std::string_view text) {
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return migrate_real(value);
}

pg::Connection migrate_connect(const std::string& uri) {
  auto db = store::connect(store::Database(uri));
  BOOST_REQUIRE_MESSAGE(db, db.error());
  return std::move(*db);
}

// The columns of `table` in the target, with their types.
std::vector<std::pair<std::string, std::string>> migrate_columns(pg::Connection& pg, const std::string& table) {
  auto rows = pg.query(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() "
      "AND table_name = $1 AND column_name NOT IN ('lease_until', 'shard') ORDER BY ordinal_position",
      pg::Params().add(table));
  BOOST_REQUIRE_MESSAGE(rows, rows.error());
  std::vector<std::pair<std::string, std::string>> out;
  for (int r = 0; r < rows->size(); ++r) out.emplace_back(rows->text(r, 0), rows->text(r, 1));
  return out;
}

// Every table, rows rendered and sorted, from SQLite (`lite`) or PostgreSQL.
Tables migrate_dump_lite(sqlite::Connection& lite, pg::Connection& pg) {
  Tables out;
  for (const std::string& table : migrate_tables()) {
    const auto columns = migrate_columns(pg, table);
    std::string sql = "SELECT ";
    for (size_t c = 0; c < columns.size(); ++c) sql += (c ? ", " : "") + columns[c].first;
    auto stmt = lite.prepare(sql + " FROM " + table);
    BOOST_REQUIRE_MESSAGE(stmt, stmt.error());
    Strings rows;
    BOOST_REQUIRE(stmt->for_each_row([&](const sqlite::Statement& s) {
      std::string line;
      for (size_t c = 0; c < columns.size(); ++c) {
        const int i = static_cast<int>(c);
        const std::string& type = columns[c].second;
        line += c ? "|" : "";
        if (s.column_is_null(i)) {
          line += "NULL";
        } else if (type == "bigint") {
          line += std::to_string(s.column_int(i));
        } else if (type == "double precision") {
          line += migrate_real(s.column_double(i));
        } else if (type == "bytea") {
          line += migrate_hex(s.column_blob(i));
        } else if (type == "jsonb") {
          switch (s.column_type(i)) {
            case SQLITE_INTEGER: line += "i:" + std::to_string(s.column_int(i)); break;
            case SQLITE_FLOAT: line += "r:" + migrate_real(s.column_double(i)); break;
            default: line += "s:" + std::string(s.column_text(i));
          }
        } else {
          line += "'" + std::string(s.column_text(i)) + "'";
        }
      }
      rows.push_back(std::move(line));
    }).ok());
    std::sort(rows.begin(), rows.end());
    out[table] = std::move(rows);
  }
  return out;
}

Tables migrate_dump_pg(pg::Connection& pg) {
  Tables out;
  for (const std::string& table : migrate_tables()) {
    const auto columns = migrate_columns(pg, table);
    std::string sql = "SELECT ";
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string& name = columns[c].first;
      sql += c ? ", " : "";
      if (columns[c].second == "jsonb") {
        sql += "jsonb_typeof(" + name + ") || ':' || (" + name + " #>> '{}')";
      } else {
        sql += name;
      }
    }
    auto result = pg.query(sql + " FROM " + table, {}, pg::Results::text);
    BOOST_REQUIRE_MESSAGE(result, result.error());
    Strings rows;
    for (int r = 0; r < result->size(); ++r) {
      std::string line;
      for (size_t c = 0; c < columns.size(); ++c) {
        const int i = static_cast<int>(c);
        const std::string& type = columns[c].second;
        line += c ? "|" : "";
        if (result->is_null(r, i)) {
          line += "NULL";
          continue;
        }
        const std::string_view text = result->text(r, i);
        if (type == "bigint") {
          line += text;
        } else if (type == "double precision") {
          line += migrate_real_text(text);
        } else if (type == "bytea") {
          line += "x'" + std::string(text.substr(2)) + "'";  // "\x…"
        } else if (type == "jsonb") {
          if (text.starts_with("string:")) {
            line += "s:" + std::string(text.substr(7));
          } else {
            const std::string_view number = text.substr(7);  // "number:"
            line += number.find_first_of(".eE") == std::string_view::npos ? "i:" + std::string(number)
                                                                           : "r:" + migrate_real_text(number);
          }
        } else {
          line += "'" + std::string(text) + "'";
        }
      }
      rows.push_back(std::move(line));
    }
    std::sort(rows.begin(), rows.end());
    out[table] = std::move(rows);
  }
  return out;
}

void migrate_check_same(const Tables& actual, const Tables& expected, const Strings& tables) {
  for (const std::string& table : tables) {
    BOOST_TEST_CONTEXT("table " << table) {
      const Strings& a = actual.at(table);
      const Strings& e = expected.at(table);
      BOOST_TEST(a.size() == e.size());
      std::string shown;
      for (size_t i = 0; i < std::max(a.size(), e.size()) && shown.size() < 2000; ++i) {
        const std::string x = i < a.size() ? a[i].substr(0, 300) : "(none)";
        const std::string y = i < e.size() ? e[i].substr(0, 300) : "(none)";
        if (x != y) shown += "\n  copy:   " + x + "\n  source: " + y;
      }
      BOOST_TEST(shown.empty(), shown);
    }
  }
}

void migrate_exec(sqlite::Connection& db, const std::string& sql) {
  auto done = db.exec(sql);
  BOOST_REQUIRE_MESSAGE(done, done.error() + ": " + sql);
}

// A SQLite store with something in every table.
struct SourceStore {
  test::TempDir dir;
  std::string path = dir.file("source.db");

  explicit SourceStore(size_t corpus_size = kMigrateCorpus, uint32_t seed = 35) {
    auto db = test::open_store(path);
    auto deliveries = test::make_corpus(corpus_size, seed);
    deliveries.push_back(test::raw_delivery("big-" + std::to_string(seed), std::string(kMigrateBigBody, 'x')));
    std::string odd = "{\"not utf-8\": \"\xff\xfe\", \"nul\": \"";
    odd.push_back('\0');
    odd += "\"}\r\n\t\\";
    deliveries.push_back(test::raw_delivery("odd-" + std::to_string(seed), odd));
    test::append_deliveries(db, deliveries);
    test::apply_inbox(db);
    // Retention removed two bodies; an erasure was recorded; the outbox sent (deleted) its
    // last row, so its AUTOINCREMENT mark is past its rows, and its budget dropped a range.
    migrate_exec(db,
                 "INSERT INTO removed_bodies (seq, body_sha256, body_bytes, removed_at_ms) "
                 "SELECT seq, 'sha-' || seq, 10 * seq, 1700000000000 + seq FROM delivery_outcomes "
                 "WHERE status = 'invalid' ORDER BY seq LIMIT 2");
    pg_migrate_test::migrate_exec(db, "INSERT INTO erasures (user_id, erased_at_ms, row_counts) VALUES ('gone', 1700000000000, "
                     "'{\"samples\": 3}'), ('gone too', 1700000000001, '{}')");
    for (int i = 1; i <= 4; ++i) {
      migrate_exec(db, "INSERT INTO outbox (destination, kind, seq, event_type, table_name, row_key, op, created_at, "
                       "next_attempt_at, user_id, order_key) VALUES ('hook', 'changes', " + std::to_string(i) +
                       ", 'daily.data.sleep.created', 'summaries', 'sleep/s" + std::to_string(i) +
                       "', 'insert', 1700000000000, 1700000000000, 'u1', 'u1')");
    }
    pg_migrate_test::migrate_exec(db, "DELETE FROM outbox WHERE outbox_id = 4");
    migrate_exec(db, "INSERT INTO outbox_dropped (destination, first_seq, last_seq, entries, dropped_at) "
                     "VALUES ('hook', 1, 9, 12, 1700000000000)");
    // A paused destination stays paused on PostgreSQL; retention's walk keeps its place.
    migrate_exec(db, "INSERT INTO forward_pauses (destination, paused_at) VALUES ('hook', 1700000000000)");
    migrate_exec(db, "INSERT INTO retention_walk (id, walked_seq) VALUES (1, 7)");
  }

  sqlite::Connection open() const {
    auto db = store::open_for_reading(path);
    BOOST_REQUIRE_MESSAGE(db, db.error());
    return std::move(*db);
  }
};

test::ProcessResult run_migrate(const std::string& from, const std::string& to, const Strings& extra = {}) {
  Strings args{"migrate", "--from", from, "--to", to};
  args.insert(args.end(), extra.begin(), extra.end());
  return test::run_healthhook(args);
}

int64_t migrate_int(pg::Connection& pg, const std::string& sql);

// Starts `healthhook migrate`, waits until the target's inbox holds `inbox_rows` rows, then
// kills it (SIGKILL: no cleanup, as a crash or `kill -9`). Returns its exit status (128+9
// when it was killed) and what it wrote on stderr.
std::pair<int, std::string> migrate_killed_at(const std::string& from, const std::string& to, const Strings& extra,
                                              int64_t inbox_rows) {
  Strings args{test::healthhook_binary(), "migrate", "--from", from, "--to", to};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int err[2];
  BOOST_REQUIRE(::pipe(err) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(err[1], 2);
    ::close(err[0]);
    ::close(err[1]);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  BOOST_REQUIRE(pid > 0);
  ::close(err[1]);
  auto pg = migrate_connect(to);
  for (int i = 0; i < 20000; ++i) {
    // The progress table is there once the copy started.
    auto copied = pg.query_int("SELECT count(*) FROM inbox");
    if (copied && copied->value_or(0) >= inbox_rows) break;
    ::usleep(1000);
  }
  ::kill(pid, SIGKILL);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(err[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status), text};
}

int64_t migrate_int(pg::Connection& pg, const std::string& sql) {
  auto value = pg.query_int(sql);
  BOOST_REQUIRE_MESSAGE(value, value.error() + ": " + sql);
  return value->value_or(-1);
}

}  // namespace

BOOST_AUTO_TEST_CASE(copies_every_table_row_for_row_and_sequences_continue) {
  SourceStore source;
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto copied = run_migrate(source.path, uri, {"--batch-rows", "97"});
  BOOST_REQUIRE_MESSAGE(copied.exit_code == 0, copied.stderr_text);
  BOOST_TEST(copied.stderr_text.find("migrate: inbox: ") != std::string::npos, copied.stderr_text);
  BOOST_TEST(copied.stderr_text.find("migrate: samples: ") != std::string::npos);
  BOOST_TEST(copied.stdout_text.find("migrate: 24 tables") != std::string::npos, copied.stdout_text);

  auto lite = source.open();
  auto pg = migrate_connect(uri);
  const Tables expected = migrate_dump_lite(lite, pg);
  for (const std::string& table : migrate_tables()) BOOST_TEST(!expected.at(table).empty(), "empty: " << table);
  migrate_check_same(migrate_dump_pg(pg), expected, migrate_tables());
  // The big body byte for byte (the dump shows it in hex; this without the dump's cuts).
  BOOST_TEST(migrate_int(pg, "SELECT length(body) FROM inbox WHERE message_id = 'big-35'") ==
             static_cast<int64_t>(kMigrateBigBody));

  // New rows continue after the copied ones.
  const int64_t last_seq = migrate_int(pg, "SELECT max(seq) FROM inbox");
  BOOST_TEST(last_seq == static_cast<int64_t>(kMigrateCorpus) + 2);
  BOOST_TEST(migrate_int(pg, "INSERT INTO inbox (message_id, received_at, headers, body) "
                             "VALUES ('new', 1, '{}', '\\x7b7d') RETURNING seq") == last_seq + 1);
  const int64_t last_change = migrate_int(pg, "SELECT max(change_id) FROM changes");
  BOOST_TEST(migrate_int(pg, "INSERT INTO changes (seq, table_name, row_key, op) VALUES (1, 'users', 'u', 'insert') "
                             "RETURNING change_id") == last_change + 1);
  const int64_t last_series = migrate_int(pg, "SELECT max(series_id) FROM series");
  BOOST_TEST(migrate_int(pg, "INSERT INTO series (user_id, resource, provider, source_type) "
                             "VALUES ('new', 'r', 'p', 's') RETURNING series_id") == last_series + 1);
  const int64_t last_job = migrate_int(pg, "SELECT max(job_id) FROM jobs");
  BOOST_TEST(migrate_int(pg, "INSERT INTO jobs (kind, job_key, next_attempt_at, trigger_seq, payload, created_at, "
                             "updated_at) VALUES ('backfill', 'new', 1, 1, '{}', 1, 1) RETURNING job_id") ==
             last_job + 1);
  BOOST_TEST(migrate_int(pg, "INSERT INTO erasures (user_id, erased_at_ms, row_counts) VALUES ('x', 1, '{}') "
                             "RETURNING erasure_id") == 3);
  // Outbox id 4 was handed out (and deleted) in SQLite: never again.
  BOOST_TEST(migrate_int(pg, "INSERT INTO outbox (destination, kind, seq, table_name, row_key, op, created_at, "
                             "next_attempt_at) VALUES ('hook', 'changes', 1, 't', 'k', 'insert', 1, 1) "
                             "RETURNING outbox_id") == 5);
}

BOOST_AUTO_TEST_CASE(an_interrupted_copy_run_again_ends_the_same) {
  SourceStore source;
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  // Stopped in the inbox, then in a derived table (as if killed after a commit).
  auto first = run_migrate(source.path, uri, {"--batch-rows", "50", "--stop-after-batches", "3"});
  BOOST_TEST(first.exit_code == 1);
  BOOST_TEST(first.stderr_text.find("run again to finish") != std::string::npos, first.stderr_text);
  auto pg = migrate_connect(uri);
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM inbox") == 150);
  auto second = run_migrate(source.path, uri, {"--batch-rows", "50", "--stop-after-batches", "25"});
  BOOST_TEST(second.exit_code == 1);
  BOOST_TEST(second.stderr_text.find("copied before") != std::string::npos, second.stderr_text);
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM inbox") == static_cast<int64_t>(kMigrateCorpus) + 2);
  BOOST_TEST(migrate_int(pg, "SELECT applied_seq FROM processor_state") == 0);  // not finished
  auto last = run_migrate(source.path, uri, {"--batch-rows", "50"});
  BOOST_REQUIRE_MESSAGE(last.exit_code == 0, last.stderr_text);

  auto lite = source.open();
  migrate_check_same(migrate_dump_pg(pg), migrate_dump_lite(lite, pg), migrate_tables());

  // Once more: nothing left to copy, nothing duplicated.
  auto again = run_migrate(source.path, uri);
  BOOST_REQUIRE_MESSAGE(again.exit_code == 0, again.stderr_text);
  BOOST_TEST(again.stdout_text.find("(0 copied by this run)") != std::string::npos, again.stdout_text);
  migrate_check_same(migrate_dump_pg(pg), migrate_dump_lite(lite, pg), migrate_tables());
}

BOOST_AUTO_TEST_CASE(a_copy_killed_midway_run_again_ends_the_same) {
  SourceStore source;
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  // One row per transaction (thousands of them): killed while it copies, some way in.
  auto [status, text] = migrate_killed_at(source.path, uri, {"--batch-rows", "1"}, 20);
  BOOST_TEST(status == 128 + SIGKILL, text);
  auto pg = migrate_connect(uri);
  BOOST_TEST(migrate_int(pg, "SELECT applied_seq FROM processor_state") == 0);  // not finished
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM inbox") >= 20);
  BOOST_TEST_MESSAGE("killed after " << migrate_int(pg, "SELECT count(*) FROM inbox") << " inbox rows");
  // The server ends the killed client's session (and its processing lock) once it sees the
  // connection closed: a run started before that is refused as if an instance held it.
  for (int wait = 0; wait < 100 && migrate_int(pg, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") > 0;
       ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto resumed = run_migrate(source.path, uri);
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.stderr_text);
  auto lite = source.open();
  migrate_check_same(migrate_dump_pg(pg), migrate_dump_lite(lite, pg), migrate_tables());
}

// The attack: a copy stopped part-way (by kill -9; here as if killed after a commit), then
// `serve` started on the target. It must not take the half copy for a store: it would apply
// the copied inbox, answer every new delivery 503 (inbox_seq not yet set past the copied
// rows) and write rows that make the same migrate fail for ever. So serve, every opener
// that writes (rebuild, replay, purge-user, forward, jobs) and the readers (query) refuse
// it, saying what to do, and write nothing; migrate run again finishes it, and then serve
// starts and stores new deliveries after the copied ones.
BOOST_AUTO_TEST_CASE(a_half_copied_target_is_refused_until_migrate_has_finished_it) {
  SourceStore source(40, 11);
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto stopped = run_migrate(source.path, uri, {"--batch-rows", "10", "--stop-after-batches", "2"});
  BOOST_TEST(stopped.exit_code == 1, stopped.stderr_text);
  auto pg = migrate_connect(uri);
  BOOST_REQUIRE_EQUAL(migrate_int(pg, "SELECT count(*) FROM inbox"), 20);
  const std::string refusal = store::loggable_location(uri) + ": " + std::string(store::kCopyUnfinished);

  test::TempDir dir;
  dir.write("secret", test::random_secret());
  dir.write("serve.toml",
            "database = \"" + uri + "\"\nlisten = \"127.0.0.1:0\"\nsigning_secret_files = [\"secret\"]\n");
  auto served = test::run_healthhook({"serve", "--config", dir.file("serve.toml")}, "", {}, std::chrono::seconds(60));
  BOOST_TEST(served.exit_code != 0);
  BOOST_TEST(served.stderr_text.find(refusal) != std::string::npos, served.stderr_text);
  BOOST_TEST(served.stderr_text.find("\"listening\"") == std::string::npos, served.stderr_text);
  auto queried = test::run_healthhook({"query", "samples", "--database", uri});
  BOOST_TEST(queried.exit_code == 1);
  BOOST_TEST(queried.stderr_text.find(refusal) != std::string::npos, queried.stderr_text);
  auto rebuilt = test::run_healthhook({"rebuild", "--database", uri});
  BOOST_TEST(rebuilt.exit_code != 0);
  BOOST_TEST(rebuilt.stderr_text.find(refusal) != std::string::npos, rebuilt.stderr_text);
  // Each way a command opens the store, as the commands above and the others open it.
  const store::Database target(uri);
  auto opened = store::open_store(target, {});
  BOOST_TEST((!opened && opened.error() == refusal), (opened ? "opened" : opened.error()));
  auto outbox = store::open_outbox(target);
  BOOST_TEST((!outbox && outbox.error() == refusal), (outbox ? "opened" : outbox.error()));
  auto jobs = store::open_job_admin(target);
  BOOST_TEST((!jobs && jobs.error() == refusal), (jobs ? "opened" : jobs.error()));
  auto erasure = store::open_erasure(target, 1000);
  BOOST_TEST((!erasure && erasure.error() == refusal), (erasure ? "opened" : erasure.error()));
  auto reader = store::open_read_store(target);
  BOOST_TEST((!reader && reader.error() == refusal), (reader ? "opened" : reader.error()));
  // Nothing was applied or written meanwhile.
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM inbox") == 20);
  BOOST_TEST(migrate_int(pg, "SELECT applied_seq FROM processor_state") == 0);

  auto resumed = run_migrate(source.path, uri, {"--batch-rows", "10"});
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.stderr_text);
  auto lite = source.open();
  migrate_check_same(migrate_dump_pg(pg), migrate_dump_lite(lite, pg), migrate_tables());
  const int64_t last_seq = migrate_int(pg, "SELECT max(seq) FROM inbox");
  {
    test::ServerProcess server(dir, "", std::chrono::seconds(60), {"HEALTHHOOK_DATABASE=" + uri});
    test::HttpClient client(server.port());
    std::string body;
    for (const store::NewDelivery& d : test::make_corpus(20, 99)) {
      if (d.origin == store::Origin::webhook && body.empty()) body = d.body;
    }
    auto stored = client.post_webhook(server.secret(), "after-the-copy", body);
    BOOST_TEST(stored.status == 200, stored.body);
    BOOST_TEST(stored.body.find("\"seq\":" + std::to_string(last_seq + 1)) != std::string::npos, stored.body);
    BOOST_TEST(server.stop() == 0);
  }
  // A finished copy a serve has written to since opens as any store.
  BOOST_TEST(store::open_store(target, {}).ok());
  BOOST_TEST(store::open_read_store(target).ok());

  // The copy's last transaction is what sets the sequences: a copy killed after every row
  // was in, before it, is unfinished too (inbox_seq still behind the copied rows).
  BOOST_REQUIRE(pg.query("SELECT setval('inbox_seq', $1)", pg::Params().add(last_seq - 1)));
  auto behind = store::open_store(target, {});
  BOOST_TEST((!behind && behind.error() == refusal), (behind ? "opened" : behind.error()));
}

// A least-privilege role (the grants docs/postgresql.md lists) made before migrate created
// its progress table may not read it. The copy was stopped before its first inbox batch: the
// inbox is empty, so only the progress rows tell the copy is unfinished. Unread, that role
// opened the half copy and wrote into it (and the same migrate then refused for ever); it is
// refused, told which table and which grant, until it may read the table.
BOOST_AUTO_TEST_CASE(a_role_that_may_not_read_the_progress_is_refused) {
  SourceStore source(40, 13);
  test::PostgresCluster& cluster = test::PostgresCluster::shared();
  const std::string uri = cluster.fresh_database();
  auto stopped = run_migrate(source.path, uri, {"--batch-rows", "10", "--stop-after-batches", "2"});
  BOOST_REQUIRE_MESSAGE(stopped.exit_code == 1, stopped.stderr_text);
  const size_t name_at = std::string("postgresql:///").size();
  const std::string database = uri.substr(name_at, uri.find('?') - name_at);
  // The state migrate commits before its first batch; then the documented grants, as if made
  // before the progress table was there.
  cluster.psql(database, "DO $$ DECLARE t text; BEGIN FOR t IN SELECT table_name FROM sqlite_copy_progress "
                         "WHERE table_name <> '(unfinished)' LOOP "
                         "EXECUTE 'TRUNCATE ' || quote_ident(t) || ' CASCADE'; END LOOP; END $$; "
                         "UPDATE sqlite_copy_progress SET rows_copied = 0, last_key = NULL");
  cluster.psql("postgres", "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'leastprivilege') "
                           "THEN CREATE ROLE leastprivilege LOGIN; END IF; END $$");
  cluster.psql(database, "GRANT USAGE ON SCHEMA public TO leastprivilege; "
                         "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO leastprivilege; "
                         "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO leastprivilege; "
                         "REVOKE ALL ON sqlite_copy_progress FROM leastprivilege");
  std::string as_least = uri;
  as_least.replace(as_least.find("user=healthhook"), 15, "user=leastprivilege");
  const store::Database target(as_least);
  const std::string unread = store::loggable_location(as_least) +
                             ": role leastprivilege may not read table sqlite_copy_progress";
  auto opened = store::open_store(target, {});
  BOOST_TEST((!opened && opened.error().starts_with(unread)), (opened ? "opened" : opened.error()));
  BOOST_TEST(opened.error().find("GRANT SELECT ON sqlite_copy_progress TO leastprivilege") != std::string::npos);
  auto reader = store::open_read_store(target);
  BOOST_TEST((!reader && reader.error().starts_with(unread)), (reader ? "opened" : reader.error()));
  auto queried = test::run_healthhook({"query", "deliveries", "--database", as_least});
  BOOST_TEST(queried.exit_code == 1);
  BOOST_TEST(queried.stderr_text.find(unread) != std::string::npos, queried.stderr_text);
  auto pg = migrate_connect(uri);
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM inbox") == 0);  // nothing written

  // Granted, it reads the progress and is refused as every other opener is.
  cluster.psql(database, "GRANT SELECT ON sqlite_copy_progress TO leastprivilege");
  const std::string refusal = store::loggable_location(as_least) + ": " + std::string(store::kCopyUnfinished);
  auto granted = store::open_store(target, {});
  BOOST_TEST((!granted && granted.error() == refusal), (granted ? "opened" : granted.error()));
}

// migrate marks the target before it counts the source and removes the mark only in its
// last transaction, with the sequences. Stopped while it counted (a large source: minutes),
// the target held a bare schema and a serve started on it; stopped after every row with an
// empty source inbox, nothing showed the sequences were never set. Both are refused until
// migrate, run again, has finished them. (The states are made here with psql: a kill at
// those points cannot be aimed at from outside.)
BOOST_AUTO_TEST_CASE(a_copy_stopped_while_counting_or_before_its_last_step_is_refused) {
  SourceStore source(30, 17);
  test::PostgresCluster& cluster = test::PostgresCluster::shared();
  const auto database_of = [](const std::string& uri) {
    const size_t name_at = std::string("postgresql:///").size();
    return uri.substr(name_at, uri.find('?') - name_at);
  };
  const std::string mark = "INSERT INTO sqlite_copy_progress (table_name, rows_copied, source) "
                           "VALUES ('" + std::string(store::kCopyUnfinishedMark) + "', 0, '')";

  // Stopped while counting: the schema and the progress table holding the mark only.
  const std::string counting = cluster.fresh_database();
  BOOST_REQUIRE(store::connect_migrated({counting, ""}));
  cluster.psql(database_of(counting), "CREATE TABLE sqlite_copy_progress (table_name text PRIMARY KEY, rows_copied "
                                      "bigint NOT NULL, last_key bigint, source text NOT NULL); " + mark);
  const std::string counting_refusal = store::loggable_location(counting) + ": " + std::string(store::kCopyUnfinished);
  auto opened = store::open_store(store::Database(counting), {});
  BOOST_TEST((!opened && opened.error() == counting_refusal), (opened ? "opened" : opened.error()));
  auto resumed = run_migrate(source.path, counting);
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.stderr_text);
  auto pg = migrate_connect(counting);
  auto lite = source.open();
  migrate_check_same(migrate_dump_pg(pg), migrate_dump_lite(lite, pg), migrate_tables());
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM sqlite_copy_progress WHERE table_name = '(unfinished)'") == 0);
  BOOST_TEST(store::open_store(store::Database(counting), {}).ok());

  // Stopped after every row, before the last transaction: the mark is still there, though
  // every table is at its count (and, the source inbox empty, inbox_seq would not tell).
  cluster.psql(database_of(counting), mark);
  auto behind = store::open_store(store::Database(counting), {});
  BOOST_TEST((!behind && behind.error() == counting_refusal), (behind ? "opened" : behind.error()));
  auto reader = store::open_read_store(store::Database(counting));
  BOOST_TEST((!reader && reader.error() == counting_refusal), (reader ? "opened" : reader.error()));
  auto finished = run_migrate(source.path, counting);
  BOOST_REQUIRE_MESSAGE(finished.exit_code == 0, finished.stderr_text);
  BOOST_TEST(store::open_store(store::Database(counting), {}).ok());
}

BOOST_AUTO_TEST_CASE(a_target_holding_another_stores_rows_is_refused) {
  SourceStore source;
  SourceStore other(30, 7);
  // A copy of another store, finished.
  const std::string copy_of_other = test::PostgresCluster::shared().fresh_database();
  auto copied = run_migrate(other.path, copy_of_other);
  BOOST_REQUIRE_MESSAGE(copied.exit_code == 0, copied.stderr_text);
  auto refused = run_migrate(source.path, copy_of_other);
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(refused.stderr_text.find("another SQLite store") != std::string::npos, refused.stderr_text);

  // A store a server wrote to: a delivery with a message id of the source at another seq.
  const std::string served = test::PostgresCluster::shared().fresh_database();
  auto pg = migrate_connect(served);
  BOOST_REQUIRE(store::migrate(pg));
  auto lite = source.open();
  const std::string message_id = test::value(lite, "SELECT message_id FROM inbox WHERE seq = 5");
  BOOST_REQUIRE(pg.query("INSERT INTO inbox (seq, message_id, received_at, headers, body) VALUES (9999, $1, 1, '{}', "
                         "'\\x7b7d')", pg::Params().add(message_id)));
  auto merged = run_migrate(source.path, served);
  BOOST_TEST(merged.exit_code == 1);
  BOOST_TEST(merged.stderr_text.find("already holds 1 deliveries (seq 9999-9999) that were not copied") !=
                 std::string::npos, merged.stderr_text);
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM inbox") == 1);  // left as it was

  // A database a serve ran on once (to create the schema) holds its bookkeeping: refused,
  // saying what to do instead.
  const std::string started = test::PostgresCluster::shared().fresh_database();
  auto started_pg = migrate_connect(started);
  BOOST_REQUIRE(store::migrate(started_pg));
  BOOST_REQUIRE(started_pg.query("INSERT INTO retention_walk (id, walked_seq) VALUES (1, 0)"));
  auto walked = run_migrate(source.path, started);
  BOOST_TEST(walked.exit_code == 1);
  BOOST_TEST(walked.stderr_text.find("retention_walk is not empty") != std::string::npos, walked.stderr_text);
  BOOST_TEST(walked.stderr_text.find("migrate into a database no serve has run on") != std::string::npos,
             walked.stderr_text);
}

// Decision 057, under attack: entries a SQLite sender had yet to make (it took the making
// over while the backend was behind) are in no table migrate copies, and PostgreSQL's
// writer would never make them: the copy is refused until they are made.
BOOST_AUTO_TEST_CASE(refused_while_forwarding_entries_wait_to_be_made) {
  SourceStore source(20, 5);
  {
    auto db = test::open_store(source.path);
    migrate_exec(db, "INSERT INTO forward_positions (destination, mode, after_seq, writer_makes) VALUES "
                     "('hook', 'deliveries', 3, 0)");
  }
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto refused = run_migrate(source.path, uri);
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(refused.stderr_text.find("not made yet") != std::string::npos, refused.stderr_text);
  {
    auto db = test::open_store(source.path);  // the sender caught up
    migrate_exec(db, "UPDATE forward_positions SET after_seq = (SELECT max(seq) FROM inbox), writer_makes = 1");
  }
  auto copied = run_migrate(source.path, uri);
  BOOST_TEST(copied.exit_code == 0, copied.stderr_text);
}

BOOST_AUTO_TEST_CASE(refused_while_the_processing_lock_is_held) {
  SourceStore source(20, 3);
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto leader = migrate_connect(uri);
  BOOST_REQUIRE(leader.query("SELECT pg_advisory_lock($1)", pg::Params().add(store::kProcessingLock)));
  auto refused = run_migrate(source.path, uri);
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(refused.stderr_text.find("processing lock") != std::string::npos, refused.stderr_text);
  auto pg = migrate_connect(uri);
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM inbox") == 0);
  BOOST_REQUIRE(leader.query("SELECT pg_advisory_unlock($1)", pg::Params().add(store::kProcessingLock)));
  auto copied = run_migrate(source.path, uri);
  BOOST_TEST(copied.exit_code == 0, copied.stderr_text);
}

BOOST_AUTO_TEST_CASE(refused_while_a_server_processes_the_source) {
  SourceStore source(20, 4);
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto serving = test::open_store(source.path);
  auto lock = store::ProcessingLock::acquire(serving);  // what a running `serve` holds
  BOOST_REQUIRE_MESSAGE(lock, lock.error());
  auto refused = run_migrate(source.path, uri);
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(refused.stderr_text.find("is being processed by another healthhook process") != std::string::npos,
             refused.stderr_text);
  auto pg = migrate_connect(uri);
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM pg_tables WHERE tablename = 'sqlite_copy_progress'") == 0);
}

BOOST_AUTO_TEST_CASE(a_missing_source_is_a_usage_error) {
  test::TempDir dir;
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto missing = run_migrate(dir.file("nothing.db"), uri);
  BOOST_TEST(missing.exit_code == 2);
  BOOST_TEST(missing.stderr_text == "healthhook migrate: --from: " + dir.file("nothing.db") + " does not exist\n");
  auto not_postgres = run_migrate(dir.file("nothing.db"), dir.file("other.db"));
  BOOST_TEST(not_postgres.exit_code == 2);
  BOOST_TEST(not_postgres.stderr_text.find("--to must be a postgresql:// URI") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_value_postgresql_cannot_hold_fails_with_its_table_named) {
  SourceStore source(20, 5);
  {
    auto db = test::open_store(source.path);
    migrate_exec(db, "UPDATE samples SET value = x'00ff' WHERE (series_id, t_ms) = (SELECT series_id, t_ms FROM samples LIMIT 1)");
  }
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto failed = run_migrate(source.path, uri);
  BOOST_TEST(failed.exit_code == 1);
  BOOST_TEST(failed.stderr_text.find("samples.value holds a blob, not a JSON scalar") != std::string::npos,
             failed.stderr_text);
  auto pg = migrate_connect(uri);
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM samples") == 0);  // the batch rolled back
  BOOST_TEST(migrate_int(pg, "SELECT count(*) FROM series") > 0);    // earlier tables stay in
}

BOOST_AUTO_TEST_CASE(rebuild_on_the_copy_gives_the_same_derived_tables) {
  SourceStore source;
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto copied = run_migrate(source.path, uri);
  BOOST_REQUIRE_MESSAGE(copied.exit_code == 0, copied.stderr_text);
  auto rebuilt = test::run_healthhook({"rebuild", "--database", uri});
  BOOST_REQUIRE_MESSAGE(rebuilt.exit_code == 0, rebuilt.stderr_text);
  auto lite = source.open();
  auto pg = migrate_connect(uri);
  Strings derived{"delivery_outcomes", "processor_state"};
  for (std::string_view table : store::schema::derived_tables()) derived.emplace_back(table);
  migrate_check_same(migrate_dump_pg(pg), migrate_dump_lite(lite, pg), derived);
}

BOOST_AUTO_TEST_SUITE_END()
