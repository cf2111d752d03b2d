#pragma once
// store::Outbox for every backend (store/outbox.h says what each call promises), written
// once over a backend's outbox session. Statements are in the neutral spelling of
// store/schema/dialect.h; the session spells each once.
//
// A backend's `Session` (store/sqlite/outbox/sqlite_outbox.cpp,
// store/postgres/outbox/pg_outbox.cpp) provides:
//
//   Session::Transaction               RAII: rolls back unless commit() succeeded
//   begin() -> Result<Transaction>
//   rows(slot, sql, args, read)        -> Result<void>: read(row) for each row; `row` has
//                                      the column readers of store/read_query_common.h
//   exec(slot, sql, args)              -> Result<int64_t>: the rows it changed
//   may_forward() -> Result<bool>      whether this handle may classify, send and drop: a
//                                      sender on PostgreSQL only while it holds the
//                                      forwarding lock (instances forward one at a time)
//   event_filter(rule, column)         the rule's event globs as a condition on `column`
//   recreate_sql(rule)                 the statement that makes a dropped range's entries
//                                      again (?1 first seq, ?2 last seq)
//   processed_seq_sql()                an expression: every delivery up to it is applied
//   kSenderCanMakeEntries              true: the sender may take the making of entries
//                                      over (catch_up()), with entries_sql(rule) (?1 first
//                                      seq, ?2 last seq) up to the bound of its position
//                                      (the view forward_backlog); false: the writer always
//                                      makes them
//
// `slot` numbers the statements the sender runs several times a second (Slot below): a
// session may keep them prepared; -1 for the others.
//
// Lifetime: one thread at a time.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/outbox.h"
#include "store/queries/query_args.h"

namespace hh::store {

// The statements a session may keep prepared.
enum OutboxSlot : int {
  kOutboxUnclassified,
  kOutboxClassify,
  kOutboxDueHeads,
  kOutboxKeyEntries,
  kOutboxPostEntries,
  kOutboxDemote,
  kOutboxPromoteFirst,
  kOutboxHeld,
  kOutboxPosition,
  kOutboxSlots,
  kOutboxNoSlot = -1,
};

inline constexpr std::string_view kOutboxColumns =
    "SELECT outbox_id, destination, kind, seq, event_type, table_name, row_key, op, row_count, from_ms, to_ms, "
    "user_id, order_key, state, attempts, created_at, next_attempt_at, post_id, head, last_status, last_error, "
    "content FROM outbox ";

template <typename Row>
OutboxEntry read_outbox_entry(const Row& s) {
  const auto text = [&](int column) -> std::optional<std::string> {
    auto value = s.column_optional_text(column);
    return value ? std::optional<std::string>(*value) : std::nullopt;
  };
  OutboxEntry e;
  e.outbox_id = s.column_int(0);
  e.destination = std::string(s.column_text(1));
  e.kind = std::string(s.column_text(2));
  e.seq = s.column_int(3);
  e.event_type = text(4);
  e.table_name = std::string(s.column_text(5));
  e.row_key = std::string(s.column_text(6));
  e.op = std::string(s.column_text(7));
  e.row_count = s.column_int(8);
  e.from_ms = s.column_optional_int(9);
  e.to_ms = s.column_optional_int(10);
  e.user_id = text(11);
  e.order_key = text(12);
  e.state = std::string(s.column_text(13));
  e.attempts = s.column_int(14);
  e.created_at_ms = s.column_int(15);
  e.next_attempt_at_ms = s.column_int(16);
  e.post_id = s.column_optional_int(17);
  e.head = s.column_optional_bool(18);
  e.last_status = s.column_optional_int(19);
  e.last_error = text(20);
  e.content = text(21);
  return e;
}

// "(3, 5, 8)": outbox ids written into a statement. They are integers of ours, never text
// from outside; one statement for any number of them on both engines.
inline std::string outbox_id_list(std::span<const int64_t> ids) {
  std::string out = "(";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ids[i]);
  }
  return out + ")";
}

template <typename Session>
class OutboxOf final : public Outbox {
 public:
  explicit OutboxOf(Session session) : session_(std::move(session)) {}

  Result<std::vector<OutboxEntry>> list(const OutboxSelection& selection) override {
    return entries(kOutboxNoSlot,
                   std::string(kOutboxColumns) +
                       "WHERE (?1::text IS NULL OR destination = ?1) AND (?2::text IS NULL OR state = ?2) "
                       "AND outbox_id > ?3 AND (?5::bigint IS NULL OR outbox_id = ?5) AND (?6::bigint IS NULL OR seq = ?6) "
                       "ORDER BY outbox_id LIMIT ?4",
                   QueryArgs()
                       .add(selection.destination)
                       .add(selection.state)
                       .add(selection.after_id)
                       .add(selection.limit)
                       .add(selection.outbox_id)
                       .add(selection.seq));
  }

