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

// How a table's rows are found to be the user's: by the column that names the user (every
// table that holds a user's data has one, spec §11), never through a body, which retention
// may have removed. Three sets are chosen before anything is deleted, so counting and
// erasing agree and the order of the deletes does not matter:
//   their deliveries  inbox rows whose outcome or removed-body record names them (the
//                     processor records whom a delivery names with its outcome), and rows
//                     not applied yet whose body names them (rows/delivery_user.h; such
//                     a row still has its body: retention removes only applied ones);
//   their series      series whose user column names them;
//   their workouts    workout streams whose user column names them, and the workouts of
//                     their stream-fetch jobs.
enum class ErasedBy {
  user,                    // the user column names them
  user_or_their_delivery,  // the user column names them, or one of their deliveries wrote the row
  their_delivery,          // one of their deliveries (keyed by seq)
  their_series,            // samples of their series
  their_workouts,          // stream points and streams of their workouts
};

struct ErasedTable {
  std::string_view table;
  ErasedBy by;
  int group;  // a backend that erases in several transactions empties one group per transaction
};

// Derived rows first, the change feed after them, the inbox last with the records that
// find it (outcomes, removed bodies) and the erasure record, so an interrupted purge
// leaves what is left findable by running it again.
inline constexpr ErasedTable kErasedTables[] = {
    {"samples", ErasedBy::their_series, 0},
    {"series", ErasedBy::their_series, 0},
    {"summaries", ErasedBy::user, 1},
    {"stream_points", ErasedBy::their_workouts, 2},
    {"workout_streams", ErasedBy::their_workouts, 2},
    {"connections", ErasedBy::user, 3},
    {"devices", ErasedBy::user, 3},
    {"lab_orders", ErasedBy::user, 3},
    {"lab_appointments", ErasedBy::user, 3},
    {"lab_results", ErasedBy::user, 3},
    {"lab_parsing_jobs", ErasedBy::user, 3},
    {"backfills", ErasedBy::user, 3},
    {"jobs", ErasedBy::user, 4},
    {"changes", ErasedBy::user, 5},
    // Forwards not sent yet (dead and dropped ones too); one written before the outbox knew
    // its user is found by its delivery.
    {"outbox", ErasedBy::user_or_their_delivery, 5},
    {"users", ErasedBy::user, 6},
    {"removed_bodies", ErasedBy::their_delivery, 7},
    {"delivery_outcomes", ErasedBy::their_delivery, 7},
    {"inbox", ErasedBy::their_delivery, 7},
};
inline constexpr int kErasureInboxGroup = 7;

// Rows that hold someone's data but name no user (migration 009 / PostgreSQL 003 could not
// fill them: the user was only in a body retention had already removed), per table: the
// view both backends have. An erasure cannot find them; purge-user says so.
inline constexpr std::string_view kUnattributedRowsSql = "SELECT table_name, unattributed FROM unattributed_rows";

// The erasure record's row_counts (table `erasures`): rows per table, nothing else.
inline std::string erasure_row_counts(const ErasureReport& report) {
  std::string counts;
  json::ObjectWriter object(counts);
  for (const auto& t : report.tables) object.integer(t.table, t.rows);
  object.close();
  return counts;
}

}  // namespace hh::store
