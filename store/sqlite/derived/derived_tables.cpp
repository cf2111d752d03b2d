#include "store/sqlite/derived/derived_tables.h"

#include <string>

namespace hh::store {

Result<void> clear_derived_tables(sqlite::Connection& db) {
  for (std::string_view table : schema::derived_tables()) {
    // Without a WHERE clause SQLite drops the pages wholesale (truncate optimisation).
    if (auto cleared = db.exec("DELETE FROM " + std::string(table)); !cleared) return cleared;
  }
  return {};
}

}  // namespace hh::store
