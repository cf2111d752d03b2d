#pragma once
// Helpers the PostgreSQL derived writer's parts share: named statements prepared once per
// connection, and PostgreSQL array literals ('{…}', text format) that carry a whole batch
// of rows in one parameter, so a batch is one statement and one round trip
// (INSERT … SELECT … FROM unnest($1::bigint[], …)).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/postgres/connection.h"

namespace hh::store {

// Prepares `sql` as `name` unless the connection has it already (a writer created again
// on the same connection). Statement names are fixed per statement, so an existing one
// holds the same SQL.
Result<void> prepare_once(pg::Connection& db, const std::string& name, std::string_view sql);

// New series and change ids are max(id) + 1, as SQLite's rowids (decision 030). Two
// sessions inserting at once would compute the same id, and the unique violation would
// blame a valid delivery (ErrorKind::data). So a transaction calls this before each
// statement that takes such ids: a transaction-level advisory lock (kNewIdsLock), held
// to commit, so the next session's max() runs after that commit and counts its ids, and
// one transaction's ids are contiguous and in commit order (decision 050, step 2). It is
// a statement of its own: in READ COMMITTED a statement sees what was committed when it
// began, so a max() in the statement that waited for the lock would miss the holder's
// ids. Taken again in the same transaction it costs a round trip and nothing else.
// prepare_lock_new_ids() prepares its statement once per connection (a writer's create()).
Result<void> prepare_lock_new_ids(pg::Connection& db);
Result<void> lock_new_ids(pg::Connection& db);

// A JSON scalar as text, for a jsonb parameter (samples.value, series.source_id): an
// integer as is, a float with a fraction or exponent (so 72.0 stays apart from 72), a
// string JSON-quoted. Clears `out` first; false for monostate (SQL NULL).
bool json_scalar(std::string& out, const rows::SampleValue& value);

// Builds one array literal element by element: {1,NULL,"a \"b\""}.
class ArrayLiteral {
 public:
  void clear() {
    text_.assign("{");
    size_ = 0;
    values_ = 0;
  }
  void null() { separator().append("NULL"); }
  void integer(int64_t value);
  void integer(std::optional<int64_t> value) { value ? integer(*value) : null(); }
  void real(double value);
  void real(std::optional<double> value) { value ? real(*value) : null(); }
  // Quoted, with backslashes and double quotes escaped.
  void text(std::string_view value);
  void text(std::optional<std::string_view> value) { value ? text(*value) : null(); }
  // The literal, closed ('}' appended once).
  const std::string& finish() {
    text_.push_back('}');
    return text_;
  }
  // Adds the literal (closed) to `params`, or NULL when every element is NULL: in a
  // statement's multi-argument unnest() a NULL array comes back as NULLs, padded to the
  // others' length, without the server parsing a literal of NULLs element by element.
  // For every array of such an unnest() but the one that is never NULL.
  void add_to(pg::Params& params) {
    if (all_null()) {
      params.add_null();
    } else {
      params.add(finish());
    }
  }
  size_t size() const { return size_; }
  // Every element NULL (or none): add_to() sends NULL.
  bool all_null() const { return values_ == 0; }

 private:
  std::string& separator() {
    if (size_++ > 0) text_.push_back(',');
    return text_;
  }
  std::string text_ = "{";
  size_t size_ = 0;
  size_t values_ = 0;  // elements that are not NULL
};

}  // namespace hh::store
