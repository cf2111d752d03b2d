#pragma once
// Every table of the store, described once for both backends: its columns (name, type,
// NULL or not), its primary key, the column that names its user, and its roles: derived
// from the inbox (emptied and re-created by `rebuild`), copied by `healthhook migrate`.
// The tables with one row per key are described with their rows (record_tables.h); the
// others here, in tables.cpp.
//
// The migrations of each backend (store/sqlite/migrations/, store/postgres/migrations/)
// stay explicit, reviewed SQL; tests/derived/schema_check_test.cpp holds each migrated
// schema against this description, so a column added in one place and not the others
// fails a test.
#include <span>
#include <string_view>

#include "store/schema/column.h"

namespace hh::store::schema {

enum class Role {
  inbox,        // the deliveries and what is known of them: never re-derived
  derived,      // re-created by replaying the inbox (`rebuild` empties it)
  operational,  // state of its own (jobs, forwarding, erasures, the processor's position)
};

struct Table {
  std::string_view name;
  std::span<const Column> columns;
  std::span<const std::string_view> key;  // the primary key's columns, in order
  Role role = Role::operational;
  std::string_view user;  // the column naming the user the row is about ("" for none)
  bool copied = true;     // `healthhook migrate` copies its rows (processor_state it writes last)
};

// Every table, parents before the tables that refer to them (series before samples): the
// order `healthhook migrate` copies them in.
std::span<const Table> tables();

// The derived tables, children before the tables they refer to (samples before series):
// the order `rebuild` empties them in.
std::span<const std::string_view> derived_tables();

// The table named `name`; nullptr for none.
const Table* find_table(std::string_view name);

// Whether `column` of `table` exists in a backend (Backends::postgres_only: PostgreSQL only).
inline bool in_sqlite(const Column& column) { return column.backends == Backends::both; }

}  // namespace hh::store::schema
