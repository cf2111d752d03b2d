#pragma once
// The forwarding outbox (spec §10): what is still to be pushed to each `[[forward]]`
// destination, kept in the store so a crash neither loses nor invents a forward.
//
// One entry per change-feed row (`changes` mode), or per stored webhook delivery
// (`deliveries` mode; a duplicate is not stored, so not forwarded again), for the
// destinations of StoreOptions::forward_rules, made inside the transactions whose rows
// they describe (a processor step's changes, an ingest commit's deliveries). On SQLite
// only while the destination's sender keeps up: once the outbox holds many of its entries
// (a backend down or slower than ingest), the sender takes the making over (take_over())
// and makes them itself from the change feed or the inbox, a bounded number ahead of what
// it sends (catch_up()), until it has caught up and hands it back. So the writer, ingest's
// narrow point, stops copying every change into an outbox that only grows; what is not
// made yet waits in the feed or the inbox, which the store keeps anyway. How far each
// destination's entries are made, and by whom: forward_positions
// (store/sqlite/migrations/015-forward-positions.sql,
// docs/decisions/057-entries-made-by-the-sender-while-it-is-behind.md).
// An entry copies what it describes (table, key, op, …), so a rebuild that empties the
// change feed does not orphan it. Its id never comes back after it is sent (the backend
// deduplicates on ids built from it).
//
// The sender's promises rest on two things kept here (store/sqlite/migrations/
// 010-outbox-posts.sql):
//  - post_id: the entries of a POST are pinned to it (pin()) before it goes out, and stay
//    pinned until they are gone: a retry is the same entries under the same webhook-id,
//    or nothing (a POST whose entries die, die together); in changes mode with the content
//    each carried (`content`, pinned with them), so a retry is the same bytes too
//    (store/sqlite/migrations/017-outbox-content.sql).
//  - head: the first pending entry of each order key (user/resource) of a destination is
//    marked, so the sender finds what is due per key (due_heads(), an index of the heads
//    by due time) however many entries wait behind a key that is failing. The writer
//    inserts entries unmarked (NULL); the sender marks them (classify()), moves the mark
//    to a key's next entry when its head is sent or dead, and a planner that finds a mark
//    on an entry that is not its key's first moves it (demote()). Only the sender and
//    `forward requeue` (which unmarks what it re-queues) write marks.
//
// What the disk budget drops is not kept entry by entry: it is recorded per destination
// as ranges of seq (the deliveries the entries came from) with a count, and `forward
// requeue --dropped` makes the entries again from the change feed or the inbox. The
// ranges count against the budget too, and the oldest are merged (merge_dropped()) before
// they take more than their share of it (forward/outbox_budget.h).
//
// An Outbox handle is what the sender (forward/) and `healthhook forward` use: on a
// connection of its own, beside the writer; each write is one short transaction. Sent
// entries are deleted; `dead` ones stay until re-queued.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hh::store {

enum class ForwardMode { changes, deliveries };
// As the configuration and forward_positions.mode spell it.
inline std::string_view mode_name(ForwardMode mode) { return mode == ForwardMode::changes ? "changes" : "deliveries"; }

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
  std::string state;                   // pending, dead
  int64_t attempts = 0;                // of this entry
  int64_t created_at_ms = 0;          // written, or re-queued
  int64_t next_attempt_at_ms = 0;
  std::optional<int64_t> post_id;      // the POST it went out in (pinned before it was sent)
  std::optional<bool> head;            // the first pending entry of its key; none: not looked at yet
  std::optional<int64_t> last_status;  // HTTP status of the last attempt (none: no answer)
  std::optional<std::string> last_error;
  // changes mode: the change as its POST carried it (a JSON object, its row included),
  // read when the POST was pinned and written when an attempt failed; every later attempt
  // sends these bytes. None: not failed yet, a POST of many rows, a delivery (its body
  // never changes), or pinned by a version before this column.
  std::optional<std::string> content;
};

