#include "store/sqlite/derived/derived_tables.h"

#include <array>
#include <string>

namespace hh::store {

std::span<const std::string_view> derived_tables() {
  static constexpr std::array<std::string_view, 15> kTables{
      "samples",     "series",           "summaries",   "workout_streams",  "stream_points", "connections",
      "devices",     "lab_orders",       "lab_appointments", "lab_results", "lab_parsing_jobs", "backfills",
      "users",       "providers",        "changes"};
  return kTables;
}

Result<void> clear_derived_tables(sqlite::Connection& db) {
  for (std::string_view table : derived_tables()) {
    // Without a WHERE clause SQLite drops the pages wholesale (truncate optimisation).
    if (auto cleared = db.exec("DELETE FROM " + std::string(table)); !cleared) return cleared;
  }
  return {};
}

}  // namespace hh::store
