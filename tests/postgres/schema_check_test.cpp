// Every migrated schema against the one description of the tables (store/schema/tables.h):
// a column added to a migration of one backend and not to the other, or not to the
// description (whose record tables' lines also make their statements and readers), fails
// here. Checked: which tables there are, and each one's columns (name, type, NULL or not)
// and primary key.
#include <boost/test/unit_test.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "store/postgres/database.h"
#include "store/postgres/migrations.h"
#include "store/schema/dialect.h"
#include "store/schema/tables.h"
#include "store/sqlite/database.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/temp_dir.h"
#include "tests/support/text_rows.h"

BOOST_AUTO_TEST_SUITE(schema_check_test)

using namespace hh;
using store::schema::Dialect;

namespace {

// A table as a migrated schema has it.
struct FoundColumn {
  std::string type;
  bool nullable = true;
};
struct FoundTable {
  std::map<std::string, FoundColumn> columns;
  std::vector<std::string> key;  // in key order
};
using FoundSchema = std::map<std::string, FoundTable>;

// Backend tables that hold no data of the store: SQLite's own, PostgreSQL's record of its
// migrations, and `healthhook migrate`'s progress.
const std::set<std::string> kBookkeeping = {"sqlite_sequence", "schema_migrations", "sqlite_copy_progress"};

// What differs between `found` and the description, as seen by `dialect`, one line each.
std::vector<std::string> differences(const FoundSchema& found, Dialect dialect) {
  std::vector<std::string> out;
  std::set<std::string> described;
  for (const store::schema::Table& table : store::schema::tables()) {
    const std::string name(table.name);
    if (dialect == Dialect::sqlite && table.backends == store::schema::Backends::postgres_only) continue;
    if (dialect == Dialect::postgres && table.backends == store::schema::Backends::sqlite_only) continue;
    described.insert(name);
    const auto at = found.find(name);
    if (at == found.end()) {
      out.push_back(name + ": described, not in the schema");
      continue;
    }
    const FoundTable& actual = at->second;
    std::set<std::string> columns;
    for (const store::schema::Column& column : table.columns) {
      if (dialect == Dialect::sqlite && !store::schema::in_sqlite(column)) continue;
      const std::string where = name + "." + std::string(column.name);
      columns.insert(std::string(column.name));
      const auto c = actual.columns.find(std::string(column.name));
      if (c == actual.columns.end()) {
        out.push_back(where + ": described, not in the schema");
        continue;
      }
      const std::string type(store::schema::type_name(column.type, dialect));
      if (c->second.type != type) out.push_back(where + ": type " + c->second.type + ", described " + type);
      if (c->second.nullable != column.nullable) {
        out.push_back(where + (column.nullable ? ": NOT NULL, described as nullable" : ": nullable, described NOT NULL"));
      }
    }
    for (const auto& [column, _] : actual.columns) {
      if (!columns.contains(column)) out.push_back(name + "." + column + ": in the schema, not described");
    }
    const std::vector<std::string> key(table.key.begin(), table.key.end());
    if (actual.key != key) out.push_back(name + ": primary key differs from the description");
  }
  for (const auto& [name, _] : found) {
    if (!described.contains(name) && !kBookkeeping.contains(name)) out.push_back(name + ": in the schema, not described");
  }
  return out;
}

FoundSchema sqlite_schema(sqlite::Connection& db) {
  FoundSchema schema;
  auto tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name");
  BOOST_REQUIRE(tables);
  std::vector<std::string> names;
  BOOST_REQUIRE(tables->for_each_row([&](const sqlite::Statement& s) { names.emplace_back(s.column_text(0)); }));
  auto info = db.prepare("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1) ORDER BY pk, cid");
  BOOST_REQUIRE(info);
  for (const std::string& name : names) {
    FoundTable& table = schema[name];
    info->bind(1, std::string_view(name));
    BOOST_REQUIRE(info->for_each_row([&](const sqlite::Statement& s) {
      const bool key = s.column_int(3) > 0;
      // A primary key column is NOT NULL whatever table_info says (a rowid, a STRICT key).
      table.columns[std::string(s.column_text(0))] = {std::string(s.column_text(1)), !key && s.column_int(2) == 0};
      if (key) table.key.emplace_back(s.column_text(0));
    }));
  }
  return schema;
}

FoundSchema postgres_schema(pg::Connection& db) {
  FoundSchema schema;
  auto columns = db.query(
      "SELECT table_name, column_name, data_type, is_nullable = 'YES' FROM information_schema.columns "
      "WHERE table_schema = current_schema() AND table_name IN "
      "(SELECT tablename FROM pg_tables WHERE schemaname = current_schema())");
  BOOST_REQUIRE_MESSAGE(columns, columns.error());
  for (int r = 0; r < columns->size(); ++r) {
    schema[std::string(columns->text(r, 0))].columns[std::string(columns->text(r, 1))] = {
        std::string(columns->text(r, 2)), columns->boolean(r, 3)};
  }
  auto keys = db.query(
      "SELECT c.relname, a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
      "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) "
      "WHERE i.indisprimary AND c.relnamespace = current_schema()::regnamespace "
      "ORDER BY c.relname, array_position(i.indkey::int2[], a.attnum)");
  BOOST_REQUIRE_MESSAGE(keys, keys.error());
  for (int r = 0; r < keys->size(); ++r) schema[std::string(keys->text(r, 0))].key.emplace_back(keys->text(r, 1));
  return schema;
}

std::string lines(const std::vector<std::string>& all) {
  std::string out;
  for (const std::string& line : all) out += "\n  " + line;
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_migrated_sqlite_schema_is_the_description) {
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("check.db"), {});
  BOOST_REQUIRE_MESSAGE(db, db.error());
  const auto found = differences(sqlite_schema(*db), Dialect::sqlite);
  BOOST_TEST(found.empty(), "SQLite schema vs store/schema/:" << lines(found));
}

