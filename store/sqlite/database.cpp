#include "store/sqlite/database.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "store/sqlite/file_access.h"
#include "store/sqlite/migrations.h"

namespace hh::store {

int schema_version() { return static_cast<int>(migrations().size()); }

namespace {

// How long a reader waits for a lock: WAL readers meet one only in rare recovery cases.
constexpr std::chrono::milliseconds kReaderBusyTimeout{5000};

// The migration that gave every table holding a user's data a user column; what it could
// not fill is logged once, right after it (its view says per table).
constexpr std::string_view kUserColumnsMigration = "009-user-columns";

void log_unattributed_rows(sqlite::Connection& db) {
  auto rows = db.prepare("SELECT table_name, unattributed FROM unattributed_rows");
  if (!rows) return;
  std::vector<std::pair<std::string, int64_t>> counts;
  int64_t total = 0;
  (void)rows->for_each_row([&](const sqlite::Statement& row) {
    counts.emplace_back(std::string(row.column_text(0)), row.column_int(1));
    total += row.column_int(1);
  });
  if (total == 0) return;
  // Rows whose user was only in a body that retention had removed: purge-user cannot find them.
  log::Line line(log::Level::warn, "rows_without_user");
  for (const auto& [table, count] : counts) line.num(table, count);
  line.num("total", total);
}

// The schema version of a database opened to be read, `path` naming it in errors; one
// newer than this binary's is refused.
Result<int64_t> readable_schema_version(sqlite::Connection& db, const std::string& path) {
  auto version = db.query_int("PRAGMA user_version");
  if (!version) return fail(version, path);
  if (version->value_or(0) > schema_version()) {
    return fail(path + ": database schema version " + std::to_string(**version) + " is newer than this healthhook");
  }
  return version->value_or(0);
}

}  // namespace

namespace {


}  // namespace

// Another program's file, not a new store or ours: creating our tables beside its own
// would mix two programs' data in one file (and migrations would overwrite its
// user_version). Version 0 with tables in it; or a version set (many programs set one)
// where our first table is not: `inbox` (`deliveries` before migration 004) with its
// `message_id` column (a table of that name alone is common).
Result<void> not_another_programs(sqlite::Connection& db) {
  auto version = db.query_int("PRAGMA user_version");
  if (!version) return fail(version);
  const bool versioned = version->value_or(0) != 0;
  auto theirs = db.query_int(versioned ? "SELECT count(*) = 0 FROM sqlite_master AS m, pragma_table_info(m.name) AS c "
                                         "WHERE m.type = 'table' AND m.name IN ('inbox', 'deliveries') "
                                         "AND c.name = 'message_id'"
                                       : "SELECT count(*) FROM sqlite_master");
  if (!theirs) return fail(theirs);
  if (theirs->value_or(0) == 0) return {};
  if (versioned) {
    return fail(ErrorKind::data, "not a healthhook database: its schema version " + std::to_string(*version.value()) +
                                     " is another program's (it has no inbox table); give healthhook a file of its own");
  }
  return fail(ErrorKind::data, "not a healthhook database: it holds " + std::to_string(*theirs.value()) +
                                   " tables or indexes of another program; give healthhook a file of its own");
}

Result<void> migrate(sqlite::Connection& db) {
  const auto newer = [](int64_t version) {
    return fail("database schema version " + std::to_string(version) + " is newer than this healthhook (" +
                std::to_string(schema_version()) + "); upgrade healthhook");
  };
  // Up to date, the usual case, or newer: no write transaction (the version only grows).
  auto version = db.query_int("PRAGMA user_version");
  if (!version) return fail(version);
  if (version->value_or(0) == schema_version()) return {};
  if (version->value_or(0) > schema_version()) return newer(version->value_or(0));
  if (version->value_or(0) < 0) {
    return fail("database schema version " + std::to_string(version->value_or(0)) +
                " is not healthhook's (another program's file?)");
  }
  for (;;) {
    // The version is read inside the migration's write transaction: two processes opening
    // an older store at once (`serve` and a command) take turns, and the second finds the
    // first's migration done instead of running it again.
    auto txn = sqlite::Transaction::begin(db);
    if (!txn) return fail(txn, "migrating the schema (another healthhook may be doing it; try again)");
    auto now = db.query_int("PRAGMA user_version");
    if (!now) return fail(now);
    const int64_t i = now->value_or(0);
    if (i > schema_version()) return newer(i);
    if (i == schema_version()) return txn->commit();
    if (i == 0) {
      if (auto ours = not_another_programs(db); !ours) return fail(ours);
    }
    const auto& migration = migrations()[static_cast<size_t>(i)];
    auto applied = db.exec(migration.sql);
    if (!applied) return fail(applied, "migration " + std::string(migration.name));
    auto bumped = db.exec("PRAGMA user_version = " + std::to_string(i + 1));
    if (!bumped) return fail(bumped, "migration " + std::string(migration.name));
    auto committed = txn->commit();
    if (!committed) return fail(committed, "migration " + std::string(migration.name));
    if (migration.name == kUserColumnsMigration) log_unattributed_rows(db);
  }
}

// Creates the database file, empty, readable and writable by its owner only, unless it
// exists. SQLite would create it 0644 minus the umask (health data readable by every local
// user under the usual 022); it gives its -wal and -shm files the database file's mode,
// so they are 0600 too.
// A name that is a link to a file not there yet (a dangling symlink) makes the file at the
// link's target, 0600 too: O_EXCL alone would call it existing and leave the creating to
// SQLite.
Result<void> create_private_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    if (std::error_code ec; std::filesystem::exists(path, ec) || ec) return {};  // a file, or a link to one
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);  // through the link
  }
  if (fd < 0) {
    const int error = errno;
    if (error == EACCES || error == EPERM) {
      if (auto refusal = sqlite::access_refusal(path, sqlite::kDatabaseFile, sqlite::Access::read, true)) {
        return fail(*refusal);
      }
    }
    return fail(path + ": cannot create: " + std::strerror(error));
  }
  const bool private_mode = ::fchmod(fd, 0600) == 0;  // the umask may have taken bits we need
  const int error = errno;
  ::close(fd);
  if (!private_mode) return fail(path + ": cannot set mode 0600: " + std::strerror(error));
  return {};
}

