#pragma once
// store::ReadStore on a read-only SQLite connection of its own (WAL: it reads while the
// writer commits, and never blocks it).
#include <memory>
#include <string>

#include "common/result.h"
#include "store/read_store.h"

namespace hh::store {

// Opens the database file at `path` read-only (store/sqlite/database.h: open_for_reading).
Result<std::unique_ptr<ReadStore>> open_sqlite_read_store(const std::string& path);

}  // namespace hh::store
