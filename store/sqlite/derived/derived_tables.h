#pragma once
// Emptying the derived tables (store/schema/tables.h says which they are) of
// a SQLite store, for `rebuild`.
#include "common/result.h"
#include "store/schema/tables.h"
#include "store/sqlite/connection.h"

namespace hh::store {

// Deletes every row of every derived table, on the caller's transaction.
Result<void> clear_derived_tables(sqlite::Connection& db);

}  // namespace hh::store
