#include "store/sqlite/outbox/sqlite_outbox.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "store/migration.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/outbox/outbox_writer.h"

namespace hh::store {
namespace {

constexpr std::string_view kOutboxColumns =
    "SELECT outbox_id, destination, kind, seq, event_type, table_name, row_key, op, row_count, from_ms, to_ms, "
    "user_id, order_key, state, attempts, created_at, next_attempt_at, post_id, head, last_status, last_error "
    "FROM outbox ";

// The schema version that has post_id, head and outbox_dropped (010-outbox-posts.sql),
// found by the migration's name so that its number may change.
int64_t version_with_posts() {
  const auto& all = migrations();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].name.ends_with("-outbox-posts")) return static_cast<int64_t>(i) + 1;
  }
  return static_cast<int64_t>(all.size());
}

std::optional<std::string> optional_text(const sqlite::Statement& s, int column) {
  auto text = s.column_optional_text(column);
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

OutboxEntry read_entry(const sqlite::Statement& s) {
  OutboxEntry e;
  e.outbox_id = s.column_int(0);
  e.destination = std::string(s.column_text(1));
  e.kind = std::string(s.column_text(2));
  e.seq = s.column_int(3);
  e.event_type = optional_text(s, 4);
  e.table_name = std::string(s.column_text(5));
  e.row_key = std::string(s.column_text(6));
  e.op = std::string(s.column_text(7));
  e.row_count = s.column_int(8);
  e.from_ms = s.column_optional_int(9);
  e.to_ms = s.column_optional_int(10);
  e.user_id = optional_text(s, 11);
  e.order_key = optional_text(s, 12);
  e.state = std::string(s.column_text(13));
  e.attempts = s.column_int(14);
  e.created_at_ms = s.column_int(15);
  e.next_attempt_at_ms = s.column_int(16);
  e.post_id = s.column_optional_int(17);
  e.head = s.column_optional_bool(18);
  e.last_status = s.column_optional_int(19);
  e.last_error = optional_text(s, 20);
  return e;
}

// "?1, ?2, …" for `n` parameters.
std::string placeholders(size_t n, int first = 1) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    out += "?" + std::to_string(first + static_cast<int>(i));
  }
  return out;
}

class SqliteOutbox final : public Outbox {
 public:
  explicit SqliteOutbox(sqlite::Connection db) : db_(std::move(db)) {}

