#pragma once
// Opening the database file: one write connection (owned by the writer thread) and any
// number of read connections (WAL lets them read while the writer works).
#include <string>

#include "common/result.h"
#include "store/sqlite/connection.h"
#include "store/store_options.h"

namespace hh::store {


// The page size a database created by open_for_writing gets (database.cpp says why);
// an existing file keeps its own.
inline constexpr int kNewDatabasePageSize = 8192;

// Opens (creating if needed) and migrates the database for writing.
Result<sqlite::Connection> open_for_writing(const std::string& path, const StoreOptions& options);

// Opens an existing database read-only. Fails if it does not exist or is not migrated.
Result<sqlite::Connection> open_for_reading(const std::string& path);

// What open_for_writing would find at `path`, checked read-only: nothing yet (no file, an
// empty one, a database without a table), or a healthhook schema this binary reads; else
// why not (a folder, not SQLite, another program's tables, a newer schema).
Result<void> check_store_file(const std::string& path);
// Only what `path` names, looked at without opening it: nothing there or a regular file
// (a link to one too); else "PATH is a FIFO, not a database file" (a device, a folder…).
Result<void> check_store_path_kind(const std::string& path);

// Fails when `db` is another program's file: tables of its own at schema version 0, or a
// version set without healthhook's inbox. The admin commands' connections check it too.
Result<void> not_another_programs(sqlite::Connection& db);

// Fails, naming `path`, when SQLite opened `db` for reading only though writing was asked
// (no write permission, the immutable flag, a read-only mount: SQLite falls back without
// an error, and the first write then said "attempt to write a readonly database" alone).
Result<void> opened_for_writing(sqlite::Connection& db, const std::string& path);

// Applies pending migrations; refuses a database newer than this binary.
Result<void> migrate(sqlite::Connection& db);

// The schema version this binary writes (number of migrations).
int schema_version();

}  // namespace hh::store
