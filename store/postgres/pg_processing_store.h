#pragma once
// The ProcessingStore (store/processing_store.h) on PostgreSQL. Holding one is being the
// processing leader: a session advisory lock (kProcessingLock) that at most one
// connection in the cluster holds, so each delivery is applied exactly once however many
// instances serve the store. The lock goes with its session: when the leader's process
// dies, its connection closes, the server ends the session, and another instance can
// take over (its open_processing() succeeds), starting from the applied position that
// committed with the last step. Steps read the inbox only up to the inbox horizon
// (inbox_horizon.h), so a row committed late is never skipped.
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

// Fails with ErrorKind::busy while another connection holds the processing lock.
// Leadership::when_free: opens without the lock when another holds it, and takes it in a
// later take_lead().
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