Result<void> opened_for_writing(sqlite::Connection& db, const std::string& path) {
  if (sqlite3_db_readonly(db.get(), "main") == 1) {
    return fail(path + ": the database file is read-only; healthhook must be able to write it");
  }
  return {};
}

Result<sqlite::Connection> open_for_writing(const std::string& path, const StoreOptions& options) {
  std::error_code size_error;
  const bool new_file = std::filesystem::file_size(path, size_error) == 0 || size_error;
  if (auto created = create_private_file(path); !created) return fail(created);
  auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_write_create);
  if (!db) return db;
  // SQLite opens a file it may not write (no write permission, the immutable flag, a
  // read-only mount) for reading instead, without an error: `serve` would start, report
  // ready and answer every delivery with 503. Refuse here, naming the file
  // (tests/faults/read_only_database_test.cpp).
  if (auto writable = opened_for_writing(*db, path); !writable) return fail(writable);
  // A new database gets 8 KiB pages (SQLite's default is 4 KiB): measured, not derived.
  // Its b-trees are shallower and appends in order (inbox, change feed) touch half as many
  // pages, which outweighed writing 8 KiB for each entry that lands at a random place in an
  // index (message ids, summary keys); docs/decisions/007-8kib-pages.md has the
  // measurements. Only a file without pages takes it: an existing database keeps its
  // page size (SQLite cannot change it in WAL mode), and the code reads it from the file.
  // A new file also gets auto_vacuum = INCREMENTAL, so the space of removed bodies
  // (retention) and erased users goes back to the file system with PRAGMA
  // incremental_vacuum (docs/erasure-and-retention.md, "Retention", says how to convert an older database). Only a
  // new file: on an existing one the pragma needs the write lock and changes nothing.
  // The busy timeout first: auto_vacuum and journal_mode on a new file take a lock, and a
  // second process creating the store at the same moment waits for the first instead of
  // failing at once.
  db->wait_when_busy(std::chrono::milliseconds(options.busy_timeout_ms));
  // The file itself is writable (checked above): a failure to read or configure it is
  // usually a folder healthhook may not write, where SQLite must create -wal and -shm.
  const auto failed = [&](const Result<void>& error) {
    const int code = db->last_error_code() & 0xff;
    const bool folder = code == SQLITE_CANTOPEN || code == SQLITE_READONLY;
    return fail(error, path + (folder ? " (its folder must be writable: SQLite keeps -wal and -shm files next to it)" : ""));
  };
  // Another program's file is refused before anything in it changes (WAL mode would stay in
  // its header, with -wal and -shm files beside it).
  if (!new_file) {
    if (auto ours = not_another_programs(*db); !ours) return failed(ours);
  }
  const std::string pragmas = "PRAGMA page_size = " + std::to_string(kNewDatabasePageSize) +
                              (new_file ? ";PRAGMA auto_vacuum = INCREMENTAL;" : ";") +
                              "PRAGMA journal_mode = WAL;"
                              "PRAGMA synchronous = " + std::string(options.sqlite.synchronous_full ? "FULL" : "NORMAL") +
                              ";PRAGMA cache_size = -" + std::to_string(options.sqlite.cache_size_mib * 1024) +
                              ";PRAGMA temp_store = MEMORY;";
  if (auto configured = db->exec(pragmas); !configured) return failed(configured);
  {
    auto mode = db->prepare("PRAGMA journal_mode");
    if (!mode) return fail(mode, path);
    auto row = mode->step();
    if (!row || !*row || mode->column_text(0) != "wal") {
      return fail(path + ": cannot switch to WAL mode (is the file on a network file system?)");
    }
  }
  auto migrated = migrate(*db);
  if (!migrated) return fail(migrated, path);
  if (options.sqlite.max_database_mib > 0) {
    const int64_t page_size = db->query_int("PRAGMA page_size")->value_or(4096);
    auto capped = db->exec("PRAGMA max_page_count = " + std::to_string(options.sqlite.max_database_mib * 1024 * 1024 / page_size));
    if (!capped) return fail(capped, path);
  }
  return db;
}

