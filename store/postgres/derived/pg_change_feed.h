#pragma once
// Appends rows to the change feed (`changes`) on PostgreSQL, inside the transaction that
// wrote the derived rows (store/sqlite/derived/change_feed.h is the SQLite twin).
//
// Deferred mode (the processor's): append() adds the change to one array per column
// (pg_statements.h) and flush() inserts every buffered change with one statement,
// `INSERT … SELECT … FROM unnest(…) WITH ORDINALITY … ORDER BY ordinality`: one round trip
// for a whole step's feed instead of one per change. The identity column hands out
// change_ids in that order, so ids follow the order of append() as with immediate inserts.
// A change whose key has no text (a null view) is inserted at once, after a flush, so that
// its failure is blamed on its delivery, as in SQLite.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstddef>

#include "common/result.h"
#include "store/derived/derived_parts.h"
#include "store/postgres/connection.h"
#include "store/postgres/derived/pg_statements.h"

namespace hh::store {

class PgChangeFeed {
 public:
  // Flushed on its own beyond this many buffered changes (bounds the statement's size).
  static constexpr size_t kMaxBuffered = 4096;

  static Result<PgChangeFeed> create(pg::Connection& db);
  Result<void> append(const Change& change);

  // Off by default (every append() inserts at once). Turning it off flushes nothing:
  // call flush() first.
  void set_deferred(bool deferred) { deferred_ = deferred; }
  // Inserts every buffered change, in order.
  Result<void> flush();
  // Drops buffered changes (their transaction rolled back).
  void discard();

 private:
  explicit PgChangeFeed(pg::Connection& db) : db_(&db) { discard(); }

  pg::Connection* db_;
  bool deferred_ = false;
  // The buffered changes by column: seq, table_name, row_key, op, row_count, from_ms, to_ms.
  ArrayLiteral columns_[8];
};

}  // namespace hh::store