  Result<std::optional<OutboxEntry>> find(int64_t outbox_id) override {
    auto found = entries(kOutboxNoSlot, std::string(kOutboxColumns) + "WHERE outbox_id = ?1", QueryArgs().add(outbox_id));
    if (!found) return fail(found);
    if (found->empty()) return std::optional<OutboxEntry>{};
    return std::optional<OutboxEntry>{std::move(found->front())};
  }

  Result<std::vector<OutboxFigures>> figures() override {
    std::vector<OutboxFigures> all;
    auto read = session_.rows(
        kOutboxNoSlot,
        "SELECT destination, sum(pending), sum(dead), sum(dropped), sum(ranges), min(oldest), sum(unmade), "
        "sum(content_bytes) FROM ("
        "SELECT destination, count(*) FILTER (WHERE state = 'pending') AS pending, "
        "count(*) FILTER (WHERE state = 'dead') AS dead, 0 AS dropped, 0 AS ranges, "
        "min(created_at) FILTER (WHERE state = 'pending') AS oldest, 0 AS unmade, "
        "coalesce(sum(content_bytes), 0) AS content_bytes FROM outbox GROUP BY destination "
        "UNION ALL SELECT destination, 0, 0, sum(entries), count(*), NULL, 0, 0 FROM outbox_dropped GROUP BY destination" +
            unmade_figures() + ") AS f GROUP BY destination ORDER BY destination COLLATE \"C\"",
        QueryArgs(), [&](const auto& s) {
          all.push_back({std::string(s.column_text(0)), s.column_int(1), s.column_int(2), s.column_int(3),
                         s.column_int(4), s.column_optional_int(5), s.column_int(6), s.column_int(7)});
        });
    if (!read) return fail(read);
    return all;
  }

  Result<std::vector<DroppedRange>> dropped(const std::optional<std::string>& destination) override {
    std::vector<DroppedRange> ranges;
    auto read = session_.rows(
        kOutboxNoSlot,
        "SELECT range_id, destination, first_seq, last_seq, entries, dropped_at FROM outbox_dropped "
        "WHERE ?1::text IS NULL OR destination = ?1 ORDER BY destination COLLATE \"C\", first_seq, range_id",
        QueryArgs().add(destination), [&](const auto& s) {
          ranges.push_back({s.column_int(0), std::string(s.column_text(1)), s.column_int(2), s.column_int(3),
                            s.column_int(4), s.column_int(5)});
        });
    if (!read) return fail(read);
    return ranges;
  }

  Result<int64_t> classify(const std::string& destination, bool ordered, int64_t limit) override {
    auto forwarding = session_.may_forward();
    if (!forwarding) return fail(forwarding);
    if (!*forwarding) return int64_t{0};
    // Read first: an UPDATE takes SQLite's write lock even when it changes nothing, and the
    // sender looks ten times a second. The first unmarked entry by outbox_id, not EXISTS:
    // that order is what makes SQLite's planner take outbox_unclassified (it drops an ORDER
    // BY inside EXISTS). Otherwise it took outbox_keys, which matches two of the terms, and
    // read the table row of every pending entry for `head`: a look over a backlog of
    // 180,000 entries took most of a core (docs/decisions/053-a-look-reads-what-it-finds.md).
    bool found = false;
    auto any = session_.rows(
        kOutboxUnclassified,
        "SELECT outbox_id FROM outbox WHERE destination = ?1 AND state = 'pending' AND head IS NULL "
        "ORDER BY outbox_id LIMIT 1",
        QueryArgs().add(destination), [&](const auto&) { found = true; });
    if (!any) return fail(any);
    if (!found) return int64_t{0};
    return session_.exec(kOutboxClassify,
                         "UPDATE outbox SET head = CASE WHEN ?2::bigint = 0 OR order_key IS NULL THEN 1 "
                         "WHEN outbox_id = (SELECT min(o.outbox_id) FROM outbox AS o "
                         "WHERE o.destination = outbox.destination AND o.state = 'pending' "
                         "AND o.order_key = outbox.order_key) THEN 1 ELSE 0 END "
                         "WHERE outbox_id IN (SELECT outbox_id FROM outbox WHERE destination = ?1 AND state = 'pending' "
                         "AND head IS NULL ORDER BY outbox_id LIMIT ?3)",
                         QueryArgs().add(destination).add(int64_t{ordered ? 1 : 0}).add(limit));
  }