  Result<std::vector<OutboxEntry>> list(const OutboxSelection& selection) override {
    auto stmt = db_.prepare(std::string(kOutboxColumns) +
                            "WHERE (?1 IS NULL OR destination = ?1) AND (?2 IS NULL OR state = ?2) "
                            "AND outbox_id > ?3 AND (?5 IS NULL OR outbox_id = ?5) ORDER BY outbox_id LIMIT ?4");
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, selection.destination).bind(2, selection.state).bind(3, selection.after_id).bind(4, selection.limit);
    stmt->bind(5, selection.outbox_id);
    return entries_of(*stmt);
  }

  Result<std::optional<OutboxEntry>> find(int64_t outbox_id) override {
    auto stmt = db_.prepare(std::string(kOutboxColumns) + "WHERE outbox_id = ?1");
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, outbox_id);
    std::optional<OutboxEntry> entry;
    auto read = stmt->for_each_row([&](const sqlite::Statement& s) { entry = read_entry(s); });
    if (!read) return fail(read.error());
    return entry;
  }

  Result<std::vector<OutboxFigures>> figures() override {
    auto stmt = db_.prepare(
        "SELECT destination, sum(pending), sum(dead), sum(dropped), sum(ranges), min(oldest) FROM ("
        "SELECT destination, sum(state = 'pending') AS pending, sum(state = 'dead') AS dead, 0 AS dropped, "
        "0 AS ranges, min(CASE WHEN state = 'pending' THEN created_at END) AS oldest FROM outbox GROUP BY destination "
        "UNION ALL SELECT destination, 0, 0, sum(entries), count(*), NULL FROM outbox_dropped GROUP BY destination) "
        "GROUP BY destination ORDER BY destination");
    if (!stmt) return fail(stmt.error());
    std::vector<OutboxFigures> all;
    auto read = stmt->for_each_row([&](const sqlite::Statement& s) {
      all.push_back({std::string(s.column_text(0)), s.column_int(1), s.column_int(2), s.column_int(3),
                     s.column_int(4), s.column_optional_int(5)});
    });
    if (!read) return fail(read.error());
    return all;
  }

  Result<std::vector<DroppedRange>> dropped(const std::optional<std::string>& destination) override {
    auto stmt = db_.prepare(
        "SELECT range_id, destination, first_seq, last_seq, entries, dropped_at FROM outbox_dropped "
        "WHERE ?1 IS NULL OR destination = ?1 ORDER BY destination, first_seq, range_id");
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, destination);
    std::vector<DroppedRange> ranges;
    auto read = stmt->for_each_row([&](const sqlite::Statement& s) {
      ranges.push_back({s.column_int(0), std::string(s.column_text(1)), s.column_int(2), s.column_int(3),
                        s.column_int(4), s.column_int(5)});
    });
    if (!read) return fail(read.error());
    return ranges;
  }

  Result<int64_t> classify(const std::string& destination, bool ordered, int64_t limit) override {
    // Read first: an UPDATE takes the write lock even when it changes nothing, and the
    // sender looks ten times a second.
    auto any = cached(unclassified_,
                      "SELECT EXISTS (SELECT 1 FROM outbox WHERE destination = ?1 AND state = 'pending' AND head IS NULL)");
    if (!any) return fail(any.error());
    (*any)->bind(1, std::string_view(destination));
    bool found = false;
    if (auto read = (*any)->first_row([&](const sqlite::Statement& s) { found = s.column_int(0) != 0; }); !read) {
      return fail(read.error());
    }
    if (!found) return int64_t{0};
    auto stmt = cached(classify_,
                       "UPDATE outbox SET head = CASE WHEN ?2 = 0 OR order_key IS NULL THEN 1 "
                       "WHEN outbox_id = (SELECT min(o.outbox_id) FROM outbox AS o WHERE o.destination = outbox.destination "
                       "AND o.state = 'pending' AND o.order_key = outbox.order_key) THEN 1 ELSE 0 END "
                       "WHERE outbox_id IN (SELECT outbox_id FROM outbox WHERE destination = ?1 AND state = 'pending' "
                       "AND head IS NULL ORDER BY outbox_id LIMIT ?3)");
    if (!stmt) return fail(stmt.error());
    (*stmt)->bind(1, std::string_view(destination)).bind(2, int64_t{ordered ? 1 : 0}).bind(3, limit);
    if (auto done = (*stmt)->run(); !done) return fail(done.error());
    return db_.changes();
  }

  Result<std::vector<OutboxEntry>> due_heads(const std::string& destination, int64_t now_ms, int64_t limit) override {
    auto stmt = cached(due_heads_, std::string(kOutboxColumns) +
                                       "WHERE destination = ?1 AND state = 'pending' AND head = 1 AND next_attempt_at <= ?2 "
                                       "ORDER BY next_attempt_at, outbox_id LIMIT ?3");
    if (!stmt) return fail(stmt.error());
    (*stmt)->bind(1, std::string_view(destination)).bind(2, now_ms).bind(3, limit);
    return entries_of(**stmt);
  }

  Result<std::vector<OutboxEntry>> key_entries(const std::string& destination, const std::string& order_key,
                                               int64_t limit) override {
    auto stmt = cached(key_entries_, std::string(kOutboxColumns) +
                                         "WHERE destination = ?1 AND state = 'pending' AND order_key = ?2 "
                                         "ORDER BY outbox_id LIMIT ?3");
    if (!stmt) return fail(stmt.error());
    (*stmt)->bind(1, std::string_view(destination)).bind(2, std::string_view(order_key)).bind(3, limit);
    return entries_of(**stmt);
  }

  Result<std::vector<OutboxEntry>> post_entries(int64_t post_id) override {
    auto stmt = cached(post_entries_,
                       std::string(kOutboxColumns) + "WHERE post_id = ?1 AND state = 'pending' ORDER BY outbox_id");
    if (!stmt) return fail(stmt.error());
    (*stmt)->bind(1, post_id);
    return entries_of(**stmt);
  }

  Result<void> demote(int64_t outbox_id) override {
    auto stmt = cached(demote_, "UPDATE outbox SET head = 0 WHERE outbox_id = ?1");
    if (!stmt) return fail(stmt.error());
    auto first = cached(promote_first_,
                        "UPDATE outbox SET head = 1 WHERE outbox_id = (SELECT min(o.outbox_id) FROM outbox AS o "
                        "JOIN outbox AS h ON o.destination = h.destination AND o.order_key = h.order_key "
                        "WHERE h.outbox_id = ?1 AND o.state = 'pending') AND head IS NOT 1");
    if (!first) return fail(first.error());
    auto txn = sqlite::Transaction::begin(db_);
    if (!txn) return fail(txn.error());
    (*stmt)->bind(1, outbox_id);
    if (auto done = (*stmt)->run(); !done) return done;
    (*first)->bind(1, outbox_id);
    if (auto done = (*first)->run(); !done) return done;
    return txn->commit();
  }

  Result<void> pin(std::span<const PostPin> posts) override {
    if (posts.empty()) return {};
    auto stmt = cached(pin_, "UPDATE outbox SET post_id = ?1 WHERE outbox_id = ?2");
    if (!stmt) return fail(stmt.error());
    auto txn = sqlite::Transaction::begin(db_);
    if (!txn) return fail(txn.error());
    for (const PostPin& post : posts) {
      for (const int64_t id : post.ids) {
        (*stmt)->bind(1, post.post_id).bind(2, id);
        if (auto done = (*stmt)->run(); !done) return fail(done.error());
      }
    }
    return txn->commit();
  }

  // The key's next entry becomes its head by the triggers of 010-outbox-posts.sql.
  Result<void> sent(std::span<const int64_t> ids) override {
    if (ids.empty()) return {};
    auto stmt = db_.prepare("DELETE FROM outbox WHERE outbox_id IN (" + placeholders(ids.size()) + ")");
    if (!stmt) return fail(stmt.error());
    for (size_t i = 0; i < ids.size(); ++i) stmt->bind(static_cast<int>(i) + 1, ids[i]);
    return stmt->run();
  }

  Result<void> retry_later(std::span<const int64_t> ids, int64_t next_attempt_at_ms, std::optional<int64_t> status,
                           const std::string& error) override {
    return update(
        ids, "attempts = attempts + 1, next_attempt_at = ?1, last_status = ?2, last_error = ?3",
        [&](sqlite::Statement& s) { s.bind(1, next_attempt_at_ms).bind(2, status).bind(3, std::string_view(error)); },
        3);
  }

  Result<void> dead(std::span<const int64_t> ids, std::optional<int64_t> status, const std::string& error) override {
    return update(
        ids, "attempts = attempts + 1, state = 'dead', head = NULL, last_status = ?1, last_error = ?2",
        [&](sqlite::Statement& s) { s.bind(1, status).bind(2, std::string_view(error)); }, 2);
  }

  Result<int64_t> requeue(const OutboxSelection& selection, int64_t now_ms) override {
    const std::string selected =
        "(?2 IS NULL OR destination = ?2) AND (?3 IS NULL OR state = ?3) AND outbox_id > ?4 "
        "AND (?5 IS NULL OR outbox_id = ?5)";
    auto stmt = db_.prepare(
        "UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = ?1, created_at = ?1, head = NULL "
        "WHERE (" + selected + ") OR post_id IN (SELECT post_id FROM outbox WHERE post_id IS NOT NULL AND " +
        selected + ")");
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, now_ms).bind(2, selection.destination).bind(3, selection.state).bind(4, selection.after_id);
    stmt->bind(5, selection.outbox_id);
    if (auto done = stmt->run(); !done) return fail(done.error());
    return db_.changes();
  }

  Result<bool> set_paused(const std::string& destination, bool paused, int64_t now_ms) override {
    auto stmt = db_.prepare(paused ? "INSERT INTO forward_pauses (destination, paused_at) VALUES (?1, ?2) "
                                     "ON CONFLICT (destination) DO NOTHING"
                                   : "DELETE FROM forward_pauses WHERE destination = ?1");
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, std::string_view(destination));
    if (paused) stmt->bind(2, now_ms);
    if (auto done = stmt->run(); !done) return fail(done.error());
    return db_.changes() > 0;
  }

  Result<std::vector<std::string>> paused() override {
    auto stmt = db_.prepare("SELECT destination FROM forward_pauses ORDER BY destination");
    if (!stmt) return fail(stmt.error());
    std::vector<std::string> names;
    auto read = stmt->for_each_row([&](const sqlite::Statement& s) { names.emplace_back(s.column_text(0)); });
    if (!read) return fail(read.error());
    return names;
  }

  Result<Dropped> drop_oldest(const ForwardRule& rule, int64_t count, std::span<const int64_t> keep,
                              int64_t now_ms) override;
  Result<int64_t> merge_dropped(const std::string& destination, int64_t keep) override;
  Result<RecreatedDropped> requeue_dropped(const ForwardRule& rule) override;

 private:
  struct DropRow {
    int64_t id, seq;
    std::optional<int64_t> post_id;
  };

  Result<sqlite::Statement*> cached(std::optional<sqlite::Statement>& slot, const std::string& sql) {
    if (!slot) {
      auto prepared = db_.prepare(sql);
      if (!prepared) return fail(prepared.error());
      slot.emplace(std::move(*prepared));
    }
    return &*slot;
  }

  static Result<std::vector<OutboxEntry>> entries_of(sqlite::Statement& stmt) {
    std::vector<OutboxEntry> entries;
    auto read = stmt.for_each_row([&](const sqlite::Statement& s) { entries.push_back(read_entry(s)); });
    if (!read) return fail(read.error());
    return entries;
  }

  // UPDATE outbox SET `set` for `ids` (after the `set`'s own `used` parameters).
  template <typename Bind>
  Result<void> update(std::span<const int64_t> ids, std::string_view set, Bind&& bind, int used) {
    if (ids.empty()) return {};
    auto stmt = db_.prepare("UPDATE outbox SET " + std::string(set) + " WHERE outbox_id IN (" +
                            placeholders(ids.size(), used + 1) + ")");
    if (!stmt) return fail(stmt.error());
    bind(*stmt);
    for (size_t i = 0; i < ids.size(); ++i) stmt->bind(used + 1 + static_cast<int>(i), ids[i]);
    return stmt->run();
  }

  // Whether a delivery strictly between `after` and `before` could have had entries for
  // `rule` (its change-feed rows, or it, match the rule's event globs).
  Result<bool> could_have_entries(const ForwardRule& rule, int64_t after, int64_t before) {
    if (before <= after + 1) return false;
    const std::string filter = outbox_event_filter(rule, "d.event_type");
    const std::string sql =
        rule.mode == ForwardMode::changes
            ? "SELECT EXISTS (SELECT 1 FROM changes AS c JOIN inbox AS d ON d.seq = c.seq WHERE c.seq > ?1 AND c.seq < ?2 "
              "AND " + filter + ")"
            : "SELECT EXISTS (SELECT 1 FROM inbox AS d WHERE d.seq > ?1 AND d.seq < ?2 AND d.origin = 'webhook' AND " +
                  filter + ")";
    auto stmt = db_.prepare(sql);
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, after).bind(2, before);
    bool exists = false;
    auto read = stmt->first_row([&](const sqlite::Statement& s) { exists = s.column_int(0) != 0; });
    if (!read) return fail(read.error());
    return exists;
  }

  sqlite::Connection db_;
  std::optional<sqlite::Statement> unclassified_, classify_, due_heads_, key_entries_, post_entries_, demote_, promote_first_, pin_;
};

