#pragma once
// Every table of the store, described once for both backends: its columns (name, type,
// NULL or not), its primary key, the column that names its user, and its roles: derived
// from the inbox (emptied and re-created by `rebuild`), copied by `healthhook migrate`.
// The tables with one row per key are described with their rows (record_tables.h); the
// others here, in tables.cpp.
//
// The migrations of each backend (store/sqlite/migrations/, store/postgres/migrations/)
// stay explicit, reviewed SQL; tests/postgres/schema_check_test.cpp holds each migrated
// schema against this description, so a column added in one place and not the others
// fails a test.
#include <span>
#include <string_view>

#include "store/schema/column.h"

namespace hh::store::schema {

// How `purge-user` finds a table's rows to be the user's (store/erasure_plan.h says what
// each set is): by the column that names the user, never through a body.
enum class ErasedBy {
  none,                    // the table holds nobody's data (providers, the processor's position)
  user,                    // the user column names them
  user_or_their_delivery,  // the user column names them, or one of their deliveries wrote the row
  their_delivery,          // one of their deliveries (keyed by seq)
  their_series,            // samples of their series
  their_workouts,          // stream points and streams of their workouts
  kept,                    // the erasure record itself: it keeps the user id by design
};

// A table's part in an erasure: how its rows are found, and when it is emptied in the
// erasure's one transaction (by group, then order: derived rows first, the inbox last).
struct Erasure {
  ErasedBy by = ErasedBy::none;
  int group = 0;
  // Within a group, lower first; equal ones children before the tables they refer to
  // (samples before series). The order `purge-user` reports the tables in.
  int order = 0;
};

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
  Erasure erasure = {};   // how `purge-user` empties it
  // postgres_only: PostgreSQL's processing shards; sqlite_only: the sender's positions in
  // the feed (SQLite's writer leaves the outbox entries to the sender)
  Backends backends = Backends::both;
};

// Every table, parents before the tables that refer to them (series before samples): the
// order `healthhook migrate` copies them in.
std::span<const Table> tables();

// The derived tables, children before the tables they refer to (samples before series):
// the order `rebuild` empties them in.
std::span<const std::string_view> derived_tables();

// The tables `purge-user` empties, in group order (store/erasure_plan.h).
std::span<const Table* const> erased_tables();
// The group that holds the inbox: emptied last, with the records that find it.
inline constexpr int kErasureInboxGroup = 7;

// The table named `name`; nullptr for none.
const Table* find_table(std::string_view name);

// Whether `column` of `table` exists in a backend (Backends::postgres_only: PostgreSQL only).
inline bool in_sqlite(const Column& column) { return column.backends == Backends::both; }

}  // namespace hh::store::schema
