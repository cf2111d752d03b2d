#pragma once
// The Inbox (store/inbox.h) on PostgreSQL: one transaction per group commit, sent as one
// pipeline (BEGIN, an insert per delivery, COMMIT: one round trip). The message-id check
// is the unique index (ON CONFLICT DO NOTHING); `seq` comes from the inbox_seq sequence.
// Several instances append to one inbox at once; a message id two of them receive at
// the same moment is stored once (the second insert waits for the first to commit).
//
// Durability: synchronous_commit is on for the connection (database.h), so the COMMIT
// has returned only once the server made it durable: an ack after append() is a promise.
//
// Lifetime: the connection must outlive this object; used on its thread (the writer).
#include <memory>
#include <vector>

#include "store/inbox.h"
#include "store/outbox.h"
#include "store/postgres/connection.h"

namespace hh::store {

// Each commit adds the outbox entries of `forward_rules` in deliveries mode for its new rows.
Result<std::unique_ptr<Inbox>> open_postgres_inbox(pg::Connection& db, std::span<const ForwardRule> forward_rules);

// Its max_delivery_bytes(): PostgreSQL's limit for one field, less room for the rest of the row.
uint64_t postgres_max_delivery_bytes();

}  // namespace hh::store
