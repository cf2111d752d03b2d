#pragma once
// store::StoreFigures on a read-only SQLite connection of its own (WAL: it never blocks the
// writer).
#include <memory>
#include <string>

#include "common/result.h"
#include "store/figures.h"

namespace hh::store {

// Opens the database file at `path` read-only and prepares the figures' statements.
Result<std::unique_ptr<StoreFigures>> open_sqlite_figures(const std::string& path);

}  // namespace hh::store
