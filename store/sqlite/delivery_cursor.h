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
  // Fails (ErrorKind::io) when the read ends before `last` while rows up to it are there:
  // a damaged page ends SQLite's walk of the table early without an error, and every row
  // past it would be taken as read (applied, or rebuilt) without being seen.
  Result<bool> next(PendingDelivery& pending) override;
  void finish() override;

 private:
  SqliteDeliveryCursor(sqlite::Statement select, sqlite::Statement newest_up_to)
      : select_(std::move(select)), newest_up_to_(std::move(newest_up_to)) {}
  Result<void> check_read_through();

  sqlite::Statement select_;
  sqlite::Statement newest_up_to_;  // the newest seq at or below ?1
  int64_t last_ = 0, limit_ = 0;    // this read's bounds
  int64_t read_ = 0, seen_seq_ = 0;  // rows read, and the last one's seq (or `after`)
};

// A cursor on a read-only connection of its own to the database at `path` (WAL: it reads
// committed rows while the writer writes). Each read between start() and finish() is its
// own short read transaction. ReaderUse::catch_up reads pages through mmap.
Result<std::unique_ptr<DeliveryCursor>> open_delivery_reader(const std::string& path, ReaderUse use);

}  // namespace hh::store
