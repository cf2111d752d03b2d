#pragma once
// What `purge-user` erases (store/erasure.h), the same for every backend
// (store/sqlite/sqlite_erasure.cpp, store/postgres/pg_erasure.cpp): the tables, in the
// order they are emptied (schema::erased_tables(), from each table's description), how a
// table's rows are found to be the user's, and the erasure record's row counts. Each
// backend fills the selections in its own SQL.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json_writer.h"
#include "store/erasure.h"
#include "store/schema/dialect.h"
#include "store/schema/tables.h"

namespace hh::store {

// How a table's rows are found to be the user's: by the column that names the user (every
// table that holds a user's data has one, and its description says how it is erased:
// store/schema/tables.h), never through a body, which retention may have removed. Three
// sets are chosen before anything is deleted, so counting and erasing agree and the order
// of the deletes does not matter:
//   their deliveries  inbox rows a column records as theirs (their outcome, removed-body
//                     record or change-feed rows), and rows not applied yet or invalid
//                     whose body names them: store/delivery_users.h, which the console's
//                     search by user follows too;
//   their series      series whose user column names them;
//   their workouts    workout streams whose user column names them, and the workouts of
//                     their stream-fetch jobs.
// Each backend fills the sets into temporary tables of its erasure's connection
// (erase_seqs, erase_series, erase_workouts); a table's rows are those this condition
// picks, with the user id as ?1.
using schema::ErasedBy;
using schema::kErasureInboxGroup;

inline std::string erased_where(ErasedBy by, schema::Dialect dialect) {
  const std::string temp = dialect == schema::Dialect::postgres ? "pg_temp." : "temp.";
  switch (by) {
    case ErasedBy::user: return schema::spell("user_id = ?1::text", dialect);
    case ErasedBy::user_or_their_delivery:
      return schema::spell("user_id = ?1::text OR seq IN (SELECT seq FROM " + temp + "erase_seqs)", dialect);
    case ErasedBy::their_delivery: return "seq IN (SELECT seq FROM " + temp + "erase_seqs)";
    case ErasedBy::their_series: return "series_id IN (SELECT series_id FROM " + temp + "erase_series)";
    case ErasedBy::their_workouts: return "workout_id IN (SELECT workout_id FROM " + temp + "erase_workouts)";
    case ErasedBy::none:
    case ErasedBy::kept: break;
  }
  return "1 = 0";
}

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
