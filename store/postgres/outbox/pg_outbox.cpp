#include "store/postgres/outbox/pg_outbox.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include "store/postgres/connection.h"
#include "store/postgres/database.h"
#include "store/postgres/jobs/pg_job_admin.h"
#include "store/postgres/migrations.h"
#include "store/postgres/outbox/pg_outbox_writer.h"

namespace hh::store {
namespace {

constexpr std::string_view kPgoutboxColumns =
    "SELECT outbox_id, destination, kind, seq, event_type, table_name, row_key, op, row_count, from_ms, to_ms, "
    "user_id, order_key, state, attempts, created_at, next_attempt_at, post_id, head, last_status, last_error "
    "FROM outbox ";

// The schema version that has post_id, head and outbox_dropped (004-outbox-posts.sql),
// found by the migration's name so that its number may change.
int64_t pgoutbox_version_with_posts() {
  const auto& all = postgres_migrations();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].name.ends_with("-outbox-posts")) return static_cast<int64_t>(i) + 1;
  }
  return static_cast<int64_t>(all.size());
}

std::optional<std::string> pgoutbox_text(const pg::Rows& rows, int r, int column) {
  auto text = rows.optional_text(r, column);
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

OutboxEntry pgoutbox_entry(const pg::Rows& rows, int r) {
  OutboxEntry e;
  e.outbox_id = rows.integer(r, 0);
  e.destination = std::string(rows.text(r, 1));
  e.kind = std::string(rows.text(r, 2));
  e.seq = rows.integer(r, 3);
  e.event_type = pgoutbox_text(rows, r, 4);
  e.table_name = std::string(rows.text(r, 5));
  e.row_key = std::string(rows.text(r, 6));
  e.op = std::string(rows.text(r, 7));
  e.row_count = rows.integer(r, 8);
  e.from_ms = rows.optional_integer(r, 9);
  e.to_ms = rows.optional_integer(r, 10);
  e.user_id = pgoutbox_text(rows, r, 11);
  e.order_key = pgoutbox_text(rows, r, 12);
  e.state = std::string(rows.text(r, 13));
  e.attempts = rows.integer(r, 14);
  e.created_at_ms = rows.integer(r, 15);
  e.next_attempt_at_ms = rows.integer(r, 16);
  e.post_id = rows.optional_integer(r, 17);
  if (auto head = rows.optional_integer(r, 18)) e.head = *head != 0;
  e.last_status = rows.optional_integer(r, 19);
  e.last_error = pgoutbox_text(rows, r, 20);
  return e;
}

std::vector<OutboxEntry> pgoutbox_entries(const pg::Rows& rows) {
  std::vector<OutboxEntry> entries;
  for (int r = 0; r < rows.size(); ++r) entries.push_back(pgoutbox_entry(rows, r));
  return entries;
}

std::string pgoutbox_array(std::span<const int64_t> ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "}";
}

Result<void> pgoutbox_done(const Result<pg::Rows>& ran) {
  if (!ran) return fail(ran.error_kind(), ran.error());
  return {};
}

class PgOutbox final : public Outbox {
 public:
  PgOutbox(pg::Connection db, OutboxUse use) : db_(std::move(db)), use_(use) {}

  Result<std::vector<OutboxEntry>> list(const OutboxSelection& selection) override {
    auto rows = db_.query(std::string(kPgoutboxColumns) +
                              "WHERE ($1::text IS NULL OR destination = $1) AND ($2::text IS NULL OR state = $2) "
                              "AND outbox_id > $3 AND ($5::bigint IS NULL OR outbox_id = $5) "
                              "ORDER BY outbox_id LIMIT $4",
                          pg::Params()
                              .add(selection.destination)
                              .add(selection.state)
                              .add(selection.after_id)
                              .add(selection.limit)
                              .add(selection.outbox_id));
    if (!rows) return fail(rows.error_kind(), rows.error());
    return pgoutbox_entries(*rows);
  }

  Result<std::optional<OutboxEntry>> find(int64_t outbox_id) override {
    auto rows = db_.query(std::string(kPgoutboxColumns) + "WHERE outbox_id = $1", pg::Params().add(outbox_id));
    if (!rows) return fail(rows.error_kind(), rows.error());
    if (rows->empty()) return std::optional<OutboxEntry>{};
    return std::optional<OutboxEntry>{pgoutbox_entry(*rows, 0)};
  }

  Result<std::vector<OutboxFigures>> figures() override {
    auto rows = db_.query(
        "SELECT destination, sum(pending), sum(dead), sum(dropped), sum(ranges), min(oldest) FROM ("
        "SELECT destination, count(*) FILTER (WHERE state = 'pending') AS pending, "
        "count(*) FILTER (WHERE state = 'dead') AS dead, 0 AS dropped, 0 AS ranges, "
        "min(created_at) FILTER (WHERE state = 'pending') AS oldest FROM outbox GROUP BY destination "
        "UNION ALL SELECT destination, 0, 0, sum(entries), count(*), NULL FROM outbox_dropped GROUP BY destination) "
        "AS f GROUP BY destination ORDER BY destination COLLATE \"C\"");
    if (!rows) return fail(rows.error_kind(), rows.error());
    std::vector<OutboxFigures> all;
    for (int r = 0; r < rows->size(); ++r) {
      all.push_back({std::string(rows->text(r, 0)), rows->integer(r, 1), rows->integer(r, 2), rows->integer(r, 3),
                     rows->integer(r, 4), rows->optional_integer(r, 5)});
    }
    return all;
  }

  Result<std::vector<DroppedRange>> dropped(const std::optional<std::string>& destination) override {
    auto rows = db_.query(
        "SELECT range_id, destination, first_seq, last_seq, entries, dropped_at FROM outbox_dropped "
        "WHERE $1::text IS NULL OR destination = $1 ORDER BY destination COLLATE \"C\", first_seq, range_id",
        pg::Params().add(destination));
    if (!rows) return fail(rows.error_kind(), rows.error());
    std::vector<DroppedRange> ranges;
    for (int r = 0; r < rows->size(); ++r) {
      ranges.push_back({rows->integer(r, 0), std::string(rows->text(r, 1)), rows->integer(r, 2), rows->integer(r, 3),
                        rows->integer(r, 4), rows->integer(r, 5)});
    }
    return ranges;
  }

  // Instances sharing the store forward one at a time (kForwardLock, held by the sender's
  // session): the others find nothing to classify or send, and drop nothing, and one of
  // them takes over when the forwarding instance stops (its session ends).
  Result<int64_t> classify(const std::string& destination, bool ordered, int64_t limit) override {
    auto forwarding = forwarding_here();
    if (!forwarding) return fail(forwarding.error_kind(), forwarding.error());
    if (!*forwarding) return int64_t{0};
    auto updated = db_.query(
        "UPDATE outbox AS u SET head = CASE WHEN $2::bigint = 0 OR u.order_key IS NULL THEN 1 "
        "WHEN u.outbox_id = (SELECT min(o.outbox_id) FROM outbox AS o WHERE o.destination = u.destination "
        "AND o.state = 'pending' AND o.order_key = u.order_key) THEN 1 ELSE 0 END "
        "WHERE u.outbox_id IN (SELECT outbox_id FROM outbox WHERE destination = $1 AND state = 'pending' "
        "AND head IS NULL ORDER BY outbox_id LIMIT $3)",
        pg::Params().add(destination).add(int64_t{ordered ? 1 : 0}).add(limit));
    if (!updated) return fail(updated.error_kind(), updated.error());
    return updated->affected();
  }

  Result<std::vector<OutboxEntry>> due_heads(const std::string& destination, int64_t now_ms, int64_t limit) override {
    auto forwarding = forwarding_here();
    if (!forwarding) return fail(forwarding.error_kind(), forwarding.error());
    if (!*forwarding) return std::vector<OutboxEntry>();
    return entries(std::string(kPgoutboxColumns) +
                       "WHERE destination = $1 AND state = 'pending' AND head = 1 AND next_attempt_at <= $2 "
                       "ORDER BY next_attempt_at, outbox_id LIMIT $3",
                   pg::Params().add(destination).add(now_ms).add(limit));
  }

  Result<std::vector<OutboxEntry>> key_entries(const std::string& destination, const std::string& order_key,
                                               int64_t limit) override {
    return entries(std::string(kPgoutboxColumns) +
                       "WHERE destination = $1 AND state = 'pending' AND order_key = $2 ORDER BY outbox_id LIMIT $3",
                   pg::Params().add(destination).add(order_key).add(limit));
  }

  Result<std::vector<OutboxEntry>> post_entries(int64_t post_id) override {
    return entries(std::string(kPgoutboxColumns) + "WHERE post_id = $1 AND state = 'pending' ORDER BY outbox_id",
                   pg::Params().add(post_id));
  }

  Result<void> demote(int64_t outbox_id) override {
    auto txn = pg::Transaction::begin(db_);
    if (!txn) return fail(txn.error_kind(), txn.error());
    if (auto done = db_.query("UPDATE outbox SET head = 0 WHERE outbox_id = $1", pg::Params().add(outbox_id)); !done) {
      return fail(done.error_kind(), done.error());
    }
    if (auto done = db_.query("UPDATE outbox SET head = 1 WHERE outbox_id = (SELECT min(o.outbox_id) FROM outbox AS o "
                              "JOIN outbox AS h ON o.destination = h.destination AND o.order_key = h.order_key "
                              "WHERE h.outbox_id = $1 AND o.state = 'pending') AND head IS DISTINCT FROM 1",
                              pg::Params().add(outbox_id));
        !done) {
      return fail(done.error_kind(), done.error());
    }
    return txn->commit();
  }

  Result<void> pin(std::span<const PostPin> posts) override {
    if (posts.empty()) return {};
    std::vector<int64_t> ids, post_ids;
    for (const PostPin& post : posts) {
      for (const int64_t id : post.ids) {
        ids.push_back(id);
        post_ids.push_back(post.post_id);
      }
    }
    const std::string id_array = pgoutbox_array(ids), post_array = pgoutbox_array(post_ids);
    return pgoutbox_done(db_.query(
        "UPDATE outbox AS o SET post_id = p.post_id FROM unnest($1::bigint[], $2::bigint[]) AS p (outbox_id, post_id) "
        "WHERE o.outbox_id = p.outbox_id",
        pg::Params().add(std::string_view(id_array)).add(std::string_view(post_array))));
  }

  Result<void> sent(std::span<const int64_t> ids) override {
    if (ids.empty()) return {};
    const std::string array = pgoutbox_array(ids);
    return pgoutbox_done(db_.query("DELETE FROM outbox WHERE outbox_id = ANY ($1::bigint[])",
                                   pg::Params().add(std::string_view(array))));
  }

  Result<void> retry_later(std::span<const int64_t> ids, int64_t next_attempt_at_ms, std::optional<int64_t> status,
                           const std::string& error) override {
    if (ids.empty()) return {};
    const std::string array = pgoutbox_array(ids);
    return pgoutbox_done(db_.query(
        "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = $1, last_status = $2, last_error = $3 "
        "WHERE outbox_id = ANY ($4::bigint[])",
        pg::Params().add(next_attempt_at_ms).add(status).add(error).add(std::string_view(array))));
  }

  Result<void> dead(std::span<const int64_t> ids, std::optional<int64_t> status, const std::string& error) override {
    if (ids.empty()) return {};
    const std::string array = pgoutbox_array(ids);
    return pgoutbox_done(db_.query(
        "UPDATE outbox SET attempts = attempts + 1, state = 'dead', head = NULL, last_status = $1, last_error = $2 "
        "WHERE outbox_id = ANY ($3::bigint[])",
        pg::Params().add(status).add(error).add(std::string_view(array))));
  }

  Result<int64_t> requeue(const OutboxSelection& selection, int64_t now_ms) override {
    const std::string selected =
        "($2::text IS NULL OR destination = $2) AND ($3::text IS NULL OR state = $3) AND outbox_id > $4 "
        "AND ($5::bigint IS NULL OR outbox_id = $5)";
    auto updated = db_.query(
        "UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = $1, created_at = $1, head = NULL "
        "WHERE (" + selected + ") OR post_id IN (SELECT post_id FROM outbox WHERE post_id IS NOT NULL AND " +
            selected + ")",
        pg::Params().add(now_ms).add(selection.destination).add(selection.state).add(selection.after_id)
            .add(selection.outbox_id));
    if (!updated) return fail(updated.error_kind(), updated.error());
    return updated->affected();
  }

  Result<Dropped> drop_oldest(const ForwardRule& rule, int64_t count, std::span<const int64_t> keep,
                              int64_t now_ms) override;
  Result<int64_t> merge_dropped(const std::string& destination, int64_t keep) override;
  Result<RecreatedDropped> requeue_dropped(const ForwardRule& rule) override;

  Result<bool> set_paused(const std::string& destination, bool paused, int64_t now_ms) override {
    auto changed = paused ? db_.query("INSERT INTO forward_pauses (destination, paused_at) VALUES ($1, $2) "
                                      "ON CONFLICT (destination) DO NOTHING",
                                      pg::Params().add(destination).add(now_ms))
                          : db_.query("DELETE FROM forward_pauses WHERE destination = $1", pg::Params().add(destination));
    if (!changed) return fail(changed.error_kind(), changed.error());
    return changed->affected() > 0;
  }

  Result<std::vector<std::string>> paused() override {
    auto rows = db_.query("SELECT destination FROM forward_pauses ORDER BY destination COLLATE \"C\"");
    if (!rows) return fail(rows.error_kind(), rows.error());
    std::vector<std::string> names;
    for (int r = 0; r < rows->size(); ++r) names.emplace_back(rows->text(r, 0));
    return names;
  }

 private:
  struct PgDropRow {
    int64_t id, seq;
    std::optional<int64_t> post_id;
  };

  Result<std::vector<OutboxEntry>> entries(const std::string& sql, const pg::Params& params) {
    auto rows = db_.query(sql, params);
    if (!rows) return fail(rows.error_kind(), rows.error());
    return pgoutbox_entries(*rows);
  }

  // An admin handle always may; a sender only while it holds the forwarding lock (taking
  // it when free).
  Result<bool> forwarding_here() {
    if (use_ != OutboxUse::sender) return true;
    if (auto open = db_.reconnect_if_broken(); !open) return fail(open.error_kind(), open.error());
    if (lock_generation_ && *lock_generation_ == db_.generation()) return true;
    auto locked = db_.query("SELECT pg_try_advisory_lock($1)", pg::Params().add(kForwardLock));
    if (!locked) return fail(locked.error_kind(), locked.error());
    if (!locked->boolean(0, 0)) return false;
    lock_generation_ = db_.generation();
    return true;
  }

  // As SqliteOutbox's: whether a delivery strictly between `after` and `before` could
  // have had entries for `rule`.
  Result<bool> could_have_entries(const ForwardRule& rule, int64_t after, int64_t before) {
    if (before <= after + 1) return false;
    const std::string filter = pg_outbox_event_filter(rule, "d.event_type");
    const std::string sql =
        rule.mode == ForwardMode::changes
            ? "SELECT EXISTS (SELECT 1 FROM changes AS c JOIN inbox AS d ON d.seq = c.seq WHERE c.seq > $1 AND c.seq < $2 "
              "AND " + filter + ")"
            : "SELECT EXISTS (SELECT 1 FROM inbox AS d WHERE d.seq > $1 AND d.seq < $2 AND d.origin = 'webhook' AND " +
                  filter + ")";
    auto rows = db_.query(sql, pg::Params().add(after).add(before));
    if (!rows) return fail(rows.error_kind(), rows.error());
    return rows->boolean(0, 0);
  }

  pg::Connection db_;
  const OutboxUse use_;
  std::optional<uint64_t> lock_generation_;  // the connection generation the forwarding lock was taken on
};

Result<Dropped> PgOutbox::drop_oldest(const ForwardRule& rule, int64_t count, std::span<const int64_t> keep,
                                      int64_t now_ms) {
  Dropped out;
  if (count <= 0) return out;
  auto forwarding = forwarding_here();
  if (!forwarding) return fail(forwarding.error_kind(), forwarding.error());
  if (!*forwarding) return out;
  auto txn = pg::Transaction::begin(db_);
  if (!txn) return fail(txn.error_kind(), txn.error());
  auto read_rows = [&](int64_t after, int64_t limit) -> Result<std::vector<PgDropRow>> {
    auto rows = db_.query(
        "SELECT outbox_id, seq, post_id FROM outbox WHERE destination = $1 AND state IN ('pending', 'dead') "
        "AND outbox_id > $2 ORDER BY outbox_id LIMIT $3",
        pg::Params().add(rule.destination).add(after).add(limit));
    if (!rows) return fail(rows.error_kind(), rows.error());
    std::vector<PgDropRow> out_rows;
    for (int r = 0; r < rows->size(); ++r) {
      out_rows.push_back({rows->integer(r, 0), rows->integer(r, 1), rows->optional_integer(r, 2)});
    }
    return out_rows;
  };
  auto first = read_rows(0, count);
  if (!first) return fail(first.error_kind(), first.error());
  std::vector<PgDropRow> picked = std::move(*first);
  while (!picked.empty()) {
    auto more = read_rows(picked.back().id, 64);
    if (!more) return fail(more.error_kind(), more.error());
    size_t same = 0;
    while (same < more->size() && (*more)[same].seq == picked.back().seq) ++same;
    picked.insert(picked.end(), more->begin(), more->begin() + static_cast<std::ptrdiff_t>(same));
    if (same < more->size() || more->empty()) break;
  }
  const std::unordered_set<int64_t> in_flight(keep.begin(), keep.end());
  std::set<int64_t> held_posts, posts;
  if (!keep.empty()) {
    const std::string array = pgoutbox_array(keep);
    auto kept = db_.query("SELECT post_id FROM outbox WHERE post_id IS NOT NULL AND outbox_id = ANY ($1::bigint[])",
                          pg::Params().add(std::string_view(array)));
    if (!kept) return fail(kept.error_kind(), kept.error());
    for (int r = 0; r < kept->size(); ++r) held_posts.insert(kept->integer(r, 0));
  }
  std::vector<PgDropRow> drop;
  std::unordered_set<int64_t> dropping;
  for (const PgDropRow& row : picked) {
    if (in_flight.contains(row.id) || (row.post_id && held_posts.contains(*row.post_id))) continue;
    if (row.post_id) posts.insert(*row.post_id);
    if (dropping.insert(row.id).second) drop.push_back(row);
  }
  for (const int64_t post : posts) {
    auto members = db_.query("SELECT outbox_id, seq, post_id FROM outbox WHERE post_id = $1", pg::Params().add(post));
    if (!members) return fail(members.error_kind(), members.error());
    for (int r = 0; r < members->size(); ++r) {
      const PgDropRow row{members->integer(r, 0), members->integer(r, 1), members->optional_integer(r, 2)};
      if (dropping.insert(row.id).second) drop.push_back(row);
    }
  }
  if (drop.empty()) return out;

  std::map<int64_t, int64_t> per_seq;
  for (const PgDropRow& row : drop) ++per_seq[row.seq];
  struct PgRange {
    int64_t first, last, entries;
  };
  std::vector<PgRange> ranges;
  for (const auto& [seq, n] : per_seq) {
    if (!ranges.empty()) {
      auto between = could_have_entries(rule, ranges.back().last, seq);
      if (!between) return fail(between.error_kind(), between.error());
      if (!*between) {
        ranges.back().last = seq;
        ranges.back().entries += n;
        continue;
      }
    }
    ranges.push_back({seq, seq, n});
  }
  auto previous = db_.query(
      "SELECT range_id, last_seq FROM outbox_dropped WHERE destination = $1 AND last_seq < $2 "
      "ORDER BY last_seq DESC LIMIT 1",
      pg::Params().add(rule.destination).add(ranges.front().first));
  if (!previous) return fail(previous.error_kind(), previous.error());
  std::optional<int64_t> join_range;
  if (!previous->empty()) {
    auto between = could_have_entries(rule, previous->integer(0, 1), ranges.front().first);
    if (!between) return fail(between.error_kind(), between.error());
    if (!*between) join_range = previous->integer(0, 0);
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    const PgRange& r = ranges[i];
    Result<pg::Rows> written =
        i == 0 && join_range
            ? db_.query("UPDATE outbox_dropped SET last_seq = greatest(last_seq, $2), entries = entries + $3, "
                        "dropped_at = $4 WHERE range_id = $1",
                        pg::Params().add(*join_range).add(r.last).add(r.entries).add(now_ms))
            : db_.query("INSERT INTO outbox_dropped (destination, first_seq, last_seq, entries, dropped_at) "
                        "VALUES ($1, $2, $3, $4, $5)",
                        pg::Params().add(rule.destination).add(r.first).add(r.last).add(r.entries).add(now_ms));
    if (!written) return fail(written.error_kind(), written.error());
  }
  std::vector<int64_t> ids;
  for (const PgDropRow& row : drop) ids.push_back(row.id);
  const std::string array = pgoutbox_array(ids);
  if (auto done = db_.query("DELETE FROM outbox WHERE outbox_id = ANY ($1::bigint[])",
                            pg::Params().add(std::string_view(array)));
      !done) {
    return fail(done.error_kind(), done.error());
  }
  if (auto committed = txn->commit(); !committed) return fail(committed.error_kind(), committed.error());
  out.entries = static_cast<int64_t>(drop.size());
  out.ranges = static_cast<int64_t>(ranges.size());
  return out;
}

Result<int64_t> PgOutbox::merge_dropped(const std::string& destination, int64_t keep) {
  // As SqliteOutbox's; only the forwarding instance keeps the budget (drop_oldest()).
  auto forwarding = forwarding_here();
  if (!forwarding) return fail(forwarding.error_kind(), forwarding.error());
  if (!*forwarding) return int64_t{0};
  const std::string oldest =
      "SELECT range_id FROM outbox_dropped WHERE destination = $1 ORDER BY first_seq DESC, range_id DESC "
      "OFFSET $2";
  const pg::Params params = pg::Params().add(destination).add(std::max<int64_t>(keep, 1) - 1);
  auto txn = pg::Transaction::begin(db_);
  if (!txn) return fail(txn.error_kind(), txn.error());
  auto merged = db_.query(
      "SELECT count(*), min(first_seq), max(last_seq), sum(entries), max(dropped_at) FROM outbox_dropped "
      "WHERE range_id IN (" + oldest + ")",
      params);
  if (!merged) return fail(merged.error_kind(), merged.error());
  const int64_t n = merged->integer(0, 0);
  if (n <= 1) return int64_t{0};
  const int64_t first = merged->integer(0, 1), last = merged->integer(0, 2), entries = merged->integer(0, 3),
                at = merged->integer(0, 4);
  if (auto done = db_.query("DELETE FROM outbox_dropped WHERE range_id IN (" + oldest + ")", params); !done) {
    return fail(done.error_kind(), done.error());
  }
  if (auto done = db_.query("INSERT INTO outbox_dropped (destination, first_seq, last_seq, entries, dropped_at) "
                            "VALUES ($1, $2, $3, $4, $5)",
                            pg::Params().add(destination).add(first).add(last).add(entries).add(at));
      !done) {
    return fail(done.error_kind(), done.error());
  }
  if (auto committed = txn->commit(); !committed) return fail(committed.error_kind(), committed.error());
  return n - 1;
}

Result<RecreatedDropped> PgOutbox::requeue_dropped(const ForwardRule& rule) {
  RecreatedDropped out;
  auto txn = pg::Transaction::begin(db_);
  if (!txn) return fail(txn.error_kind(), txn.error());
  auto ranges = dropped(rule.destination);
  if (!ranges) return fail(ranges.error_kind(), ranges.error());
  const std::string recreate = pg_outbox_recreate_sql(rule);
  for (const DroppedRange& range : *ranges) {
    auto made = db_.query(recreate, pg::Params().add(range.first_seq).add(range.last_seq));
    if (!made) return fail(made.error_kind(), made.error());
    ++out.ranges;
    out.dropped += range.entries;
    out.recreated += made->affected();
  }
  if (auto done = db_.query("DELETE FROM outbox_dropped WHERE destination = $1", pg::Params().add(rule.destination));
      !done) {
    return fail(done.error_kind(), done.error());
  }
  if (auto committed = txn->commit(); !committed) return fail(committed.error_kind(), committed.error());
  out.not_recreated = std::max<int64_t>(0, out.dropped - out.recreated);
  return out;
}

}  // namespace

Result<std::unique_ptr<Outbox>> open_postgres_outbox(const Database& database, OutboxUse use) {
  auto db = open_postgres_admin_connection(database, pgoutbox_version_with_posts());
  if (!db) return fail(db.error_kind(), db.error());
  if (use == OutboxUse::sender) {
    if (auto relaxed = db->exec("SET synchronous_commit = off"); !relaxed) {
      return fail(relaxed.error_kind(), relaxed.error());
    }
  }
  return std::unique_ptr<Outbox>(new PgOutbox(std::move(*db), use));
}

}  // namespace hh::store
