#include "store/open_store.h"

#include <sqlite3.h>

#include <string_view>

#include "store/sqlite/jobs/job_admin.h"
#include "store/sqlite/sqlite_store.h"

namespace hh::store {
namespace {

// "scheme" of "scheme://…" (RFC 3986: a letter, then letters, digits, + - .), or "" for
// anything else, i.e. a file path.
std::string_view uri_scheme(std::string_view database) {
  const auto end = database.find("://");
  if (end == std::string_view::npos || end == 0) return {};
  const std::string_view scheme = database.substr(0, end);
  const auto is_alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!is_alpha(scheme[0])) return {};
  for (const char c : scheme) {
    if (!is_alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return {};
  }
  return scheme;
}

// Why `database` names no backend this build has.
Error unsupported(std::string_view scheme) {
  if (scheme == "postgresql" || scheme == "postgres") {
    return fail(ErrorKind::unavailable, "database: PostgreSQL (" + std::string(scheme) +
                                            "://…) is not supported by this build yet; use a file path");
  }
  return fail(ErrorKind::unavailable, "database: unknown scheme \"" + std::string(scheme) +
                                          "://\"; expected a file path or postgresql://…");
}

}  // namespace

void prepare_backends() {
  // SQLite's allocation statistics take one process-wide mutex on every malloc and free,
  // which every thread with a connection (writer, checkpointer, readers, a rebuild's
  // parser) then contends for; nothing here reads them. Must come before the first
  // connection (SQLite refuses it later, harmlessly).
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

Result<std::unique_ptr<Store>> open_store(const std::string& database, const StoreOptions& options) {
  if (const std::string_view scheme = uri_scheme(database); !scheme.empty()) return unsupported(scheme);
  auto opened = SqliteStore::open(database, options);
  if (!opened) return fail(opened.error_kind(), opened.error());
  return std::unique_ptr<Store>(std::move(*opened));
}

Result<std::unique_ptr<JobAdmin>> open_job_admin(const std::string& database) {
  if (const std::string_view scheme = uri_scheme(database); !scheme.empty()) return unsupported(scheme);
  return open_sqlite_job_admin(database);
}

}  // namespace hh::store
