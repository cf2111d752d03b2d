#pragma once
// Writes outbox entries (store/outbox.h) on PostgreSQL inside the transaction of what they
// describe, as store/sqlite/outbox/outbox_writer.h does on SQLite (the same rows): one
// INSERT … SELECT for all destinations of a mode, so the rows a commit adds are copied in
// the database, never through this process.
//  - deliveries(): an ingest commit's newly stored inbox rows, by seq. Not a range: other
//    instances take seqs from the same sequence, so one commit's are not contiguous.
//  - changes(): a processor step's change-feed rows, the newest `inserted` rows of the
//    feed (the step holds the lock on new ids from its first change to its commit, so no
//    other session's change comes after its first: lock_new_ids, pg_statements.h).
// A destination's `events` globs match the event type as SQLite's GLOB does (case-
// sensitive; * ? and [...]), translated to anchored regular expressions.
// A delivery whose body is not UTF-8 JSON is not forwarded (SQLite's json_valid check)
// and never fails the commit (hh_json_or_null, migration 002).
//
// Lifetime: the connection must outlive this object; used on the thread that owns it.
// The statements are prepared on the connection under names of this object's own.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/outbox.h"
#include "store/postgres/connection.h"

namespace hh::store {

class PgOutboxWriter {
 public:
  // Every rule of `rules` (both modes); none: the writer does nothing.
  static Result<PgOutboxWriter> create(pg::Connection& db, std::vector<ForwardRule> rules);

  // Whether any rule asks for entries (then the caller calls deliveries() and changes()).
  bool active() const { return !deliveries_.empty() || !changes_.empty(); }
  // Entries for the webhook deliveries among `stored_seqs` (one ingest commit's newly
  // stored inbox rows), in the same transaction.
  Result<void> deliveries(std::span<const int64_t> stored_seqs);
  // Entries for the change-feed rows the transaction inserted, `inserted` of them (the
  // newest), in the same transaction. Taking them as "after the newest id when the step
  // began" would take another session's changes committed meanwhile too, and forward
  // them twice.
  Result<void> changes(size_t inserted);

 private:
  PgOutboxWriter(pg::Connection& db, std::string deliveries, std::string changes)
      : db_(&db), deliveries_(std::move(deliveries)), changes_(std::move(changes)) {}

  pg::Connection* db_;
  std::string deliveries_, changes_;  // prepared statements' names; empty: no rule of that mode
};

// As outbox_writer.h on SQLite: the entries the writer makes for `rule` from the
// deliveries $1 <= seq <= $2, as one INSERT … SELECT (`forward requeue --dropped`), and
// the SQL that matches an event type in `column` against the rule's globs.
std::string pg_outbox_recreate_sql(const ForwardRule& rule);
std::string pg_outbox_event_filter(const ForwardRule& rule, std::string_view column);

}  // namespace hh::store
