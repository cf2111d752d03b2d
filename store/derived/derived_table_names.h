#pragma once
// Which tables are derived from the inbox and can be re-created by replaying it, the same
// in both backends (SQLite 002-derived.sql and 005-identity.sql; PostgreSQL 001-schema.sql).
// Not derived: the inbox and its outcomes, processor_state, jobs (operational state the
// fetcher owns).
#include <array>
#include <span>
#include <string_view>

namespace hh::store {

// Every derived table, children before the tables they refer to (samples before series).
inline std::span<const std::string_view> derived_tables() {
  static constexpr std::array<std::string_view, 15> kTables{
      "samples",     "series",           "summaries",   "workout_streams",  "stream_points", "connections",
      "devices",     "lab_orders",       "lab_appointments", "lab_results", "lab_parsing_jobs", "backfills",
      "users",       "providers",        "changes"};
  return kTables;
}

}  // namespace hh::store
