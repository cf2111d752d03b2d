#pragma once
// The read statements of a record table, built from its description (record_tables.h) for
// a dialect, once per process (the callers keep them in statics):
//
//   listing: SELECT <its read fields> FROM <from> WHERE t.<filter> = ?1 AND …
//            ORDER BY <key, text bytewise>
//   by key:  SELECT … FROM <from> WHERE t.<key 1> = ?1 AND …   (a change-feed key's parts)
//
// A listing is one statement per combination of the filters given (a bit per filter of
// D::filters, in order), its parameters the given ones in that order. Not one statement
// with `(?1 IS NULL OR t.<filter> = ?1)`: prepared once, its plan cannot know which are
// given, so SQLite scanned the whole table for every listing, a user's included (the
// per-user indexes of 005-identity.sql went unused). A lookup's key parts are bound in key
// order (split from the change-feed key: the key columns joined with '/',
// store/sqlite/migrations/002-derived.sql).
#include <cstddef>
#include <string>
#include <type_traits>

#include "store/schema/dialect.h"
#include "store/schema/record_fields.h"

namespace hh::store::schema {

// "SELECT t.a, t.b, j.c FROM <from> ": the fields read, in order.
template <typename D>
std::string record_select() {
  std::string sql = "SELECT ";
  bool first = true;
  for_each_field(D::fields, [&](const auto& field) {
    if constexpr (!std::decay_t<decltype(field)>::read_into) return;
    if (!first) sql += ", ";
    first = false;
    if (!field.is_joined) sql += "t.";
    sql += field.name;
  });
  return sql + " FROM " + std::string(D::from) + " ";
}

// The listing statements of D: 2^(number of filters), indexed by which filters are given.
template <typename D>
constexpr size_t listing_count() {
  return size_t{1} << D::filters.size();
}

// The listing with the filters whose bits are set in `given` (bit i: D::filters[i]).
template <typename D>
std::string record_listing_sql(Dialect dialect, size_t given) {
  std::string sql = record_select<D>();
  int n = 0;
  for (size_t i = 0; i < D::filters.size(); ++i) {
    if ((given & (size_t{1} << i)) == 0) continue;
    ++n;
    sql += n == 1 ? "WHERE " : " AND ";
    sql += "t." + std::string(D::filters[i].column) + " = " + param(n, Type::text);
  }
  sql += " ORDER BY ";
  bool first = true;
  for_each_field(D::fields, [&](const auto& field) {
    if (!field.key) return;
    if (!first) sql += ", ";
    first = false;
    sql += "t." + std::string(field.name);
    if (field.column().type == Type::text) sql += " COLLATE \"C\"";
  });
  return spell(sql, dialect);
}

// A key's integer columns are compared as text on PostgreSQL: the change feed writes each
// as its number's text, and a malformed key then finds no row (as in SQLite) instead of
// failing a cast.
template <typename D>
std::string record_by_key_sql(Dialect dialect) {
  std::string sql = record_select<D>() + "WHERE ";
  int n = 0;
  for_each_field(D::fields, [&](const auto& field) {
    if (!field.key) return;
    if (n++ > 0) sql += " AND ";
    const bool as_text = dialect == Dialect::postgres && field.column().type != Type::text;
    sql += "t." + std::string(field.name) + (as_text ? "::text" : "") + " = ?" + std::to_string(n);
  });
  return dialect == Dialect::postgres ? spell(sql, dialect) : sql;
}

// How many parts a change-feed key of D has (its key columns).
template <typename D>
constexpr size_t key_parts() {
  return count_fields(D::fields, [](const auto& field) { return field.key; });
}

}  // namespace hh::store::schema
