#pragma once
// Reading inbox rows in seq order on PostgreSQL (store/processing_store.h DeliveryCursor):
// the processor's own cursor inside a step (on the step's transaction), and readers on
// connections of their own for the parse thread. Rows come in chunks of a bounded size,
// so a step over large bodies holds a few of them in memory, not the whole step.
// Bodies come back in binary (no hex decoding).
#include <memory>
#include <string>

#include "store/database_location.h"
#include "store/postgres/connection.h"
#include "store/processing_store.h"

namespace hh::store {

class PgDeliveryCursor final : public DeliveryCursor {
 public:
  // Reads through `db` (which must outlive it).
  explicit PgDeliveryCursor(pg::Connection& db) : db_(&db) {}

  void start(int64_t after, int64_t last, int64_t limit) override;
  Result<bool> next(PendingDelivery& pending) override;
  void finish() override;

 private:
  Result<void> fetch_chunk();
  pg::Connection* db_;
  bool prepared_ = false;
  int64_t after_ = 0, last_ = 0, left_ = 0;
  bool exhausted_ = false;
  pg::Rows chunk_;
  int at_ = 0;
};

// A cursor on a connection of its own (ProcessingStore::open_reader).
Result<std::unique_ptr<DeliveryCursor>> open_postgres_delivery_reader(const Database& database);

}  // namespace hh::store