  bool sender_can_make_entries() const override { return Session::kSenderCanMakeEntries; }

  Result<void> take_over(const ForwardRule& rule) override {
    if constexpr (!Session::kSenderCanMakeEntries) {
      return {};
    } else {
      auto moved = session_.exec(kOutboxNoSlot,
                                 "UPDATE forward_positions SET writer_makes = 0 WHERE destination = ?1 AND mode = ?2",
                                 position_of(rule));
      if (!moved) return fail(moved);
      return {};
    }
  }

  Result<CaughtUp> catch_up(const ForwardRule& rule, int64_t deliveries, bool hand_back) override {
    CaughtUp out;
    if constexpr (!Session::kSenderCanMakeEntries) {
      out.by_writer = true;
      return out;
    } else {
      auto forwarding = session_.may_forward();
      if (!forwarding) return fail(forwarding);
      if (!*forwarding) return out;
      // Read first, outside a transaction: the sender looks many times a second, and a
      // write transaction would hold the writer each time even with nothing to do. Read
      // again inside it: a step or commit may have landed meanwhile, and a hand-back must
      // start the writer exactly where this leaves off.
      std::optional<int64_t> after;
      int64_t bound = 0;
      const auto read_position = [&] {
        after.reset();
        return session_.rows(
            kOutboxPosition,
            "SELECT after_seq, writer_makes, bound FROM forward_backlog WHERE destination = ?1 AND mode = ?2",
            position_of(rule), [&](const auto& row) {
              after = row.column_int(0);
              out.by_writer = row.column_int(1) != 0;
              bound = row.column_int(2);
            });
      };
      if (auto read = read_position(); !read) return fail(read);
      if (!after || out.by_writer || (*after >= bound && !hand_back)) return out;
      auto txn = session_.begin();
      if (!txn) return fail(txn);
      if (auto read = read_position(); !read) return fail(read);
      if (!after || out.by_writer) return out;
      const int64_t last = std::max(*after, std::min(bound, *after + std::max<int64_t>(deliveries, 1)));
      out.by_writer = hand_back && last >= bound;
      if (last > *after) {
        auto made = session_.exec(kOutboxNoSlot, session_.entries_sql(rule), QueryArgs().add(*after + 1).add(last));
        if (!made) return fail(made);
        out.entries = *made;
      }
      auto moved = session_.exec(
          kOutboxNoSlot,
          "UPDATE forward_positions SET after_seq = ?3, writer_makes = ?4 WHERE destination = ?1 AND mode = ?2",
          position_of(rule).add(last).add(int64_t{out.by_writer ? 1 : 0}));
      if (!moved) return fail(moved);
      if (auto committed = txn->commit(); !committed) return fail(committed);
      out.more = last < bound;
      return out;
    }
  }

  Result<int64_t> held(const std::string& destination, int64_t cap) override {
    int64_t n = 0;
    auto read = session_.rows(kOutboxHeld,
                              "SELECT count(*) FROM (SELECT 1 FROM outbox WHERE destination = ?1 "
                              "AND state = 'pending' LIMIT ?2) AS h",
                              QueryArgs().add(destination).add(cap), [&](const auto& row) { n = row.column_int(0); });
    if (!read) return fail(read);
    return n;
  }

  Result<std::vector<OutboxEntry>> due_heads(const std::string& destination, int64_t now_ms, int64_t limit) override {
    auto forwarding = session_.may_forward();
    if (!forwarding) return fail(forwarding);
    if (!*forwarding) return std::vector<OutboxEntry>();
    return entries(kOutboxDueHeads,
                   std::string(kOutboxColumns) +
                       "WHERE destination = ?1 AND state = 'pending' AND head = 1 AND next_attempt_at <= ?2 "
                       "ORDER BY next_attempt_at, outbox_id LIMIT ?3",
                   QueryArgs().add(destination).add(now_ms).add(limit));
  }

  Result<std::vector<OutboxEntry>> key_entries(const std::string& destination, const std::string& order_key,
                                               int64_t limit) override {
    return entries(kOutboxKeyEntries,
                   std::string(kOutboxColumns) +
                       "WHERE destination = ?1 AND state = 'pending' AND order_key = ?2 ORDER BY outbox_id LIMIT ?3",
                   QueryArgs().add(destination).add(order_key).add(limit));
  }