namespace {

// A reader's first statement opens the file, and in WAL mode the -shm file beside it, which
// SQLite creates or writes even to read: it said only "unable to open database file" or
// "attempt to write a readonly database" (query and capture on a folder this user may not
// write; tests/faults/read_only_database_test.cpp). Says which file and what is wrong.
bool cannot_open_here(const sqlite::Connection& db) {
  const int code = db.last_error_code() & 0xff;
  return code == SQLITE_CANTOPEN || code == SQLITE_READONLY;
}

Error unreadable(ErrorKind kind, const std::string& path) {
  if (auto refusal = sqlite::access_refusal(path, sqlite::kDatabaseFile, sqlite::Access::read, false)) {
    return fail(kind, *refusal);
  }
  return fail(kind, path + ": the database cannot be read: its folder (or its -shm file) is not writable by this "
                           "user, and SQLite writes a -shm file beside it even to read it");
}

}  // namespace

Result<sqlite::Connection> open_for_reading(const std::string& path) {
  auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_only);
  if (!db) return db;
  db->wait_when_busy(kReaderBusyTimeout);
  auto configured = db->exec("PRAGMA cache_size = -16384;");
  if (!configured) return cannot_open_here(*db) ? unreadable(configured.error_kind(), path) : fail(configured, path);
  auto version = readable_schema_version(*db, path);
  if (!version) return cannot_open_here(*db) ? unreadable(version.error_kind(), path) : fail(version);
  if (*version == 0) return fail(path + ": not a healthhook database (no schema)");
  // Another program's file that sets a schema version of its own: said so, not as the
  // first query's "no such table".
  if (auto ours = not_another_programs(*db); !ours) return fail(ours, path);
  return db;
}

Result<void> check_store_path_kind(const std::string& path) {
  // A FIFO or a device is refused unopened, as sqlite::Connection::open() does: check-config
  // waited on a FIFO for ever, and called /dev/null an empty store.
  const auto kind = sqlite::not_a_regular_file(path);
  if (!kind) return {};
  return fail(ErrorKind::data, path + " is " + std::string(*kind) + (*kind == sqlite::kFolder ? "" : ", not a database file"));
}

Result<void> check_store_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return {};
  if (auto kind = check_store_path_kind(path); !kind) return kind;
  if (std::filesystem::file_size(path, ec) == 0) return {};
  auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_only);
  if (!db) return fail(db, path);
  auto version = readable_schema_version(*db, path);
  if (!version) return fail(version);
  if (*version > 0) return {};
  auto tables = db->query_int("SELECT count(*) FROM sqlite_master");
  if (!tables) return fail(tables, path);
  if (tables->value_or(0) == 0) return {};  // a database with nothing in it yet
  return fail(path + ": not a healthhook database (it holds tables of another program)");
}

}  // namespace hh::store
