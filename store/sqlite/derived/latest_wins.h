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
#include "store/schema/record_rows.h"
#include "store/sqlite/connection.h"

namespace hh::store {

// Binds a row's fields in order (?1, ?2, …), text static: the parser's views stay live
// until the statement is reset (schema::bind_record's Binder).
class SqliteBinder {
 public:
  explicit SqliteBinder(sqlite::Statement& statement) : statement_(statement) {}
  void add(std::string_view text) { statement_.bind_static(++index_, text); }
  void add(std::optional<std::string_view> text) {
    if (text) {
      statement_.bind_static(++index_, *text);
    } else {
      statement_.bind_null(++index_);
    }
  }
  void add(int64_t value) { statement_.bind(++index_, value); }
  void add(std::optional<int64_t> value) { statement_.bind(++index_, value); }
  void add(std::optional<bool> flag) {
    if (flag) {
      statement_.bind(++index_, int64_t{*flag ? 1 : 0});
    } else {
      statement_.bind_null(++index_);
    }
  }

 private:
  sqlite::Statement& statement_;
  int index_ = 0;
};

class LatestWins {
 public:
  // Builds the statements from column names (schema::latest_wins_spec); keys are bound
  // first (?1…).
  static Result<LatestWins> create(sqlite::Connection& db, const schema::LatestWinsSpec& spec);
  // For rows whose update rule is not "copy every value" (workout_streams): the two SQL
  // texts given directly, with the same parameter numbers.
  static Result<LatestWins> create(sqlite::Connection& db, std::string_view insert_sql, std::string_view update_sql);

  // A row of the record table D (store/schema/record_tables.h).
  template <typename D>
  Result<WriteOutcome> write_record(const typename D::Written& row, int64_t seq) {
    return write([&](sqlite::Statement& s) {
      SqliteBinder binder(s);
      schema::bind_record<D>(binder, row, seq);
    });
  }

  // `bind(sqlite::Statement&)` binds every parameter; it is called for the insert and, when
  // the key exists, again for the update.
  template <typename Bind>
  Result<WriteOutcome> write(Bind&& bind) {
    bind(insert_);
    if (auto done = insert_.run(); !done) return fail(done);
    if (db_->changes() > 0) return WriteOutcome::inserted;
    if (update_keeping_index_) {
      bind(*update_keeping_index_);
      if (auto done = update_keeping_index_->run(); !done) return fail(done);
      if (db_->changes() > 0) return WriteOutcome::updated;
    }
    bind(update_);
    if (auto done = update_.run(); !done) return fail(done);
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
