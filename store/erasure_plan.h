#pragma once
// What `purge-user` erases (store/erasure.h), the same for every backend
// (store/sqlite/sqlite_erasure.cpp, store/postgres/pg_erasure.cpp): the tables, in the
// order they are emptied, each with how its rows are found to be the user's, and the
// erasure record's row counts. Each backend spells the selections in its own SQL.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json_writer.h"
#include "store/erasure.h"

namespace hh::store {

// How a table's rows are found to be the user's. "Their deliveries" are the inbox rows
// that name them (rows/delivery_user.h); the other sets are chosen from those and from
// the user id before anything is deleted, so counting and erasing agree and the order of
// the deletes does not matter.
enum class ErasedBy {
  user_or_their_delivery,  // the user column names them, or one of their deliveries wrote the row
  their_delivery,          // one of their deliveries wrote it (no user column)
  their_series,            // samples and series of their series
  their_workouts,          // their workout streams (a fetched one names no user)
  their_jobs,              // follow-up jobs for them
  their_changes,           // the change feed's rows about their rows or caused by their deliveries
  user,                    // the user column names them
};

struct ErasedTable {
  std::string_view table;
  ErasedBy by;
  int group;  // a backend that erases in several transactions empties one group per transaction
};

// Derived rows first, the change feed after them, the inbox last (with the erasure
// record), so an interrupted purge leaves the inbox rows to find the rest again.
inline constexpr ErasedTable kErasedTables[] = {
    {"samples", ErasedBy::their_series, 0},
    {"series", ErasedBy::their_series, 0},
    {"summaries", ErasedBy::user_or_their_delivery, 1},
    {"stream_points", ErasedBy::their_workouts, 2},
    {"workout_streams", ErasedBy::their_workouts, 2},
    {"connections", ErasedBy::user_or_their_delivery, 3},
    {"devices", ErasedBy::user_or_their_delivery, 3},
    {"lab_orders", ErasedBy::user_or_their_delivery, 3},
    {"lab_appointments", ErasedBy::user_or_their_delivery, 3},
    {"lab_results", ErasedBy::user_or_their_delivery, 3},
    {"lab_parsing_jobs", ErasedBy::their_delivery, 3},
    {"backfills", ErasedBy::user_or_their_delivery, 3},
    {"jobs", ErasedBy::their_jobs, 4},
    {"changes", ErasedBy::their_changes, 5},
    {"outbox", ErasedBy::user_or_their_delivery, 5},  // forwards not sent yet (dead and dropped ones too)
    {"users", ErasedBy::user, 6},
    {"delivery_outcomes", ErasedBy::their_delivery, 7},
    {"inbox", ErasedBy::their_delivery, 7},
};
inline constexpr int kErasureInboxGroup = 7;

// The erasure record's row_counts (table `erasures`): rows per table, nothing else.
inline std::string erasure_row_counts(const ErasureReport& report) {
  std::string counts;
  json::ObjectWriter object(counts);
  for (const auto& t : report.tables) object.integer(t.table, t.rows);
  object.close();
  return counts;
}

}  // namespace hh::store
