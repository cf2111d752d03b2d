#pragma once
// Writes outbox entries (store/outbox.h) inside the transaction of what they describe, on
// the write connection: one INSERT … SELECT per destination, so the rows a commit adds are
// copied in the database, never through this process.
//  - changes(): the change-feed rows after a change id (those of the current step);
//  - deliveries(): the webhook deliveries in a seq range (those of the current commit).
// A destination's `events` globs are matched against the delivery's event_type with
// SQLite's GLOB (case-sensitive; * ? and [...] as in a shell).
//
// Lifetime: the connection must outlive this object; used on the thread that owns it.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/outbox.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class OutboxWriter {
 public:
  // The rules of `mode` among `rules`; none: the writer does nothing.
  static Result<OutboxWriter> create(sqlite::Connection& db, std::span<const ForwardRule> rules, ForwardMode mode);

  // One that writes nothing.
  explicit OutboxWriter(sqlite::Connection& db) : db_(&db) {}

  bool active() const { return !inserts_.empty(); }
  // The newest change-feed row now (0 when empty): read when a step begins, its rows come after it.
  Result<int64_t> last_change_id();
  // Entries for the change-feed rows after `after_change_id`.
  Result<void> changes(int64_t after_change_id);
  // Entries for the webhook deliveries with after_seq < seq <= last_seq.
  Result<void> deliveries(int64_t after_seq, int64_t last_seq);

 private:
  OutboxWriter(sqlite::Connection& db, std::vector<sqlite::Statement> inserts)
      : db_(&db), inserts_(std::move(inserts)) {}

  sqlite::Connection* db_;
  std::vector<sqlite::Statement> inserts_;  // one per destination
};

// The entries the writer makes for `rule` from the deliveries ?1 <= seq <= ?2 (both
// modes), as one INSERT … SELECT: `forward requeue --dropped` makes dropped entries again.
std::string outbox_recreate_sql(const ForwardRule& rule);
// SQL true when the event type in `column` matches one of `rule`'s globs ("1" when it has
// none).
std::string outbox_event_filter(const ForwardRule& rule, std::string_view column);

}  // namespace hh::store
