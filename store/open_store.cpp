#include "store/open_store.h"

#include "store/database_location.h"
#include "store/sqlite/jobs/job_admin.h"
#include "store/sqlite/sqlite_store.h"

namespace hh::store {

void prepare_backends() { SqliteStore::prepare_process(); }

Result<std::unique_ptr<Store>> open_store(const std::string& database, const StoreOptions& options) {
  auto kind = database_kind(database);
  if (!kind) return fail(kind.error_kind(), kind.error());
  if (*kind != DatabaseKind::sqlite_file) return no_backend(*kind);
  auto opened = SqliteStore::open(database, options);
  if (!opened) return fail(opened.error_kind(), opened.error());
  return std::unique_ptr<Store>(std::move(*opened));
}

Result<std::unique_ptr<JobAdmin>> open_job_admin(const std::string& database) {
  auto kind = database_kind(database);
  if (!kind) return fail(kind.error_kind(), kind.error());
  if (*kind != DatabaseKind::sqlite_file) return no_backend(*kind);
  return open_sqlite_job_admin(database);
}

}  // namespace hh::store
