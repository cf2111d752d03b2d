#pragma once
// The inbox in seq order (the `deliveries` view: inbox row and outcome), as the processor
// reads it: on the write connection inside a step (SqliteDeliveryCursor), or on a
// read-only connection of its own for a parse thread (open_delivery_reader). One SELECT
// for both, so the two always read the same rows.
//
// Lifetime: the connection must outlive a SqliteDeliveryCursor; a reader owns its own.
// One thread at a time.
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "store/processing_store.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class SqliteDeliveryCursor final : public DeliveryCursor {
 public:
  static Result<SqliteDeliveryCursor> create(sqlite::Connection& db);

  void start(int64_t after, int64_t last, int64_t limit) override;
  Result<bool> next(PendingDelivery& pending) override;
  void finish() override;

 private:
  explicit SqliteDeliveryCursor(sqlite::Statement select) : select_(std::move(select)) {}
  sqlite::Statement select_;
};

// A cursor on a read-only connection of its own to the database at `path` (WAL: it reads
// committed rows while the writer writes). Each read between start() and finish() is its
// own short read transaction. ReaderUse::catch_up reads pages through mmap.
Result<std::unique_ptr<DeliveryCursor>> open_delivery_reader(const std::string& path, ReaderUse use);

}  // namespace hh::store