  Result<std::vector<OutboxEntry>> post_entries(int64_t post_id) override {
    return entries(kOutboxPostEntries,
                   std::string(kOutboxColumns) + "WHERE post_id = ?1 AND state = 'pending' ORDER BY outbox_id",
                   QueryArgs().add(post_id));
  }

  Result<std::vector<OutboxEntry>> entries_of_post(int64_t post_id) override {
    return entries(kOutboxNoSlot, std::string(kOutboxColumns) + "WHERE post_id = ?1 ORDER BY outbox_id",
                   QueryArgs().add(post_id));
  }

  Result<void> demote(int64_t outbox_id) override {
    auto txn = session_.begin();
    if (!txn) return fail(txn);
    if (auto done = session_.exec(kOutboxDemote, "UPDATE outbox SET head = 0 WHERE outbox_id = ?1",
                                  QueryArgs().add(outbox_id));
        !done) {
      return fail(done);
    }
    if (auto done = session_.exec(kOutboxPromoteFirst,
                                  "UPDATE outbox SET head = 1 WHERE outbox_id = (SELECT min(o.outbox_id) FROM outbox AS o "
                                  "JOIN outbox AS h ON o.destination = h.destination AND o.order_key = h.order_key "
                                  "WHERE h.outbox_id = ?1 AND o.state = 'pending') AND head IS DISTINCT FROM 1",
                                  QueryArgs().add(outbox_id));
        !done) {
      return fail(done);
    }
    return txn->commit();
  }

  Result<void> pin(std::span<const PostPin> posts) override {
    if (posts.empty()) return {};
    auto txn = session_.begin();
    if (!txn) return fail(txn);
    for (const PostPin& post : posts) {
      if (auto pinned = pin_one(post); !pinned) return pinned;
    }
    return txn->commit();
  }

  Result<void> split(const PostSplit& parts) override {
    auto txn = session_.begin();
    if (!txn) return fail(txn);
    if (auto pinned = pin_one(parts.kept); !pinned) return pinned;
    if (!parts.leaving.empty()) {
      // Out of the POST, but with what they carried, if it was kept: a change that went out
      // goes on with the same bytes under its id in whatever POST it joins (spec §10).
      if (auto done = session_.exec(kOutboxNoSlot,
                                    "UPDATE outbox SET post_id = NULL WHERE outbox_id IN " + outbox_id_list(parts.leaving),
                                    QueryArgs());
          !done) {
        return fail(done);
      }
    }
    // Neither part is charged the attempt: it may have failed for a user of the other.
    if (auto due = due_again(parts.kept.ids, parts.kept_due_at_ms, parts.status, parts.error, false); !due) {
      return due;
    }
    if (auto due = due_again(parts.leaving, parts.leaving_due_at_ms, parts.status, parts.error, false); !due) {
      return due;
    }
    return txn->commit();
  }

  // The key's next entry becomes its head by the triggers (SQLite 010-outbox-posts.sql,
  // PostgreSQL 004-outbox-posts.sql).
  Result<void> sent(std::span<const int64_t> ids) override {
    if (ids.empty()) return {};
    return done(session_.exec(kOutboxNoSlot, "DELETE FROM outbox WHERE outbox_id IN " + outbox_id_list(ids), QueryArgs()));
  }

  Result<void> retry_later(std::span<const int64_t> ids, int64_t next_attempt_at_ms, std::optional<int64_t> status,
                           const std::string& error) override {
    return due_again(ids, next_attempt_at_ms, status, error, true);
  }

  Result<void> dead(std::span<const int64_t> ids, std::optional<int64_t> status, const std::string& error) override {
    if (ids.empty()) return {};
    return done(session_.exec(kOutboxNoSlot,
                              "UPDATE outbox SET attempts = attempts + 1, state = 'dead', head = NULL, last_status = ?1, "
                              "last_error = ?2 WHERE outbox_id IN " + outbox_id_list(ids),
                              QueryArgs().add(status).add(error)));
  }

