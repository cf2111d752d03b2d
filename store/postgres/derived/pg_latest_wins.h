#pragma once
// The latest-wins write of one keyed, versioned row on PostgreSQL (spec §9), one statement
// and one round trip:
//
//   INSERT INTO t AS cur (k…, v…) VALUES ($1, …) ON CONFLICT (k…)
//     DO UPDATE SET v… = excluded.v… WHERE cur.seq < excluded.seq
//     RETURNING (xmax = 0) AS inserted
//
// A returned row says inserted (xmax 0: no earlier version was locked) or updated; no
// row says the stored version is as new or newer (stale). The same rule as SQLite's
// two statements (store/sqlite/derived/latest_wins.h): a row is replaced only by a
// higher seq. SQLite's third statement, which spares an unchanged index entry, has no
// PostgreSQL counterpart: an update there writes a new row version either way.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/derived/derived_parts.h"
#include "store/derived/record_columns.h"
#include "store/postgres/connection.h"

namespace hh::store {

class PgLatestWins {
 public:
  // Builds the statement from column names (record_columns.h); parameters are the keys,
  // then the values, in order. `name` names the prepared statement.
  static Result<PgLatestWins> create(pg::Connection& db, const std::string& name, const LatestWinsSpec& spec);
  // For rows whose update rule is not "copy every value" (workout_streams): the SQL given
  // directly; it must return one boolean column (inserted) for a written row, none else.
  static Result<PgLatestWins> create(pg::Connection& db, const std::string& name, std::string_view sql);

  Result<WriteOutcome> write(const pg::Params& params);

 private:
  PgLatestWins(pg::Connection& db, std::string name) : db_(&db), name_(std::move(name)) {}
  pg::Connection* db_;
  std::string name_;
};

}  // namespace hh::store
