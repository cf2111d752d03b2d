#pragma once
// The Outbox (store/outbox.h) of an existing PostgreSQL store, on a connection of its own
// (store/postgres/jobs/pg_job_admin.h: nothing created, lock_timeout for rows a writer
// holds). Several instances' senders may share the table; each sends what it lists.
#include <memory>

#include "common/result.h"
#include "store/database_location.h"
#include "store/outbox.h"

namespace hh::store {

// OutboxUse::sender: synchronous_commit = off for its outcomes (an outcome lost to a crash
// of the server only sends a message once more, under the same id: at-least-once anyway).
Result<std::unique_ptr<Outbox>> open_postgres_outbox(const Database& database, OutboxUse use);

}  // namespace hh::store
