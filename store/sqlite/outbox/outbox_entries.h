#pragma once
// The statements that make outbox entries (store/outbox.h) on SQLite: one INSERT … SELECT
// per destination over a range of deliveries (seq), so the entries are copied inside the
// database, never through this process.
//  - changes mode: the change-feed rows of those deliveries, in change order;
//  - deliveries mode: the webhook deliveries themselves.
// The writer makes them in the transactions they describe (WriterEntries) while the
// destination's sender keeps up; the sender, a bounded number ahead of what it sends, while
// it is behind (Outbox::catch_up(); 015-forward-positions.sql); `forward requeue
// --dropped` makes dropped ones again. A destination's `events` globs are
// matched against the delivery's event_type with SQLite's GLOB (case-sensitive; * ? and
// [...] as in a shell).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/outbox.h"
#include "store/sqlite/connection.h"

namespace hh::store {

// Who makes the entries of a statement, which says when they count from (`created_at`:
// max_age counts from it).
enum class EntriesMade {
  by_writer,  // in the transaction of what they describe: from now
  by_sender,  // later, when it catches up: from when their delivery was received
  requeued,   // again, by an operator: from now (they mean it)
};

// The entries of `rule` for the deliveries ?1 <= seq <= ?2, pending and due now.
std::string outbox_entries_sql(const ForwardRule& rule, EntriesMade made);
// SQL true when the event type in `column` matches one of `rule`'s globs ("1" when it has
// none).
std::string outbox_event_filter(const ForwardRule& rule, std::string_view column);

// `serve` forwards what happens from its start on: each rule's destination gets its
// position now (the last delivery applied in changes mode, the last stored in deliveries
// mode; 015-forward-positions.sql), never behind where it was (an interrupted rebuild
// applies again what was forwarded), but for one whose sender had taken the making over:
// that one keeps its position, and what it had not made before a stop or a crash is made
// after it. With `all_configured` (the rules are the configuration's, all of them), the
// positions of destinations and modes no longer configured go: what their sender had not
// made is not forwarded.
Result<void> start_forward_positions(sqlite::Connection& db, std::span<const ForwardRule> rules,
                                    bool all_configured);

// The writer's part, on the write connection inside an ingest commit (deliveries mode) or
// a processor step (changes mode): for each destination of one mode whose sender has not
// taken the making over, the entries of the deliveries after its position up to the
// transaction's last one; the position moves with them.
//
// Lifetime: the connection must outlive this object; used on the thread that owns it.
class WriterEntries {
 public:
  // The rules of `mode` among `rules`; none: made_through() does nothing.
  static Result<WriterEntries> create(sqlite::Connection& db, std::span<const ForwardRule> rules, ForwardMode mode);
  WriterEntries() = default;

  // Every delivery up to `last_seq` is stored (deliveries mode) or applied (changes mode)
  // in the current transaction.
  Result<void> made_through(int64_t last_seq);

 private:
  struct Destination {
    std::string name;
    sqlite::Statement position;  // after_seq, while the writer makes the entries
    sqlite::Statement make;      // ?1 first seq, ?2 last seq
    sqlite::Statement advance;   // ?1 the new after_seq
  };
  explicit WriterEntries(std::vector<Destination> destinations) : destinations_(std::move(destinations)) {}
  std::vector<Destination> destinations_;
};

}  // namespace hh::store
