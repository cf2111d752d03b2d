#include "store/postgres/derived/pg_derived_tables.h"

#include <string>

#include "store/schema/tables.h"

namespace hh::store {

Result<void> clear_derived_tables(pg::Connection& db) {
  std::string sql = "TRUNCATE ";
  bool first = true;
  for (std::string_view table : schema::derived_tables()) {
    if (!first) sql += ", ";
    first = false;
    sql += table;
  }
  return db.exec(sql + " RESTART IDENTITY");
}

}  // namespace hh::store
