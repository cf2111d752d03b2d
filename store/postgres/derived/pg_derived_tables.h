#pragma once
// Emptying the derived tables (store/schema/tables.h says which they are) of
// a PostgreSQL store, for `rebuild`: one TRUNCATE of them all, RESTART IDENTITY so that
// series and change ids start again at 1, as SQLite's rowids do after its DELETEs, and a
// rebuild re-creates the same change ids. Transactional; it locks the tables (ACCESS
// EXCLUSIVE) until the caller's transaction ends. After it, the writer must
// forget_cached_ids().
#include "common/result.h"
#include "store/postgres/connection.h"

namespace hh::store {

Result<void> clear_derived_tables(pg::Connection& db);

}  // namespace hh::store