  Result<int64_t> requeue(const OutboxSelection& selection, int64_t now_ms) override {
    // The selection as a condition on ?2 (destination) and ?3 (state); the walk below reads
    // ?5 (seq) too, which the update need not check again: an entry's seq never changes.
    const std::string selected = "(?2::text IS NULL OR destination = ?2) AND (?3::text IS NULL OR state = ?3)";
    // ?1: the entry, or the step's position (the last id the step before read). One entry
    // is a primary-key lookup, not a walk of the outbox for it.
    const std::string which = selection.outbox_id ? "outbox_id = ?1" : "outbox_id > ?1";
    // An entry re-queued with an earlier step's POST may be selected again: counted once.
    std::unordered_set<int64_t> requeued;
    const auto failed = [&](const auto& error) {
      return fail(error, "forward requeue (" + std::to_string(requeued.size()) +
                             " entries were re-queued before this step; run it again for the rest)");
    };
    for (int64_t after = selection.after_id;;) {
      // Read outside the write lock (the walk for a rare state may be long)...
      std::vector<int64_t> ids;
      auto read = session_.rows(
          kOutboxNoSlot,
          "SELECT outbox_id FROM outbox WHERE " + which + " AND " + selected +
              " AND (?5::bigint IS NULL OR seq = ?5) ORDER BY outbox_id LIMIT ?4",
          QueryArgs()
              .add(selection.outbox_id ? *selection.outbox_id : after)
              .add(selection.destination)
              .add(selection.state)
              .add(kRequeueStep)
              .add(selection.seq),
          [&](const auto& s) { ids.push_back(s.column_int(0)); });
      if (!read) return failed(read);
      if (ids.empty()) break;
      after = ids.back();
      // ...and the selection checked again inside it: an entry another requeue has sent
      // out meanwhile (so no longer dead) is left alone, not reset under its POST in flight.
      const std::string listed = "outbox_id IN " + outbox_id_list(ids) + " AND " + selected;
      auto txn = session_.begin();
      if (!txn) return failed(txn);
      auto changed = session_.rows(
          kOutboxNoSlot,
          "UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = ?1, created_at = ?1, head = NULL "
          "WHERE (" + listed + ") OR post_id IN (SELECT post_id FROM outbox WHERE post_id IS NOT NULL AND " +
              listed + ") RETURNING outbox_id",
          QueryArgs().add(now_ms).add(selection.destination).add(selection.state),
          [&](const auto& s) { requeued.insert(s.column_int(0)); });
      if (!changed) return failed(changed);
      if (auto committed = txn->commit(); !committed) return failed(committed);
      if (selection.outbox_id || static_cast<int64_t>(ids.size()) < kRequeueStep) break;
    }
    return static_cast<int64_t>(requeued.size());
  }

  Result<Dropped> drop_oldest(const ForwardRule& rule, int64_t count, std::span<const int64_t> keep,
                              int64_t now_ms) override;
  Result<int64_t> merge_dropped(const std::string& destination, int64_t keep) override;
  Result<RecreatedDropped> requeue_dropped(const ForwardRule& rule) override;

  Result<bool> set_paused(const std::string& destination, bool paused, int64_t now_ms) override {
    auto changed = paused ? session_.exec(kOutboxNoSlot,
                                          "INSERT INTO forward_pauses (destination, paused_at) VALUES (?1, ?2) "
                                          "ON CONFLICT (destination) DO NOTHING",
                                          QueryArgs().add(destination).add(now_ms))
                          : session_.exec(kOutboxNoSlot, "DELETE FROM forward_pauses WHERE destination = ?1",
                                          QueryArgs().add(destination));
    if (!changed) return fail(changed);
    return *changed > 0;
  }

  Result<std::vector<std::string>> paused() override {
    std::vector<std::string> names;
    auto read = session_.rows(kOutboxNoSlot, "SELECT destination FROM forward_pauses ORDER BY destination COLLATE \"C\"",
                              QueryArgs(), [&](const auto& s) { names.emplace_back(s.column_text(0)); });
    if (!read) return fail(read);
    return names;
  }

 private:
  // One POST's pins, inside the caller's transaction.
  Result<void> pin_one(const PostPin& post) {
    if (post.ids.empty()) return {};
    if (post.contents.size() == post.ids.size()) {  // changes mode: each entry with what it carries
      for (size_t i = 0; i < post.ids.size(); ++i) {
        if (auto done = session_.exec(kOutboxNoSlot,
                                      "UPDATE outbox SET post_id = ?1, content = ?2, content_bytes = ?3 WHERE outbox_id = ?4",
                                      QueryArgs()
                                          .add(post.post_id)
                                          .add(post.contents[i])
                                          .add(static_cast<int64_t>(post.contents[i].size()))
                                          .add(post.ids[i]));
            !done) {
          return fail(done);
        }
      }
      return {};
    }
    return done(session_.exec(kOutboxNoSlot,
                              "UPDATE outbox SET post_id = ?1 WHERE outbox_id IN " + outbox_id_list(post.ids),
                              QueryArgs().add(post.post_id)));
  }

