#pragma once
// The Outbox (store/outbox.h) of an existing SQLite database, on an admin connection of
// its own (store/sqlite/jobs/sqlite_job_admin.h: short transactions that wait for the writer).
#include <memory>
#include <string>

#include "common/result.h"
#include "store/outbox.h"

namespace hh::store {

// OutboxUse::sender: commits without a sync of their own (synchronous = NORMAL: the
// writer's WAL syncs cover them) and never checkpoint (the server's checkpointer does).
Result<std::unique_ptr<Outbox>> open_sqlite_outbox(const std::string& path, OutboxUse use);

}  // namespace hh::store
