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
// Lifetime: the connection must outlive this object. Used on the thread that owns it.
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/derived/derived_parts.h"
#include "store/postgres/connection.h"
#include "store/schema/record_rows.h"

namespace hh::store {

// A row's fields as a statement's parameters, in order (schema::bind_record's Binder).
class PgBinder {
 public:
  explicit PgBinder(pg::Params& params) : params_(params) {}
  void add(std::string_view text) { params_.add(text); }
  void add(std::optional<std::string_view> text) { params_.add(text); }
  void add(int64_t value) { params_.add(value); }
  void add(std::optional<int64_t> value) { params_.add(value); }
  // A flag as the tables keep it: 0/1 (bigint, as in SQLite), NULL when absent.
  void add(std::optional<bool> flag) {
    if (flag) {
      params_.add(int64_t{*flag ? 1 : 0});
    } else {
      params_.add_null();
    }
  }

 private:
  pg::Params& params_;
};

class PgLatestWins {
 public:
  // Builds the statement from column names (schema::latest_wins_spec); parameters are the
  // keys, then the values, in order. The prepared statement is named after the table.
  static Result<PgLatestWins> create(pg::Connection& db, const schema::LatestWinsSpec& spec);
  // For rows whose update rule is not "copy every value" (workout_streams): the SQL given
  // directly; it must return one boolean column (inserted) for a written row, none else.
  static Result<PgLatestWins> create(pg::Connection& db, const std::string& name, std::string_view sql);

  Result<WriteOutcome> write(const pg::Params& params);

  // A row of the record table D (store/schema/record_tables.h).
  template <typename D>
  Result<WriteOutcome> write_record(const typename D::Written& row, int64_t seq) {
    pg::Params params;
    PgBinder binder(params);
    schema::bind_record<D>(binder, row, seq);
    return write(params);
  }

 private:
  PgLatestWins(pg::Connection& db, std::string name) : db_(&db), name_(std::move(name)) {}
  pg::Connection* db_;
  std::string name_;
};

}  // namespace hh::store