// Entries the disk budget dropped: those of `destination` from the deliveries first_seq
// to last_seq (both included).
struct DroppedRange {
  int64_t range_id = 0;
  std::string destination;
  int64_t first_seq = 0, last_seq = 0;
  int64_t entries = 0;       // how many were dropped in it
  int64_t dropped_at_ms = 0;  // the last drop that added to it
};

// One destination's figures.
struct OutboxFigures {
  std::string destination;
  int64_t pending = 0, dead = 0;
  int64_t dropped = 0, dropped_ranges = 0;  // entries dropped (in ranges not re-queued), and the ranges
  std::optional<int64_t> oldest_pending_created_at_ms;
  // Deliveries whose entries the sender has yet to make from the change feed or the inbox
  // (it took the making over from the writer: catch_up()); 0 while the writer makes them.
  int64_t unmade_deliveries = 0;
  // The contents pinned POSTs keep (OutboxEntry::content), in bytes: max_outbox_mib counts them.
  int64_t content_bytes = 0;
};

struct OutboxSelection {
  std::optional<int64_t> outbox_id;  // one entry
  std::optional<std::string> destination;
  std::optional<std::string> state;  // pending, dead; none: any
  int64_t after_id = 0;
  int64_t limit = 1000;
  std::optional<int64_t> seq;  // the entries of one delivery (the console's delivery page)
};

// A POST about to go out: its entries are pinned to `post_id`.
struct PostPin {
  int64_t post_id = 0;
  std::vector<int64_t> ids;
  std::vector<std::string> contents;  // changes mode: what each entry carries (ids' order); else empty
};

// A failed POST of several users and resources, split (forward/post_scheduler.h: a
// failing user holds back no other), and when each part is due again.
struct PostSplit {
  PostPin kept;                  // its first key's entries, pinned to a new POST
  int64_t kept_due_at_ms = 0;
  std::vector<int64_t> leaving;  // the others' entries, out of any POST
  int64_t leaving_due_at_ms = 0;
  std::optional<int64_t> status;  // the failed attempt's (none: no answer), kept as each entry's last
  std::string error;
};

// What drop_oldest() did.
struct Dropped {
  int64_t entries = 0;
  int64_t ranges = 0;  // ranges written or extended
};

// What catch_up() did.
struct CaughtUp {
  int64_t entries = 0;     // entries made
  bool more = false;       // deliveries are left whose entries are not made yet
  bool by_writer = false;  // the writer makes the entries (from now on, when handed back)
};

// What requeue_dropped() did for one destination.
struct RecreatedDropped {
  int64_t ranges = 0;
  int64_t dropped = 0;    // entries the ranges had recorded
  int64_t recreated = 0;  // entries made again (pending, due now)
  // dropped − recreated, when more were dropped: entries whose rows are gone (changes
  // mode: no longer in the change feed, e.g. erased; deliveries mode: no longer in the
  // inbox, or their body was removed by [retention] body_days).
  int64_t not_recreated = 0;
};

// admin (`healthhook forward`): each write is durable when it returns. sender: the
// sender's outcomes (thousands a second) need not be: an outcome lost to a power cut only
// sends its message once more, under the same id, which is what at-least-once promises
// anyway; the writer's next synced commit makes them durable meanwhile.
enum class OutboxUse { admin, sender };

class Outbox {
 public:
  virtual ~Outbox() = default;

  // Entries matching `selection`, in outbox_id order (`forward list`).
  virtual Result<std::vector<OutboxEntry>> list(const OutboxSelection& selection) = 0;
  virtual Result<std::optional<OutboxEntry>> find(int64_t outbox_id) = 0;
  virtual Result<std::vector<OutboxFigures>> figures() = 0;
  // The dropped ranges (of one destination, or all), oldest first.
  virtual Result<std::vector<DroppedRange>> dropped(const std::optional<std::string>& destination) = 0;