  // A failed attempt's entries, due again at `next_attempt_at_ms`: with `charged`, each
  // counts the attempt (retry_later()); not when it may have failed for another user
  // (split()). One statement, in the caller's transaction if any.
  Result<void> due_again(std::span<const int64_t> ids, int64_t next_attempt_at_ms, std::optional<int64_t> status,
                         const std::string& error, bool charged) {
    if (ids.empty()) return {};
    return done(session_.exec(kOutboxNoSlot,
                              std::string("UPDATE outbox SET ") + (charged ? "attempts = attempts + 1, " : "") +
                                  "next_attempt_at = ?1, last_status = ?2, last_error = ?3 WHERE outbox_id IN " +
                                  outbox_id_list(ids),
                              QueryArgs().add(next_attempt_at_ms).add(status).add(error)));
  }

  // figures(): the deliveries whose entries the sender has yet to make, per destination
  // that took the making over (none where the writer always makes them).
  std::string unmade_figures() const {
    if constexpr (!Session::kSenderCanMakeEntries) {
      return "";
    } else {
      return " UNION ALL SELECT destination, 0, 0, 0, 0, NULL, max(0, bound - after_seq), 0 FROM forward_backlog "
             "WHERE writer_makes = 0";
    }
  }

  // The forward_positions row of `rule` (?1, ?2).
  static QueryArgs position_of(const ForwardRule& rule) {
    return QueryArgs().add(rule.destination).add(mode_name(rule.mode));  // static text
  }

  struct DropRow {
    int64_t id, seq;
    std::optional<int64_t> post_id;
  };
  struct Range {
    int64_t first, last, entries;
  };

  static Result<void> done(const Result<int64_t>& ran) {
    if (!ran) return fail(ran);
    return {};
  }

  Result<std::vector<OutboxEntry>> entries(int slot, const std::string& sql, const QueryArgs& args) {
    std::vector<OutboxEntry> out;
    auto read = session_.rows(slot, sql, args, [&](const auto& s) { out.push_back(read_outbox_entry(s)); });
    if (!read) return fail(read);
    return out;
  }

  // The outbox rows of `sql` as (id, seq, post_id).
  Result<std::vector<DropRow>> drop_rows(const std::string& sql, const QueryArgs& args) {
    std::vector<DropRow> out;
    auto read = session_.rows(kOutboxNoSlot, sql, args, [&](const auto& s) {
      out.push_back({s.column_int(0), s.column_int(1), s.column_optional_int(2)});
    });
    if (!read) return fail(read);
    return out;
  }

  // Whether a delivery strictly between `after` and `before` could have had entries for
  // `rule` (its change-feed rows, or it, match the rule's event globs). EXISTS as 1 or 0:
  // both engines read an integer alike.
  Result<bool> could_have_entries(const ForwardRule& rule, int64_t after, int64_t before) {
    if (before <= after + 1) return false;
    const std::string filter = session_.event_filter(rule, "d.event_type");
    const std::string sql =
        rule.mode == ForwardMode::changes
            // A delivery between them not applied yet may still write changes (PostgreSQL's
            // sessions apply their shards of users each at its own pace).
            ? "SELECT CASE WHEN ?2 > 1 + " + session_.processed_seq_sql() +
              " OR EXISTS (SELECT 1 FROM changes AS c JOIN inbox AS d ON d.seq = c.seq "
              "WHERE c.seq > ?1 AND c.seq < ?2 AND " + filter + ") THEN 1 ELSE 0 END"
            : "SELECT CASE WHEN EXISTS (SELECT 1 FROM inbox AS d WHERE d.seq > ?1 AND d.seq < ?2 "
              "AND d.origin = 'webhook' AND " + filter + ") THEN 1 ELSE 0 END";
    bool exists = false;
    auto read = session_.rows(kOutboxNoSlot, sql, QueryArgs().add(after).add(before),
                              [&](const auto& s) { exists = s.column_int(0) != 0; });
    if (!read) return fail(read);
    return exists;
  }

  Session session_;
};

