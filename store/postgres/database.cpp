#include "store/postgres/database.h"

#include "common/log.h"
#include "store/database_location.h"
#include "store/postgres/copy_progress.h"
#include "store/postgres/migrations.h"

namespace hh::store {

int postgres_schema_version() { return static_cast<int>(postgres_migrations().size()); }

namespace {

// As store/sqlite/database.cpp: what the user-columns migration could not fill, logged
// once right after it.
constexpr std::string_view kPgUserColumnsMigration = "003-user-columns";

void log_unattributed_rows(pg::Connection& db) {
  auto rows = db.query("SELECT table_name, unattributed FROM unattributed_rows");
  if (!rows) return;
  int64_t total = 0;
  for (int r = 0; r < rows->size(); ++r) total += rows->integer(r, 1);
  if (total == 0) return;
  log::Line line(log::Level::warn, "rows_without_user");
  for (int r = 0; r < rows->size(); ++r) line.num(rows->text(r, 0), rows->integer(r, 1));
  line.num("total", total);
}

}  // namespace

Result<pg::Connection> connect(const Database& database) {
  auto db = pg::Connection::open(database.location, database.password, database.reply_timeout);
  // libpq's message may quote a part of the URI it could not read, a password's included.
  if (!db) {
    return fail(db.error_kind(),
                redact_credentials(db.error(), credentials_in(database.location, database.password)));
  }
  // What the store reads back does not depend on the server's, database's or role's
  // defaults: bodies in hex, floats to the last digit, text as UTF-8.
  if (auto set = db->set_session("SET synchronous_commit = on; SET TIME ZONE 'UTC'; SET bytea_output = 'hex'; "
                                 "SET extra_float_digits = 3; SET client_encoding = 'UTF8'");
      !set) {
    return fail(set);
  }
  // Values over about 2 KB (20 KiB bodies, fetched pages) are compressed with lz4 rather
  // than the default pglz, which cost the server a tenth of its CPU per 20 KiB delivery
  // (decision 061). A session setting, not the columns': no lock on a table any instance
  // writes, nothing in a dump, and a server without lz4 (built without it, or before 14)
  // refuses it and keeps pglz. Values stored either way read back alike.
  (void)db->set_session("SET default_toast_compression = lz4");
  // A statement we stop waiting for is stopped on the server too, rather than run on for
  // no one (it would notice the closed connection only when it sends its rows).
  if (database.reply_timeout.count() > 0) {
    if (auto set = db->set_session("SET statement_timeout = " + std::to_string(database.reply_timeout.count()));
        !set) {
      return fail(set);
    }
  }
  // A role that may use no schema of its search_path sees no table at all: said as such,
  // not as an empty database or a failed CREATE.
  auto schema =
      db->query("SELECT current_schema() IS NULL, quote_ident(current_user), current_setting('search_path')");
  if (!schema) return fail(schema);
  if (schema->boolean(0, 0)) {
    const std::string role(schema->text(0, 1));  // quoted as a GRANT needs it
    return fail(ErrorKind::other, "PostgreSQL: role " + role + " may use no schema of its search_path (" +
                                      std::string(schema->text(0, 2)) + "): GRANT USAGE ON SCHEMA public TO " + role +
                                      " (and CREATE, for the role serve runs as), or give the role a schema of "
                                      "its own");
  }
  return db;
}

Result<SchemaState> schema_state(pg::Connection& db) {
  auto found = db.query(
      "SELECT to_regclass('schema_migrations') IS NOT NULL, has_schema_privilege(current_schema(), 'CREATE'), "
      "quote_ident(current_user), quote_ident(current_schema())");
  if (!found) return fail(found);
  SchemaState state;
  state.table_exists = found->boolean(0, 0);
  state.may_create = found->boolean(0, 1);
  state.role = std::string(found->text(0, 2));
  state.schema = std::string(found->text(0, 3));
  if (state.table_exists) {
    auto version = db.query_int("SELECT max(version) FROM schema_migrations");
    if (!version) return fail(version);
    state.version = version->value_or(0);
  }
  return state;
}

Result<void> may_open(const SchemaState& state) {
  // A role that may not create tables (least privilege: the owner migrated, serve runs
  // with SELECT/INSERT/UPDATE/DELETE) needs no DDL when nothing is pending.
  if (state.version < postgres_schema_version() && !state.may_create) {
    return fail(ErrorKind::other,
                "PostgreSQL: role " + state.role + " may not create tables in schema " + state.schema + ", and " +
                    std::to_string(postgres_schema_version() - state.version) +
                    " schema migrations are pending: GRANT CREATE ON SCHEMA " + state.schema + " TO " + state.role +
                    ", or start healthhook serve once as the database's owner");
  }
  if (state.version > postgres_schema_version()) {
    return fail(ErrorKind::other, "database schema version " + std::to_string(state.version) +
                                      " is newer than this healthhook (" +
                                      std::to_string(postgres_schema_version()) + "); upgrade healthhook");
  }
  return {};
}

Result<void> migrate(pg::Connection& db) {
  auto txn = pg::Transaction::begin(db);
  if (!txn) return fail(txn);
  // Held to the end of the transaction: a second instance waits here, then finds the
  // migrations applied.
  if (auto locked = db.query("SELECT pg_advisory_xact_lock($1)", pg::Params().add(kMigrationLock)); !locked) {
    return fail(locked);
  }
  auto state = schema_state(db);
  if (!state) return fail(state);
  if (auto openable = may_open(*state); !openable) return openable;
  const bool table_exists = state->table_exists;
  const int64_t current = state->version;
  if (!table_exists) {
    if (auto created = db.exec(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version bigint PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
        !created) {
      return fail(created);
    }
  }
  bool user_columns_added = false;
  for (int64_t i = current; i < postgres_schema_version(); ++i) {
    const Migration& migration = postgres_migrations()[static_cast<size_t>(i)];
    const std::string name(migration.name);
    if (auto applied = db.exec(migration.sql); !applied) {
      return fail(applied, "migration " + name);
    }
    auto recorded = db.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                             pg::Params().add(i + 1).add(name));
    if (!recorded) return fail(recorded, "migration " + name);
    user_columns_added = user_columns_added || migration.name == kPgUserColumnsMigration;
  }
  if (user_columns_added) log_unattributed_rows(db);
  return txn->commit();
}

Result<pg::Connection> connect_migrated(const Database& database) {
  auto db = connect(database);
  if (!db) return db;
  if (auto migrated = migrate(*db); !migrated) return fail(migrated);
  if (auto whole = refuse_unfinished_copy(*db, database); !whole) return fail(whole);
  return db;
}

}  // namespace hh::store