BOOST_AUTO_TEST_CASE(the_migrated_postgresql_schema_is_the_description) {
  auto db = store::connect_migrated({test::PostgresCluster::shared().fresh_database(), ""});
  BOOST_REQUIRE_MESSAGE(db, db.error());
  const auto found = differences(postgres_schema(*db), Dialect::postgres);
  BOOST_TEST(found.empty(), "PostgreSQL schema vs store/schema/:" << lines(found));
}

// A write one backend accepts the other accepts too: SQLite's connections leave foreign
// keys off (its default), so PostgreSQL declares none. (Until decision 046, samples →
// series was one, checked per sample on PostgreSQL only.)
BOOST_AUTO_TEST_CASE(neither_backend_checks_references_the_other_does_not) {
  test::TempDir dir;
  auto lite = store::open_for_writing(dir.file("check.db"), {});
  BOOST_REQUIRE_MESSAGE(lite, lite.error());
  BOOST_TEST(test::text_rows(*lite, "PRAGMA foreign_keys") == std::vector<std::string>{"0"},
             boost::test_tools::per_element());

  auto pg = store::connect_migrated({test::PostgresCluster::shared().fresh_database(), ""});
  BOOST_REQUIRE_MESSAGE(pg, pg.error());
  const auto found = test::text_rows(*pg,
                                     "SELECT conrelid::regclass::text || ': ' || conname FROM pg_constraint "
                                     "WHERE contype = 'f' AND connamespace = current_schema()::regnamespace ORDER BY 1");
  BOOST_TEST(found.empty(), "PostgreSQL foreign keys:" << lines(found));
}

// Migration 007 drops the reference of samples to series whatever it is named (a database
// restored by hand may name it otherwise), so no version 7 is recorded with it left.
BOOST_AUTO_TEST_CASE(the_samples_reference_is_dropped_under_any_name) {
  auto pg = store::connect_migrated({test::PostgresCluster::shared().fresh_database(), ""});
  BOOST_REQUIRE_MESSAGE(pg, pg.error());
  BOOST_REQUIRE(pg->exec("ALTER TABLE samples ADD CONSTRAINT \"restored by hand\" FOREIGN KEY (series_id) "
                         "REFERENCES series (series_id)"));
  const auto& migrations = store::postgres_migrations();
  const store::Migration& unchecked = migrations[store::version_with(migrations, "samples-unchecked-series") - 1];
  BOOST_REQUIRE(unchecked.name.ends_with("-samples-unchecked-series"));
  BOOST_REQUIRE(pg->exec(std::string(unchecked.sql)));
  const auto left =
      test::text_rows(*pg, "SELECT conname FROM pg_constraint WHERE conrelid = 'samples'::regclass AND contype = 'f'");
  BOOST_TEST(left.empty(), "foreign keys of samples left:" << lines(left));
}

// The check itself: a column a migration added and the description lacks, one the
// description has and a migration lacks, another type or nullability, are each found.
BOOST_AUTO_TEST_CASE(a_column_in_one_place_only_is_found) {
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("check.db"), {});
  BOOST_REQUIRE_MESSAGE(db, db.error());
  BOOST_REQUIRE(db->exec("ALTER TABLE devices ADD COLUMN firmware TEXT"));
  FoundSchema schema = sqlite_schema(*db);
  schema["lab_orders"].columns.erase("team_id");
  schema["summaries"].columns["start_ms"].type = "TEXT";
  schema["users"].columns["client_user_id"].nullable = false;
  schema["backfills"].key.pop_back();
  const auto found = differences(schema, Dialect::sqlite);
  const std::set<std::string> expected = {
      "devices.firmware: in the schema, not described",
      "lab_orders.team_id: described, not in the schema",
      "summaries.start_ms: type TEXT, described INTEGER",
      "users.client_user_id: NOT NULL, described as nullable",
      "backfills: primary key differs from the description"};
  BOOST_TEST((std::set<std::string>(found.begin(), found.end()) == expected), lines(found));
}

// Erasure is decided per table in its description: a table that names a user says how
// `purge-user` empties it, and a table that does not is one of those that hold nobody's
// data. A new table without that decision fails here (the drift an erasure gap came from).
BOOST_AUTO_TEST_CASE(every_table_says_how_purge_user_empties_it) {
  using store::schema::ErasedBy;
  const std::set<std::string> nobodys = {"providers", "outbox_dropped", "forward_pauses", "forward_positions", "retention_walk",
                                          "processor_state", "processor_shards"};
  for (const store::schema::Table& table : store::schema::tables()) {
    const std::string name(table.name);
    if (table.erasure.by == ErasedBy::none) {
      BOOST_TEST(table.user.empty(), name << " names a user but is not erased");
      BOOST_TEST(nobodys.contains(name), name << ": no erasure rule, and not a table of nobody's data");
    } else {
      BOOST_TEST((table.erasure.group >= 0 && table.erasure.group <= store::schema::kErasureInboxGroup), name);
    }
  }
  // The order `purge-user` empties the tables in and reports them in (its row counts, the
  // erasure record): derived rows first, the inbox last, after everything its rows wrote.
  std::vector<std::string> order;
  for (const auto* erased : store::schema::erased_tables()) order.emplace_back(erased->name);
  const std::vector<std::string> expected = {
      "samples",  "series",           "summaries",        "stream_points", "workout_streams",
      "connections", "devices",       "lab_orders",       "lab_appointments", "lab_results",
      "lab_parsing_jobs", "backfills", "jobs",            "changes",       "outbox",
      "users",    "removed_bodies",   "delivery_outcomes", "inbox"};
  BOOST_TEST(order == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