  // The sender's look at one destination. Each is cheap whatever waits in the outbox: an
  // index lookup plus what it returns (the costs are in 010-outbox-posts.sql).
  //
  // Whether the sender can take the making of entries over (SQLite); false: the writer
  // always makes them, and take_over() and catch_up() do nothing.
  virtual bool sender_can_make_entries() const = 0;
  // The sender makes `rule`'s entries from now on (the writer's next transaction makes none).
  virtual Result<void> take_over(const ForwardRule& rule) = 0;
  // While the sender makes them: the entries of `rule`'s destination for at most
  // `deliveries` deliveries after its position, up to the last delivery applied (changes
  // mode) or stored (deliveries mode), pending and due now, created at their delivery's
  // receipt (max_age counts from it); the position moves past them. With `hand_back`, the
  // writer makes them again once this reaches that last delivery. One transaction, taken
  // only when there is something to do. None for a destination without a position (not one
  // `serve` opened the store with).
  virtual Result<CaughtUp> catch_up(const ForwardRule& rule, int64_t deliveries, bool hand_back) = 0;
  // How many pending entries `destination` holds, counted up to `cap` (dead ones wait for
  // an operator, not for the sender: they do not make it take the making over).
  virtual Result<int64_t> held(const std::string& destination, int64_t cap) = 0;
  //
  // Marks up to `limit` entries the writer added since (head NULL): with `ordered`, head
  // when no earlier pending entry of its key exists, else not; without, every entry is a
  // head. Returns how many it marked (fewer than `limit`: none are left).
  virtual Result<int64_t> classify(const std::string& destination, bool ordered, int64_t limit) = 0;
  // Pending heads due at `now_ms` (next_attempt_at <= now_ms), by due time then id.
  virtual Result<std::vector<OutboxEntry>> due_heads(const std::string& destination, int64_t now_ms,
                                                     int64_t limit) = 0;
  // The first `limit` pending entries of one order key, in outbox order.
  virtual Result<std::vector<OutboxEntry>> key_entries(const std::string& destination, const std::string& order_key,
                                                       int64_t limit) = 0;
  // The pending entries pinned to `post_id`, in outbox order.
  virtual Result<std::vector<OutboxEntry>> post_entries(int64_t post_id) = 0;
  // Every entry pinned to `post_id`, pending or dead, in outbox order (`forward show`).
  virtual Result<std::vector<OutboxEntry>> entries_of_post(int64_t post_id) = 0;
  // The entry is marked but is not its key's first pending entry after all: the mark
  // moves to the key's first pending entry (one transaction).
  virtual Result<void> demote(int64_t outbox_id) = 0;
  // Pins each POST's entries to it, all in one transaction, before any of them goes out.
  virtual Result<void> pin(std::span<const PostPin> posts) = 0;

  // The sender's outcomes, each one transaction over `ids`:
  // delivered: deleted; their keys' next pending entries become heads.
  virtual Result<void> sent(std::span<const int64_t> ids) = 0;
  // failed for now: each entry's attempts + 1, due again at `next_attempt_at_ms` (still
  // pinned to its POST).
  virtual Result<void> retry_later(std::span<const int64_t> ids, int64_t next_attempt_at_ms,
                                   std::optional<int64_t> status, const std::string& error) = 0;
  // A POST of several users and resources that failed, split: `kept` pinned as pin() pins
  // a POST, `leaving` out of any POST (post_id NULL, still pending; content kept: a change that went out keeps its bytes in the POST it joins next), each part
  // due again at its time with the attempt's status and error, and neither charged the
  // attempt (attempts unchanged: the failure may have been any of their users'). One
  // transaction: a crash in between must neither leave part of a POST under its old id nor
  // its parts due at once.
  virtual Result<void> split(const PostSplit& parts) = 0;
  // failed for good: each entry's attempts + 1, state dead; their keys' next pending
  // entries become heads.
  virtual Result<void> dead(std::span<const int64_t> ids, std::optional<int64_t> status, const std::string& error) = 0;

