#pragma once
// The latest-wins write of one keyed, versioned row, and whether it inserted, replaced or
// lost. Two statements prepared once, sharing their parameter numbers:
//
//   INSERT INTO t (k…, v…, seq) VALUES (?1, …) ON CONFLICT DO NOTHING
//   UPDATE t SET v… = ?…, seq = ?s WHERE k… = ?… AND seq < ?s      -- only when the insert hit a key
//
// This is the same rule as `INSERT … ON CONFLICT DO UPDATE … WHERE excluded.seq > t.seq`
// (a row is replaced only by a higher seq), split in two so the change feed can tell an
// insert from an update: sqlite3_changes() after each statement says which one wrote.
// It costs about what the one-statement upsert costs (a replaced key is looked up twice,
// on a page already in cache).
//
// Value columns a secondary index holds (`indexed`, e.g. summaries' user_id and
// calendar_date) get a third statement, tried before the full update:
//
//   UPDATE t SET <the other values> WHERE k… AND seq < ?s AND i… IS ?…
//
// SQLite rewrites an index entry whenever the UPDATE sets one of its columns, even to the
// value it had, and so dirties a random index page that goes to the WAL, its sync and the
// checkpoint. A newer version of a summary nearly always keeps its user and date, so this
// statement leaves the index alone; only when it changes nothing (an indexed value moved,
// or the version is stale) does the full update run
// (docs/decisions/016-summary-updates-skip-index.md).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/derived/derived_parts.h"
#include "store/derived/record_columns.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class LatestWins {
 public:
  // Builds the statements from column names (LatestWinsSpec, record_columns.h); keys are
  // bound first (?1…).
  static Result<LatestWins> create(sqlite::Connection& db, const LatestWinsSpec& spec);
  // For rows whose update rule is not "copy every value" (workout_streams): the two SQL
  // texts given directly, with the same parameter numbers.
  static Result<LatestWins> create(sqlite::Connection& db, std::string_view insert_sql, std::string_view update_sql);

  // `bind(sqlite::Statement&)` binds every parameter; it is called for the insert and, when
  // the key exists, again for the update.
  template <typename Bind>
  Result<WriteOutcome> write(Bind&& bind) {
    bind(insert_);
    if (auto done = insert_.run(); !done) return fail(done.error());
    if (db_->changes() > 0) return WriteOutcome::inserted;
    if (update_keeping_index_) {
      bind(*update_keeping_index_);
      if (auto done = update_keeping_index_->run(); !done) return fail(done.error());
      if (db_->changes() > 0) return WriteOutcome::updated;
    }
    bind(update_);
    if (auto done = update_.run(); !done) return fail(done.error());
    return db_->changes() > 0 ? WriteOutcome::updated : WriteOutcome::stale;
  }

 private:
  LatestWins(sqlite::Connection& db, sqlite::Statement insert, sqlite::Statement update)
      : db_(&db), insert_(std::move(insert)), update_(std::move(update)) {}
  sqlite::Connection* db_;
  sqlite::Statement insert_;
  sqlite::Statement update_;
  std::optional<sqlite::Statement> update_keeping_index_;  // only for a spec with `indexed`
};

}  // namespace hh::store
