#pragma once
// What the `database = …` setting names: a SQLite database file (a path, the default) or
// a database server (a URI, scheme://…; spec §9: postgresql://…). The store's factories
// (open_store, open_job_admin, open_read_store, open_figures) open the backend it names;
// this is the one place that tells them apart.
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace hh::store {

enum class DatabaseKind { sqlite_file, postgresql };

// The kind of store `database` names. A URI (scheme://…) whose scheme names no store is an
// error that says so; anything else is a file path.
Result<DatabaseKind> database_kind(std::string_view database);

// True when `database` names a file that does not exist (readers never create one).
bool names_missing_file(const std::string& database);

// The error of a factory asked for a backend this build does not have. (It does not
// repeat the URI, which may hold a password.)
Error no_backend(DatabaseKind kind);

// What every factory does: `open_sqlite(database)` when `database` names a SQLite file,
// else the error of database_kind() or no_backend(). PostgreSQL (spec §9) adds a case here.
template <typename Interface, typename OpenSqlite>
Result<std::unique_ptr<Interface>> open_backend(const std::string& database, OpenSqlite open_sqlite) {
  auto kind = database_kind(database);
  if (!kind) return fail(kind.error_kind(), kind.error());
  switch (*kind) {
    case DatabaseKind::sqlite_file: {
      auto opened = open_sqlite(database);
      if (!opened) return fail(opened.error_kind(), opened.error());
      return std::unique_ptr<Interface>(std::move(*opened));
    }
    case DatabaseKind::postgresql: break;
  }
  return no_backend(*kind);
}

}  // namespace hh::store
