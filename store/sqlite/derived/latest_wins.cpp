#include "store/sqlite/derived/latest_wins.h"

#include <algorithm>
#include <span>
#include <string>

namespace hh::store {

namespace {

bool listed(std::span<const std::string_view> columns, std::string_view column) {
  return std::find(columns.begin(), columns.end(), column) != columns.end();
}

const schema::KeptWhenNull* kept_when_null(const schema::LatestWinsSpec& spec, std::string_view column) {
  for (const auto& kept : spec.kept_when_null) {
    if (kept.column == column) return &kept;
  }
  return nullptr;
}

// The parameter a value column is bound to: keys ?1…, then values in order.
std::string param_of(const schema::LatestWinsSpec& spec, std::string_view column) {
  const auto at = std::find(spec.values.begin(), spec.values.end(), column);
  return "?" + std::to_string(spec.keys.size() + static_cast<size_t>(at - spec.values.begin()) + 1);
}

}  // namespace

Result<LatestWins> LatestWins::create(sqlite::Connection& db, const schema::LatestWinsSpec& spec) {
  // Parameters: keys ?1…, then values in order; every statement uses the same numbers.
  std::string columns, params, assignments, where, kept_assignments, index_unchanged;
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
    const std::string param = "?" + std::to_string(index);
    columns += ", ", params += ", ";
    columns += value;
    params += param;
    // What the update sets the column to.
    std::string updated = param;
    if (const auto* kept = kept_when_null(spec, value)) {
      updated = "CASE WHEN " + param + " IS NULL AND " + param_of(spec, kept->if_column) + " = " +
                std::string(kept->literal) + " THEN " + std::string(value) + " ELSE " + param + " END";
    }
    if (!assignments.empty()) assignments += ", ";
    assignments += std::string(value) + " = " + updated;
    if (listed(spec.indexed, value)) {
      index_unchanged += " AND " + std::string(value) + " IS " + updated;  // IS: NULL equals NULL
    } else {
      if (!kept_assignments.empty()) kept_assignments += ", ";
      kept_assignments += std::string(value) + " = " + updated;
    }
    if (value == "seq") seq_index = index;
  }
  if (seq_index == 0) return fail(std::string(spec.table) + ": no seq column");
  // Constants: in the insert, and in both updates unless the insert alone sets them.
  for (const schema::FixedValue& fixed : spec.fixed) {
    const std::string set = std::string(fixed.column) + " = " + std::string(fixed.literal);
    columns += ", " + std::string(fixed.column), params += ", " + std::string(fixed.literal);
    assignments += ", " + set;
    kept_assignments += (kept_assignments.empty() ? "" : ", ") + set;
  }
  for (const schema::FixedValue& fixed : spec.insert_only) {
    columns += ", " + std::string(fixed.column), params += ", " + std::string(fixed.literal);
  }
  const std::string table(spec.table);
  const std::string newer = " AND seq < ?" + std::to_string(seq_index);
  auto written = create(db, "INSERT INTO " + table + " (" + columns + ") VALUES (" + params + ") ON CONFLICT DO NOTHING",
                        "UPDATE " + table + " SET " + assignments + " WHERE " + where + newer);
  if (!written || spec.indexed.empty()) return written;
  auto keeping_index =
      db.prepare("UPDATE " + table + " SET " + kept_assignments + " WHERE " + where + newer + index_unchanged);
  if (!keeping_index) return fail(keeping_index);
  written->update_keeping_index_ = std::move(*keeping_index);
  return written;
}

Result<LatestWins> LatestWins::create(sqlite::Connection& db, std::string_view insert_sql,
                                      std::string_view update_sql) {
  auto insert = db.prepare(insert_sql);
  if (!insert) return fail(insert);
  auto update = db.prepare(update_sql);
  if (!update) return fail(update);
  return LatestWins(db, std::move(*insert), std::move(*update));
}

}  // namespace hh::store