Result<Dropped> SqliteOutbox::drop_oldest(const ForwardRule& rule, int64_t count, std::span<const int64_t> keep,
                                          int64_t now_ms) {
  Dropped out;
  if (count <= 0) return out;
  auto txn = sqlite::Transaction::begin(db_);
  if (!txn) return fail(txn.error());
  // The oldest `count`, then on to the end of the last one's delivery (its entries were
  // written together, so they follow it).
  std::vector<DropRow> picked;
  auto oldest = db_.prepare(
      "SELECT outbox_id, seq, post_id FROM outbox WHERE destination = ?1 AND state IN ('pending', 'dead') "
      "AND outbox_id > ?2 ORDER BY outbox_id LIMIT ?3");
  if (!oldest) return fail(oldest.error());
  auto read_rows = [&](int64_t after, int64_t limit) -> Result<std::vector<DropRow>> {
    std::vector<DropRow> rows;
    oldest->bind(1, std::string_view(rule.destination)).bind(2, after).bind(3, limit);
    auto read = oldest->for_each_row([&](const sqlite::Statement& s) {
      rows.push_back({s.column_int(0), s.column_int(1), s.column_optional_int(2)});
    });
    if (!read) return fail(read.error());
    return rows;
  };
  auto first = read_rows(0, count);
  if (!first) return fail(first.error());
  picked = std::move(*first);
  while (!picked.empty()) {
    auto more = read_rows(picked.back().id, 64);
    if (!more) return fail(more.error());
    size_t same = 0;
    while (same < more->size() && (*more)[same].seq == picked.back().seq) ++same;
    picked.insert(picked.end(), more->begin(), more->begin() + static_cast<std::ptrdiff_t>(same));
    if (same < more->size() || more->empty()) break;
  }
  // Whole POSTs: every entry pinned with one that goes; none of a POST in flight.
  const std::unordered_set<int64_t> in_flight(keep.begin(), keep.end());
  std::set<int64_t> held_posts, posts;
  if (!keep.empty()) {
    auto kept = db_.prepare("SELECT post_id FROM outbox WHERE post_id IS NOT NULL AND outbox_id IN (" +
                            placeholders(keep.size()) + ")");
    if (!kept) return fail(kept.error());
    for (size_t i = 0; i < keep.size(); ++i) kept->bind(static_cast<int>(i) + 1, keep[i]);
    if (auto read = kept->for_each_row([&](const sqlite::Statement& s) { held_posts.insert(s.column_int(0)); }); !read) {
      return fail(read.error());
    }
  }
  std::vector<DropRow> drop;
  std::unordered_set<int64_t> dropping;
  for (const DropRow& row : picked) {
    if (in_flight.contains(row.id) || (row.post_id && held_posts.contains(*row.post_id))) continue;
    if (row.post_id) posts.insert(*row.post_id);
    if (dropping.insert(row.id).second) drop.push_back(row);
  }
  auto members = db_.prepare("SELECT outbox_id, seq, post_id FROM outbox WHERE post_id = ?1");
  if (!members) return fail(members.error());
  for (const int64_t post : posts) {
    members->bind(1, post);
    auto read = members->for_each_row([&](const sqlite::Statement& s) {
      const DropRow row{s.column_int(0), s.column_int(1), s.column_optional_int(2)};
      if (dropping.insert(row.id).second) drop.push_back(row);
    });
    if (!read) return fail(read.error());
  }
  if (drop.empty()) return out;

  // The ranges: consecutive dropped deliveries, split where one between them could have
  // had entries (sent, or still here), and joined to the destination's last range when
  // nothing could lie between.
  std::map<int64_t, int64_t> per_seq;
  for (const DropRow& row : drop) ++per_seq[row.seq];
  struct Range {
    int64_t first, last, entries;
  };
  std::vector<Range> ranges;
  for (const auto& [seq, n] : per_seq) {
    if (!ranges.empty()) {
      auto between = could_have_entries(rule, ranges.back().last, seq);
      if (!between) return fail(between.error());
      if (!*between) {
        ranges.back().last = seq;
        ranges.back().entries += n;
        continue;
      }
    }
    ranges.push_back({seq, seq, n});
  }
  auto previous = db_.prepare(
      "SELECT range_id, last_seq FROM outbox_dropped WHERE destination = ?1 AND last_seq < ?2 "
      "ORDER BY last_seq DESC LIMIT 1");
  if (!previous) return fail(previous.error());
  previous->bind(1, std::string_view(rule.destination)).bind(2, ranges.front().first);
  std::optional<std::pair<int64_t, int64_t>> last_range;
  if (auto read = previous->first_row([&](const sqlite::Statement& s) {
        last_range = std::pair{s.column_int(0), s.column_int(1)};
      });
      !read) {
    return fail(read.error());
  }
  std::optional<int64_t> join_range;
  if (last_range) {
    auto between = could_have_entries(rule, last_range->second, ranges.front().first);
    if (!between) return fail(between.error());
    if (!*between) join_range = last_range->first;
  }
  auto extend = db_.prepare(
      "UPDATE outbox_dropped SET last_seq = max(last_seq, ?2), entries = entries + ?3, dropped_at = ?4 "
      "WHERE range_id = ?1");
  auto insert = db_.prepare(
      "INSERT INTO outbox_dropped (destination, first_seq, last_seq, entries, dropped_at) VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!extend) return fail(extend.error());
  if (!insert) return fail(insert.error());
  for (size_t i = 0; i < ranges.size(); ++i) {
    const Range& r = ranges[i];
    Result<void> written;
    if (i == 0 && join_range) {
      extend->bind(1, *join_range).bind(2, r.last).bind(3, r.entries).bind(4, now_ms);
      written = extend->run();
    } else {
      insert->bind(1, std::string_view(rule.destination)).bind(2, r.first).bind(3, r.last).bind(4, r.entries);
      insert->bind(5, now_ms);
      written = insert->run();
    }
    if (!written) return fail(written.error());
  }
  // The keys whose head goes get their next entry as head (the triggers).
  auto remove = db_.prepare("DELETE FROM outbox WHERE outbox_id = ?1");
  if (!remove) return fail(remove.error());
  for (const DropRow& row : drop) {
    remove->bind(1, row.id);
    if (auto done = remove->run(); !done) return fail(done.error());
  }
  if (auto committed = txn->commit(); !committed) return fail(committed.error());
  out.entries = static_cast<int64_t>(drop.size());
  out.ranges = static_cast<int64_t>(ranges.size());
  return out;
}

Result<int64_t> SqliteOutbox::merge_dropped(const std::string& destination, int64_t keep) {
  // All but the newest keep − 1 ranges, by first_seq: the ones that become one.
  const std::string oldest =
      "SELECT range_id FROM outbox_dropped WHERE destination = ?1 ORDER BY first_seq DESC, range_id DESC "
      "LIMIT -1 OFFSET ?2";
  auto txn = sqlite::Transaction::begin(db_);
  if (!txn) return fail(txn.error());
  auto merged = db_.prepare(
      "SELECT count(*), min(first_seq), max(last_seq), sum(entries), max(dropped_at) FROM outbox_dropped "
      "WHERE range_id IN (" + oldest + ")");
  if (!merged) return fail(merged.error());
  merged->bind(1, std::string_view(destination)).bind(2, std::max<int64_t>(keep, 1) - 1);
  int64_t n = 0, first = 0, last = 0, entries = 0, at = 0;
  auto read = merged->first_row([&](const sqlite::Statement& row) {
    n = row.column_int(0);
    if (n == 0) return;
    first = row.column_int(1);
    last = row.column_int(2);
    entries = row.column_int(3);
    at = row.column_int(4);
  });
  if (!read) return fail(read.error());
  if (n <= 1) return int64_t{0};
  auto remove = db_.prepare("DELETE FROM outbox_dropped WHERE range_id IN (" + oldest + ")");
  if (!remove) return fail(remove.error());
  remove->bind(1, std::string_view(destination)).bind(2, std::max<int64_t>(keep, 1) - 1);
  if (auto done = remove->run(); !done) return fail(done.error());
  auto insert = db_.prepare(
      "INSERT INTO outbox_dropped (destination, first_seq, last_seq, entries, dropped_at) VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!insert) return fail(insert.error());
  insert->bind(1, std::string_view(destination)).bind(2, first).bind(3, last).bind(4, entries).bind(5, at);
  if (auto done = insert->run(); !done) return fail(done.error());
  if (auto committed = txn->commit(); !committed) return fail(committed.error());
  return n - 1;
}

Result<RecreatedDropped> SqliteOutbox::requeue_dropped(const ForwardRule& rule) {
  RecreatedDropped out;
  auto txn = sqlite::Transaction::begin(db_);
  if (!txn) return fail(txn.error());
  auto ranges = dropped(rule.destination);
  if (!ranges) return fail(ranges.error());
  auto recreate = db_.prepare(outbox_recreate_sql(rule));
  if (!recreate) return fail(recreate.error());
  for (const DroppedRange& range : *ranges) {
    recreate->bind(1, range.first_seq).bind(2, range.last_seq);
    if (auto done = recreate->run(); !done) return fail(done.error());
    ++out.ranges;
    out.dropped += range.entries;
    out.recreated += db_.changes();
  }
  auto forget = db_.prepare("DELETE FROM outbox_dropped WHERE destination = ?1");
  if (!forget) return fail(forget.error());
  forget->bind(1, std::string_view(rule.destination));
  if (auto done = forget->run(); !done) return fail(done.error());
  if (auto committed = txn->commit(); !committed) return fail(committed.error());
  out.not_recreated = std::max<int64_t>(0, out.dropped - out.recreated);
  return out;
}

}  // namespace

Result<std::unique_ptr<Outbox>> open_sqlite_outbox(const std::string& path, OutboxUse use) {
  auto db = open_admin_connection(path);
  if (!db) return fail(db.error_kind(), db.error());
  if (use == OutboxUse::sender) {
    if (auto relaxed = db->exec("PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0"); !relaxed) {
      return fail(path + ": " + relaxed.error());
    }
  }
  auto version = db->query_int("PRAGMA user_version");
  if (!version) return fail(version.error());
  if (version->value_or(0) < version_with_posts()) {
    return fail(path + ": the outbox is older than this healthhook (the database was last opened by an older "
                       "healthhook; `serve` migrates it)");
  }
  return std::unique_ptr<Outbox>(new SqliteOutbox(std::move(*db)));
}

}  // namespace hh::store
