#pragma once
// Reading inbox rows in seq order on PostgreSQL (store/processing_store.h DeliveryCursor):
// the processor's own cursor inside a step (on the step's transaction), and readers on
// connections of their own for the parse thread. Rows come in chunks of a bounded size,
// so a step over large bodies holds a few of them in memory, not the whole step.
// Bodies come back in binary (no hex decoding).
//
// Given the shards a processing session owns (processing_shards.h), a cursor hands out
// only the rows still to apply of those shards: others' rows are not read, and a row of
// an owned shard at or below that shard's position is skipped. A row stored without a
// shard (NULL) is read by every session, which computes its shard from its content.
#include <memory>
#include <optional>
#include <string>

#include "store/database_location.h"
#include "store/postgres/connection.h"
#include "store/postgres/processing_shards.h"
#include "store/processing_store.h"

namespace hh::store {

class PgDeliveryCursor final : public DeliveryCursor {
 public:
  // Reads through `db` (which must outlive it); every row, or with `shards` (which must
  // outlive it too) the rows those shards still have to apply.
  explicit PgDeliveryCursor(pg::Connection& db, const pgshard::OwnedShards* shards = nullptr)
      : db_(&db), shards_(shards) {}

  void start(int64_t after, int64_t last, int64_t limit) override;
  Result<bool> next(PendingDelivery& pending) override;
  void finish() override;

 private:
  Result<void> fetch_chunk();
  bool wanted(int row, int64_t seq) const;
  pg::Connection* db_;
  const pgshard::OwnedShards* shards_;
  bool prepared_ = false;
  int64_t after_ = 0, last_ = 0, left_ = 0;
  bool exhausted_ = false;
  pg::Rows chunk_;
  int at_ = 0;
};

// A cursor on a connection of its own (ProcessingStore::open_reader), with a copy of the
// owned shards as they are now (a reader is started again whenever they change).
Result<std::unique_ptr<DeliveryCursor>> open_postgres_delivery_reader(
    const Database& database, std::optional<pgshard::OwnedShards> shards = std::nullopt);

}  // namespace hh::store
