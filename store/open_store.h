#pragma once
// The one place a store is opened: `database = …` of the settings says which backend.
//   a file path            SQLite (store/sqlite/), created and migrated if needed
//   postgresql://…         PostgreSQL (spec §9, store/postgres/), migrated if needed
//   any other scheme://    fails with a clear error
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "store/database_location.h"
#include "store/erasure.h"
#include "store/jobs/job_admin.h"
#include "store/outbox.h"
#include "store/store.h"
#include "store/store_options.h"

namespace hh::store {

// Once per process, before any store is opened: settings the backends take only then.
void prepare_backends();

// The largest delivery (body and headers together) one inbox row of a `kind` store holds:
// what its Inbox::max_delivery_bytes() says once open, known before (check-config).
uint64_t max_delivery_bytes(DatabaseKind kind);

Result<std::unique_ptr<Store>> open_store(const Database& database, const StoreOptions& options);

// The job administration of an existing store (`healthhook jobs`), beside a running
// server; nothing is created or migrated.
Result<std::unique_ptr<JobAdmin>> open_job_admin(const Database& database);

// The forwarding outbox of an existing store (the sender of `serve`, `healthhook forward`),
// on a connection of its own beside the writer. OutboxUse says how durable its writes are.
Result<std::unique_ptr<Outbox>> open_outbox(const Database& database, OutboxUse use = OutboxUse::admin);

// Erasing one user (`healthhook purge-user`, store/erasure.h) of an existing store, beside
// a running server's receiver; each write waits up to `busy_timeout_ms` for another
// writer. Nothing is created; erase() migrates an older SQLite file first.
Result<std::unique_ptr<Erasure>> open_erasure(const Database& database, int64_t busy_timeout_ms);

}  // namespace hh::store
