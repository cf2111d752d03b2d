#pragma once
// The read side's factories, beside the write side's (store/open_store.h): each opens a
// reader of its own on the store that `database = …` names (store/database_location.h),
// which must exist and hold a healthhook schema no newer than this binary's. Readers never
// create or migrate anything.
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/database_location.h"
#include "store/figures.h"
#include "store/follow_up_reads.h"
#include "store/read_store.h"

namespace hh::store {

// The read API's and the command line's queries (store/read_store.h).
Result<std::unique_ptr<ReadStore>> open_read_store(const Database& database);
// The figures of /metrics (store/figures.h).
Result<std::unique_ptr<StoreFigures>> open_figures(const Database& database);
// What the follow-up fetcher reads beside the writer (store/follow_up_reads.h).
Result<std::unique_ptr<FollowUpReads>> open_follow_up_reads(const Database& database);

// What `serve` would find in the SQLite file `path`, checked read-only: nothing yet (no
// file, an empty one, or a database without a table: `serve` creates the schema), or a
// healthhook schema this binary reads. Else why not: a folder, not a SQLite file, another
// program's tables, a newer schema. For `check-config`.
Result<void> check_sqlite_store_file(const std::string& path);
// The first part of that, without opening anything: `path` is not there, or is a regular
// file (or a link to one); else it names what it is ("PATH is a FIFO, not a database file").
Result<void> check_sqlite_store_path(const std::string& path);
// The same for a PostgreSQL store: connected to as `serve` would (address, credentials,
// database), with no schema yet or one this binary reads.
Result<void> check_postgres_store(const Database& database);

// The team a stored user was registered under; empty when the user, the team or the store
// is not there. Callers decide what a team without its own settings means.
std::string stored_team_of(const Database& database, std::string_view user_id);

}  // namespace hh::store