template <typename Session>
Result<Dropped> OutboxOf<Session>::drop_oldest(const ForwardRule& rule, int64_t count, std::span<const int64_t> keep,
                                               int64_t now_ms) {
  Dropped out;
  if (count <= 0) return out;
  // Only the forwarding instance keeps the budget.
  auto forwarding = session_.may_forward();
  if (!forwarding) return fail(forwarding);
  if (!*forwarding) return out;
  auto txn = session_.begin();
  if (!txn) return fail(txn);
  // The oldest `count`, then on to the end of the last one's delivery (its entries were
  // written together, so they follow it). Through outbox_oldest, in order (SQLite
  // 013-outbox-oldest.sql): no sort, and no other destination's entries.
  const std::string oldest =
      "SELECT outbox_id, seq, post_id FROM outbox WHERE destination = ?1 AND state IN ('pending', 'dead') "
      "AND outbox_id > ?2 ORDER BY outbox_id LIMIT ?3";
  auto first = drop_rows(oldest, QueryArgs().add(rule.destination).add(int64_t{0}).add(count));
  if (!first) return fail(first);
  std::vector<DropRow> picked = std::move(*first);
  while (!picked.empty()) {
    auto more = drop_rows(oldest, QueryArgs().add(rule.destination).add(picked.back().id).add(int64_t{64}));
    if (!more) return fail(more);
    size_t same = 0;
    while (same < more->size() && (*more)[same].seq == picked.back().seq) ++same;
    picked.insert(picked.end(), more->begin(), more->begin() + static_cast<std::ptrdiff_t>(same));
    if (same < more->size() || more->empty()) break;
  }
  // Whole POSTs: every entry pinned with one that goes; none of a POST in flight.
  const std::unordered_set<int64_t> in_flight(keep.begin(), keep.end());
  std::set<int64_t> held_posts, posts;
  if (!keep.empty()) {
    auto kept = session_.rows(
        kOutboxNoSlot, "SELECT post_id FROM outbox WHERE post_id IS NOT NULL AND outbox_id IN " + outbox_id_list(keep),
        QueryArgs(), [&](const auto& s) { held_posts.insert(s.column_int(0)); });
    if (!kept) return fail(kept);
  }
  std::vector<DropRow> drop;
  std::unordered_set<int64_t> dropping;
  for (const DropRow& row : picked) {
    if (in_flight.contains(row.id) || (row.post_id && held_posts.contains(*row.post_id))) continue;
    if (row.post_id) posts.insert(*row.post_id);
    if (dropping.insert(row.id).second) drop.push_back(row);
  }
  for (const int64_t post : posts) {
    auto members = drop_rows("SELECT outbox_id, seq, post_id FROM outbox WHERE post_id = ?1", QueryArgs().add(post));
    if (!members) return fail(members);
    for (const DropRow& row : *members) {
      if (dropping.insert(row.id).second) drop.push_back(row);
    }
  }
  if (drop.empty()) return out;

  // The ranges: consecutive dropped deliveries, split where one between them could have
  // had entries (sent, or still here), and joined to the destination's last range when
  // nothing could lie between.
  std::map<int64_t, int64_t> per_seq;
  for (const DropRow& row : drop) ++per_seq[row.seq];
  std::vector<Range> ranges;
  for (const auto& [seq, n] : per_seq) {
    if (!ranges.empty()) {
      auto between = could_have_entries(rule, ranges.back().last, seq);
      if (!between) return fail(between);
      if (!*between) {
        ranges.back().last = seq;
        ranges.back().entries += n;
        continue;
      }
    }
    ranges.push_back({seq, seq, n});
  }
  std::optional<std::pair<int64_t, int64_t>> last_range;  // range_id, last_seq
  auto previous = session_.rows(kOutboxNoSlot,
                                "SELECT range_id, last_seq FROM outbox_dropped WHERE destination = ?1 AND last_seq < ?2 "
                                "ORDER BY last_seq DESC LIMIT 1",
                                QueryArgs().add(rule.destination).add(ranges.front().first),
                                [&](const auto& s) { last_range = std::pair{s.column_int(0), s.column_int(1)}; });
  if (!previous) return fail(previous);
  std::optional<int64_t> join_range;
  if (last_range) {
    auto between = could_have_entries(rule, last_range->second, ranges.front().first);
    if (!between) return fail(between);
    if (!*between) join_range = last_range->first;
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    const Range& r = ranges[i];
    auto written =
        i == 0 && join_range
            ? session_.exec(kOutboxNoSlot,
                            "UPDATE outbox_dropped SET last_seq = CASE WHEN last_seq > ?2 THEN last_seq ELSE ?2 END, "
                            "entries = entries + ?3, dropped_at = ?4 WHERE range_id = ?1",
                            QueryArgs().add(*join_range).add(r.last).add(r.entries).add(now_ms))
            : session_.exec(kOutboxNoSlot,
                            "INSERT INTO outbox_dropped (destination, first_seq, last_seq, entries, dropped_at) "
                            "VALUES (?1, ?2, ?3, ?4, ?5)",
                            QueryArgs().add(rule.destination).add(r.first).add(r.last).add(r.entries).add(now_ms));
    if (!written) return fail(written);
  }
  // The keys whose head goes get their next entry as head (the triggers).
  std::vector<int64_t> ids;
  for (const DropRow& row : drop) ids.push_back(row.id);
  if (auto removed = session_.exec(kOutboxNoSlot, "DELETE FROM outbox WHERE outbox_id IN " + outbox_id_list(ids),
                                   QueryArgs());
      !removed) {
    return fail(removed);
  }
  if (auto committed = txn->commit(); !committed) return fail(committed);
  out.entries = static_cast<int64_t>(drop.size());
  out.ranges = static_cast<int64_t>(ranges.size());
  return out;
}