  // `forward requeue`: the entries of `selection` (whatever their state; `limit` does not
  // apply), and every entry pinned to the same POST as one of them (a POST goes out whole
  // or not at all) → pending, attempts 0, due at `now_ms`, created at `now_ms` (so max_age
  // counts from the requeue: an operator who sends them again means it), unmarked (the
  // sender marks them again). They keep their POST, so a POST that went out before goes
  // out again under its webhook-id with the same entries. Returns how many. In steps of
  // kRequeueStep selected entries (with their POSTs' other entries), each one short
  // transaction, so re-queueing a large dead backlog never holds the writer for long;
  // stopped half-way (a crash, a failed step), the command can simply be run again. Each
  // step checks the selection again under the write lock: what another requeue sent out
  // meanwhile is left alone.
  static constexpr int64_t kRequeueStep = 4096;
  virtual Result<int64_t> requeue(const OutboxSelection& selection, int64_t now_ms) = 0;
  // Pause and resume (`forward pause|resume`, the console): while a destination is paused
  // its sender starts no POST; entries keep accumulating (within max_outbox_mib). Returns
  // whether the state changed. The pause is kept in the store: it survives a restart.
  virtual Result<bool> set_paused(const std::string& destination, bool paused, int64_t now_ms) = 0;
  // The paused destinations, in name order.
  virtual Result<std::vector<std::string>> paused() = 0;


  // The disk budget: drops the `count` oldest (by outbox_id) pending or dead entries of
  // `rule`'s destination, widened to whole deliveries (seq) and whole POSTs, except the
  // entries of `keep` (in flight), and records them as seq ranges. A range ends where a
  // delivery between two dropped ones could have had entries that were sent (the change
  // feed, or the inbox in deliveries mode, has rows of it), so re-creating a range makes
  // what was dropped and nothing that was sent, but for the other changes of a dropped
  // delivery. The keys that lost their head get their next entry as head. One transaction.
  virtual Result<Dropped> drop_oldest(const ForwardRule& rule, int64_t count, std::span<const int64_t> keep,
                                      int64_t now_ms) = 0;
  // The record of drops kept within its share of the budget: the oldest ranges of
  // `destination` (by first_seq) become one, so that `keep` ranges are left (at least 1).
  // The merged range spans all of them, with their counts; re-creating it (`forward requeue
  // --dropped`) also makes again what was sent between them, under new ids. Returns how
  // many ranges fewer there are. One transaction.
  virtual Result<int64_t> merge_dropped(const std::string& destination, int64_t keep) = 0;
  // `forward requeue --dropped`: the entries of `rule`'s dropped ranges made again, as the
  // writer makes them (the change feed's rows of those seqs in changes mode, the inbox's
  // webhook deliveries with their body in deliveries mode), pending and due now with new
  // ids; the ranges are forgotten. One transaction.
  virtual Result<RecreatedDropped> requeue_dropped(const ForwardRule& rule) = 0;
};

// `forward requeue ID` and the console's requeue of ids: one entry (with its POST) made
// pending again, unless it already is. Requeueing a pending entry changed nothing for the
// operator but reset its attempts and restarted its max_age, and was counted as requeued;
// only a dead entry is selected now (checked again under requeue()'s write lock).
struct OneRequeued {
  int64_t requeued = 0;     // entries made pending (its POST's others too); 0: none
  bool exists = true;       // false: no entry has that id. requeued 0 and exists: already pending
};
inline Result<OneRequeued> requeue_unless_pending(Outbox& outbox, int64_t outbox_id, int64_t now_ms) {
  OutboxSelection selection;
  selection.outbox_id = outbox_id;
  selection.state = "dead";
  auto count = outbox.requeue(selection, now_ms);
  if (!count) return fail(count);
  if (*count > 0) return OneRequeued{*count, true};
  auto entry = outbox.find(outbox_id);
  if (!entry) return fail(entry);
  return OneRequeued{0, entry->has_value()};
}

}  // namespace hh::store
