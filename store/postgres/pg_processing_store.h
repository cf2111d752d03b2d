#pragma once
// The ProcessingStore (store/processing_store.h) on PostgreSQL. Holding one is holding
// processing locks (processing_locks.h): a command holds the store alone; each `serve`
// holds a fair share of the 16 shards of users (processing_shards.h) and applies only
// their deliveries, so every delivery is applied exactly once however many instances
// serve the store. The locks go with their session: when an instance dies, its connection
// closes, the server ends the session, and the others take its shards at their next
// take_lead(), each from the position that committed with the last step. Steps read the
// inbox only up to the inbox horizon (inbox_horizon.h), so a row committed late is never
// skipped.
//
// Lifetime: `db` must outlive this object; used on the thread that owns it.
#include <memory>
#include <span>

#include "store/database_location.h"
#include "store/outbox.h"
#include "store/postgres/connection.h"
#include "store/processing_store.h"
#include "store/store.h"

namespace hh::store {

// Leadership::now (commands): fails with ErrorKind::in_use while another session processes.
// Leadership::when_free (`serve`): opens with or without shards, and takes its share in
// later take_lead() calls.
Result<std::unique_ptr<ProcessingStore>> open_postgres_processing(pg::Connection& db, const Database& database,
                                                                  Leadership leadership,
                                                                  std::span<const ForwardRule> forward_rules = {});

// The same on a session of its own (`session`, a connection to `database` that it keeps),
// for a processing thread beside the writer's (Store::open_processing_alongside).
Result<std::unique_ptr<ProcessingStore>> open_postgres_processing_session(pg::Connection session,
                                                                          const Database& database,
                                                                          Leadership leadership,
                                                                          std::span<const ForwardRule> forward_rules);

// Empties the derived tables and resets the processor's position, in one transaction.
Result<void> reset_postgres_derived(pg::Connection& db, ResetOptions options);

}  // namespace hh::store
