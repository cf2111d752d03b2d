#pragma once
// The forwarding outbox (spec §10): what is still to be pushed to each `[[forward]]`
// destination, kept in the store so a crash neither loses nor invents a forward.
//
// Entries are written by the store itself, inside the transactions whose rows they
// describe (StoreOptions::forward_rules says for which destinations):
//  - `changes` mode: one entry per change-feed row of a processor step, in that step's
//    transaction (after its change rows);
//  - `deliveries` mode: one entry per stored webhook delivery, in the ingest commit that
//    stored it (a duplicate is not stored, so not forwarded again).
// An entry copies what it describes (table, key, op, …), so a rebuild that empties the
// change feed does not orphan it. Its id never comes back after it is sent (the backend
// deduplicates on ids built from it).
//
// An Outbox handle is what the sender (forward/) and `healthhook forward` use: on a
// connection of its own, beside the writer; each write is one short transaction. Sent
// entries are deleted; `dead` ones stay until re-queued; `dropped` ones (over the disk
// budget) stay as a record.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace hh::store {

enum class ForwardMode { changes, deliveries };

// Which entries the store writes for one destination.
struct ForwardRule {
  std::string destination;          // the [[forward]] name
  ForwardMode mode = ForwardMode::changes;
  std::vector<std::string> events;  // globs over the delivery's event_type; empty: every delivery
};

struct OutboxEntry {
  int64_t outbox_id = 0;
  std::string destination;
  std::string kind;                 // "change" or "delivery"
  int64_t seq = 0;                  // the delivery (that caused the change)
  std::optional<std::string> event_type;
  // kind "change": the change-feed row (store/sqlite/migrations/002-derived.sql). kind
  // "delivery": table_name "deliveries", row_key the message id.
  std::string table_name, row_key, op;
  int64_t row_count = 1;
  std::optional<int64_t> from_ms, to_ms;
  std::optional<std::string> user_id;  // whom it is about, when known
  std::optional<std::string> order_key;  // user/resource: entries of one key go out in order
  std::string state;                   // pending, dead, dropped
  int64_t attempts = 0;
  int64_t created_at_ms = 0;          // written, or re-queued
  int64_t next_attempt_at_ms = 0;
  std::optional<int64_t> batch_id;     // the POST it failed in (that POST's first entry's id): retried together
  std::optional<int64_t> last_status;  // HTTP status of the last attempt (none: no answer)
  std::optional<std::string> last_error;
};

// One destination's figures.
struct OutboxFigures {
  std::string destination;
  int64_t pending = 0, dead = 0, dropped = 0;
  std::optional<int64_t> oldest_pending_created_at_ms;
};

struct OutboxSelection {
  std::optional<int64_t> outbox_id;  // one entry
  std::optional<std::string> destination;
  std::optional<std::string> state;  // pending, dead, dropped; none: any
  int64_t after_id = 0;
  int64_t limit = 1000;
};

// admin (`healthhook forward`): each write is durable when it returns. sender: the
// sender's outcomes (thousands a second) need not be: an outcome lost to a power cut only
// sends its message once more, under the same id, which is what at-least-once promises
// anyway; the writer's next synced commit makes them durable meanwhile.
enum class OutboxUse { admin, sender };

class Outbox {
 public:
  virtual ~Outbox() = default;

  // Entries matching `selection`, in outbox_id order (`forward list`, and the sender's
  // look at what is pending: due or not).
  virtual Result<std::vector<OutboxEntry>> list(const OutboxSelection& selection) = 0;
  virtual Result<std::optional<OutboxEntry>> find(int64_t outbox_id) = 0;
  virtual Result<std::vector<OutboxFigures>> figures() = 0;

  // The sender's outcomes, each one transaction over `ids`:
  // delivered: deleted.
  virtual Result<void> sent(std::span<const int64_t> ids) = 0;
  // failed for now: attempts + 1, due again at `next_attempt_at_ms`; `batch_id` (when they
  // went out together in one POST, named after it) keeps them together for the retries.
  virtual Result<void> retry_later(std::span<const int64_t> ids, int64_t next_attempt_at_ms,
                                   std::optional<int64_t> status, const std::string& error,
                                   std::optional<int64_t> batch_id) = 0;
  // failed for good: attempts + 1, state dead.
  virtual Result<void> dead(std::span<const int64_t> ids, std::optional<int64_t> status, const std::string& error) = 0;

  // `forward requeue`: the entries of `selection` (whatever their state; `limit` does not
  // apply) → pending, attempts 0, due at `now_ms`, no batch, and created at `now_ms` (so
  // max_age counts from the requeue: an operator who sends them again means it). Returns
  // how many.
  virtual Result<int64_t> requeue(const OutboxSelection& selection, int64_t now_ms) = 0;
  // Pause and resume (`forward pause|resume`, the console): while a destination is paused
  // its sender starts no POST; entries keep accumulating (within max_outbox_mib). Returns
  // whether the state changed. The pause is kept in the store: it survives a restart.
  virtual Result<bool> set_paused(const std::string& destination, bool paused, int64_t now_ms) = 0;
  // The paused destinations, in name order.
  virtual Result<std::vector<std::string>> paused() = 0;

  // The disk budget: all but the newest `keep` pending entries of `destination` → dropped,
  // with `error`. Returns how many.
  virtual Result<int64_t> drop_oldest(const std::string& destination, int64_t keep, const std::string& error) = 0;
};

}  // namespace hh::store