template <typename Session>
Result<int64_t> OutboxOf<Session>::merge_dropped(const std::string& destination, int64_t keep) {
  // Only the forwarding instance keeps the budget (drop_oldest()).
  auto forwarding = session_.may_forward();
  if (!forwarding) return fail(forwarding);
  if (!*forwarding) return int64_t{0};
  // All but the newest keep − 1 ranges, by first_seq: the ones that become one.
  const std::string oldest =
      "SELECT range_id FROM outbox_dropped WHERE destination = ?1 ORDER BY first_seq DESC, range_id DESC "
      "LIMIT 9223372036854775807 OFFSET ?2";
  const auto args = [&] { return QueryArgs().add(destination).add(std::max<int64_t>(keep, 1) - 1); };
  auto txn = session_.begin();
  if (!txn) return fail(txn);
  int64_t n = 0, first = 0, last = 0, entries = 0, at = 0;
  auto merged = session_.rows(kOutboxNoSlot,
                              "SELECT count(*), min(first_seq), max(last_seq), sum(entries), max(dropped_at) "
                              "FROM outbox_dropped WHERE range_id IN (" + oldest + ")",
                              args(), [&](const auto& row) {
                                n = row.column_int(0);
                                if (n == 0) return;
                                first = row.column_int(1);
                                last = row.column_int(2);
                                entries = row.column_int(3);
                                at = row.column_int(4);
                              });
  if (!merged) return fail(merged);
  if (n <= 1) return int64_t{0};
  if (auto removed = session_.exec(kOutboxNoSlot, "DELETE FROM outbox_dropped WHERE range_id IN (" + oldest + ")", args());
      !removed) {
    return fail(removed);
  }
  if (auto inserted = session_.exec(kOutboxNoSlot,
                                    "INSERT INTO outbox_dropped (destination, first_seq, last_seq, entries, dropped_at) "
                                    "VALUES (?1, ?2, ?3, ?4, ?5)",
                                    QueryArgs().add(destination).add(first).add(last).add(entries).add(at));
      !inserted) {
    return fail(inserted);
  }
  if (auto committed = txn->commit(); !committed) return fail(committed);
  return n - 1;
}

template <typename Session>
Result<RecreatedDropped> OutboxOf<Session>::requeue_dropped(const ForwardRule& rule) {
  RecreatedDropped out;
  auto txn = session_.begin();
  if (!txn) return fail(txn);
  // The ranges are taken by deleting them: a second requeue at the same time (another
  // tab, the command line) waits for this one's row locks on PostgreSQL and then finds
  // none, instead of reading the same ranges and making their entries a second time.
  std::vector<DroppedRange> ranges;
  auto taken = session_.rows(kOutboxNoSlot,
                             "DELETE FROM outbox_dropped WHERE destination = ?1 RETURNING first_seq, last_seq, entries",
                             QueryArgs().add(rule.destination), [&](const auto& s) {
                               DroppedRange range;
                               range.first_seq = s.column_int(0);
                               range.last_seq = s.column_int(1);
                               range.entries = s.column_int(2);
                               ranges.push_back(range);
                             });
  if (!taken) return fail(taken);
  std::sort(ranges.begin(), ranges.end(),
            [](const DroppedRange& a, const DroppedRange& b) { return a.first_seq < b.first_seq; });
  const std::string recreate = session_.recreate_sql(rule);
  for (const DroppedRange& range : ranges) {
    auto made = session_.exec(kOutboxNoSlot, recreate, QueryArgs().add(range.first_seq).add(range.last_seq));
    if (!made) return fail(made);
    ++out.ranges;
    out.dropped += range.entries;
    out.recreated += *made;
  }
  if (auto committed = txn->commit(); !committed) return fail(committed);
  out.not_recreated = std::max<int64_t>(0, out.dropped - out.recreated);
  return out;
}

}  // namespace hh::store
