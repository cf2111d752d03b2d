#include "store/postgres/derived/pg_latest_wins.h"

#include <algorithm>

#include "store/postgres/derived/pg_statements.h"

namespace hh::store {

Result<PgLatestWins> PgLatestWins::create(pg::Connection& db, const schema::LatestWinsSpec& spec) {
  const std::string name = "hh_derived_" + std::string(spec.write.empty() ? spec.table : spec.write);
  std::string columns, params, keys, assignments;
  int index = 0;
  const auto add_column = [&](std::string_view column) {
    if (index++ > 0) columns += ", ", params += ", ";
    columns += column;
    params += "$" + std::to_string(index);
  };
  bool has_seq = false;
  for (std::string_view key : spec.keys) {
    add_column(key);
    if (!keys.empty()) keys += ", ";
    keys += key;
  }
  for (std::string_view value : spec.values) {
    add_column(value);
    if (!assignments.empty()) assignments += ", ";
    const std::string column(value);
    const auto kept = std::find_if(spec.kept_when_null.begin(), spec.kept_when_null.end(),
                                   [&](const schema::KeptWhenNull& k) { return k.column == value; });
    assignments += column + " = ";
    if (kept == spec.kept_when_null.end()) {
      assignments += "excluded." + column;
    } else {  // a written NULL keeps the row's value when the written if_column is the literal
      assignments += "CASE WHEN excluded." + column + " IS NULL AND excluded." + std::string(kept->if_column) +
                     " = " + std::string(kept->literal) + " THEN cur." + column + " ELSE excluded." + column + " END";
    }
    has_seq = has_seq || value == "seq";
  }
  if (!has_seq) return fail(std::string(spec.table) + ": no seq column");
  // Constants: in the insert, and in the update unless the insert alone sets them.
  for (const schema::FixedValue& fixed : spec.fixed) {
    columns += ", " + std::string(fixed.column), params += ", " + std::string(fixed.literal);
    assignments += ", " + std::string(fixed.column) + " = excluded." + std::string(fixed.column);
  }
  for (const schema::FixedValue& fixed : spec.insert_only) {
    columns += ", " + std::string(fixed.column), params += ", " + std::string(fixed.literal);
  }
  return create(db, name,
                "INSERT INTO " + std::string(spec.table) + " AS cur (" + columns + ") VALUES (" + params +
                    ") ON CONFLICT (" + keys + ") DO UPDATE SET " + assignments +
                    " WHERE cur.seq < excluded.seq RETURNING (xmax = 0) AS inserted");
}

Result<PgLatestWins> PgLatestWins::create(pg::Connection& db, const std::string& name, std::string_view sql) {
  if (auto prepared = prepare_once(db, name, sql); !prepared) return fail(prepared);
  return PgLatestWins(db, name);
}

Result<WriteOutcome> PgLatestWins::write(const pg::Params& params) {
  auto rows = db_->run(name_, params);
  if (!rows) return fail(rows);
  if (rows->empty()) return WriteOutcome::stale;
  return rows->boolean(0, 0) ? WriteOutcome::inserted : WriteOutcome::updated;
}

}  // namespace hh::store
