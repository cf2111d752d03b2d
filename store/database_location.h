#pragma once
// What the `database = …` setting names: a SQLite database file (a path, the default) or
// a database server (a URI, scheme://…; spec §9: postgresql://…). The store's factories
// (open_store, open_job_admin, open_read_store, open_figures) open the backend it names;
// this is the one place that tells them apart.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hh::store {

enum class DatabaseKind { sqlite_file, postgresql };

// The store the settings name: `database = …` (a SQLite file path or a postgresql:// URI)
// and, for PostgreSQL, the password read from `database_password_file` ("" when the URI,
// ~/.pgpass or PGPASSFILE provide it). Built from a path or URI alone where no password
// applies (tests, SQLite).
struct Database {
  Database() = default;
  Database(std::string location_, std::string password_ = {})  // NOLINT(google-explicit-constructor)
      : location(std::move(location_)), password(std::move(password_)) {}
  Database(const char* location_) : location(location_) {}  // NOLINT(google-explicit-constructor)
  std::string location;
  std::string password;
  // PostgreSQL: how long a connection attempt, and each statement's answer, may take on the
  // connections opened from this; past it the connection is closed and the call fails as
  // unavailable (store/postgres/connection.h), and the server cancels a statement still
  // running (statement_timeout). 0: no bound of ours (libpq waits as long as the server
  // takes; connect_timeout 10 s). The listener's reads (read API, console, /metrics) set it,
  // so that a frozen server cannot hold their answers. SQLite: not used.
  std::chrono::milliseconds reply_timeout{0};
};

// The kind of store `database` names. A URI (scheme://…) whose scheme names no store is an
// error that says so, and so is a libpq key/value string ("host=… dbname=…": write it as a
// postgresql:// URI; taken for a file name it would put its password into one); anything
// else is a file path. Errors never repeat the text.
Result<DatabaseKind> database_kind(std::string_view database);

// `database` as it may be shown in a log line or message, read the way libpq reads it
// (postgresql://[user[:password]@][host][/dbname][?key=value&…], keys percent-decoded), with
// every credential replaced by "***": the password of the user part (one that holds an
// unescaped '?', '@' or '/' too: the part ends at the last '@' before the query), and the
// values of `password` and `sslpassword`, as URI parameters or in a key/value string.
std::string loggable_location(std::string_view database);

// The credentials `database` holds (as written and percent-decoded) and `password` (the
// password file's), for redact_credentials().
std::vector<std::string> credentials_in(std::string_view database, std::string_view password = {});

// True when a postgresql:// URI holds a password: "user:password@" before the host, or a
// password= parameter (what database_password_file is for). Never wrong the other way
// round for a URI without one (a user or a database name with '@' in the query is none).
bool uri_holds_password(std::string_view database);

// `text` (e.g. libpq's error message, which may quote a part of the URI it could not read)
// with every credential replaced by "***": each of `credentials`, and any quoted token that
// is part of one.
std::string redact_credentials(std::string text, const std::vector<std::string>& credentials);

// Why a connection to `database` may travel in plain text, for a warning at start; nullopt
// when it cannot: a SQLite file, a Unix socket or loopback host, or an sslmode set in the URI
// (or in PGSSLMODE) other than allow or prefer. libpq's default, prefer, falls back to plain
// text, silently, when the server offers no TLS; verify-full checks the server too.
std::optional<std::string> plaintext_risk(std::string_view database, const char* pgsslmode, const char* pghost);

// The files a SQLite store is made of: the database and what SQLite and `serve` keep beside
// it ("-wal", "-shm", "-journal", "-processor.lock"); none for a PostgreSQL server. An
// export must never be written over one of them.
std::vector<std::string> files_of(std::string_view database);

// True when `database` names a file that does not exist (readers never create one).
bool names_missing_file(const std::string& database);

// The error of a factory asked for a backend that does not implement it yet. (It does not
// repeat the URI, which may hold a password.)
Error no_backend(DatabaseKind kind);

// A backend's own result as the interface's.
template <typename Interface, typename Opened>
Result<std::unique_ptr<Interface>> as_interface(Result<Opened> opened) {
  if (!opened) return fail(opened);
  return std::unique_ptr<Interface>(std::move(*opened));
}

// What every factory does: `open_sqlite(path)` when `database` names a SQLite file,
// `open_postgres(database)` when it names a PostgreSQL server (store/postgres/), else the
// error of database_kind().
template <typename Interface, typename OpenSqlite, typename OpenPostgres>
Result<std::unique_ptr<Interface>> open_backend(const Database& database, OpenSqlite open_sqlite,
                                                OpenPostgres open_postgres) {
  auto kind = database_kind(database.location);
  if (!kind) return fail(kind);
  if (*kind == DatabaseKind::sqlite_file) return as_interface<Interface>(open_sqlite(database.location));
  return as_interface<Interface>(open_postgres(database));
}

// The PostgreSQL opener of an interface the backend does not implement yet.
template <typename Interface>
Result<std::unique_ptr<Interface>> not_built_for_postgres(const Database&) {
  return no_backend(DatabaseKind::postgresql);
}

}  // namespace hh::store
