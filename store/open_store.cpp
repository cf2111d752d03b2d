#include "store/open_store.h"

#include "store/database_location.h"
#include "store/postgres/jobs/pg_job_admin.h"
#include "store/postgres/outbox/pg_outbox.h"
#include "store/postgres/pg_erasure.h"
#include "store/postgres/pg_inbox.h"
#include "store/postgres/pg_store.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "store/sqlite/outbox/sqlite_outbox.h"
#include "store/sqlite/sqlite_erasure.h"
#include "store/sqlite/sqlite_inbox.h"
#include "store/sqlite/sqlite_store.h"

namespace hh::store {

void prepare_backends() { SqliteStore::prepare_process(); }

uint64_t max_delivery_bytes(DatabaseKind kind) {
  return kind == DatabaseKind::postgresql ? postgres_max_delivery_bytes() : sqlite_max_delivery_bytes();
}

Result<std::unique_ptr<Store>> open_store(const Database& database, const StoreOptions& options) {
  return open_backend<Store>(
      database, [&](const std::string& path) { return SqliteStore::open(path, options); },
      [&](const Database& server) { return PgStore::open(server, options); });
}

Result<std::unique_ptr<JobAdmin>> open_job_admin(const Database& database) {
  return open_backend<JobAdmin>(database, open_sqlite_job_admin, open_postgres_job_admin);
}

Result<std::unique_ptr<Outbox>> open_outbox(const Database& database, OutboxUse use) {
  return open_backend<Outbox>(
      database, [use](const std::string& path) { return open_sqlite_outbox(path, use); },
      [use](const Database& postgres) { return open_postgres_outbox(postgres, use); });
}

Result<std::unique_ptr<Erasure>> open_erasure(const Database& database, int64_t busy_timeout_ms) {
  return open_backend<Erasure>(
      database, [busy_timeout_ms](const std::string& path) { return open_sqlite_erasure(path, busy_timeout_ms); },
      [busy_timeout_ms](const Database& postgres) { return open_postgres_erasure(postgres, busy_timeout_ms); });
}

}  // namespace hh::store
