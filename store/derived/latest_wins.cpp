#include "store/derived/latest_wins.h"

namespace hh::store {

Result<LatestWins> LatestWins::create(sqlite::Connection& db, const LatestWinsSpec& spec) {
  std::string columns, params, assignments, where;
  int index = 0;
  for (std::string_view key : spec.keys) {
    ++index;
    if (!columns.empty()) columns += ", ", params += ", ", where += " AND ";
    columns += key;
    params += "?" + std::to_string(index);
    where += std::string(key) + " = ?" + std::to_string(index);
  }
  int seq_index = 0;
  for (std::string_view value : spec.values) {
    ++index;
    columns += ", ", params += ", ";
    columns += value;
    params += "?" + std::to_string(index);
    if (!assignments.empty()) assignments += ", ";
    assignments += std::string(value) + " = ?" + std::to_string(index);
    if (value == "seq") seq_index = index;
  }
  if (seq_index == 0) return fail(std::string(spec.table) + ": no seq column");
  const std::string table(spec.table);
  return create(db, "INSERT INTO " + table + " (" + columns + ") VALUES (" + params + ") ON CONFLICT DO NOTHING",
                "UPDATE " + table + " SET " + assignments + " WHERE " + where + " AND seq < ?" +
                    std::to_string(seq_index));
}

Result<LatestWins> LatestWins::create(sqlite::Connection& db, std::string_view insert_sql,
                                      std::string_view update_sql) {
  auto insert = db.prepare(insert_sql);
  if (!insert) return fail(insert.error());
  auto update = db.prepare(update_sql);
  if (!update) return fail(update.error());
  return LatestWins(db, std::move(*insert), std::move(*update));
}

std::string_view change_op(WriteOutcome outcome) {
  switch (outcome) {
    case WriteOutcome::inserted: return "insert";
    case WriteOutcome::updated: return "update";
    case WriteOutcome::stale: return "";
  }
  return "";
}

}  // namespace hh::store
