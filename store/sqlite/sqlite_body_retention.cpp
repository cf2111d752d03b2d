#include "store/sqlite/sqlite_body_retention.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/sha256.h"
#include "store/body_batch.h"

namespace hh::store {
namespace {

// Walks the inbox in seq order from where the walk stands (retention_walk, 016), so each
// batch starts where the previous one stopped instead of stepping over every row removed so
// far. It stops at the first delivery that is too new or not applied yet: received_at
// (taken when the request arrived, or the fetch ended) nearly always grows with seq. What
// was received earlier than its seq suggests (a replayed capture's older times, a clock
// stepped back) lies beyond that stop: the late sweep below removes it, and never moves
// the walk. Without a retention_walk row (a database before 016) the walk starts after the
// last removed body that had bytes, as it did: `purge-user` may leave a placeholder of no
// bytes at the newest seq, recorded as removed (sqlite_erasure.cpp, keep_seq_taken), above
// deliveries whose bodies are still there. Rows already recorded are passed over.
constexpr const char* kWalkedTo =
    "SELECT coalesce((SELECT walked_seq FROM retention_walk WHERE id = 1), "
    "(SELECT seq FROM removed_bodies WHERE body_bytes > 0 ORDER BY seq DESC LIMIT 1), 0)";
// ?1 where the walk stands, ?2 the most rows.
constexpr const char* kCandidates =
    "SELECT seq, received_at, body FROM inbox "
    "WHERE seq > ?1 "
    "AND seq <= (SELECT applied_seq FROM processor_state WHERE id = 1) "
    "AND NOT EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = inbox.seq) "
    "ORDER BY seq LIMIT ?2";
// The late sweep (body_retention.h): a step's rows in (received_at, seq) order, from the
// index alone; then, for each beyond the walk and applied, its body unless already removed.
// ?1, ?2 the cursor (received_at, seq), ?3 the cutoff, ?4 the most rows; the index holds
// each row's seq (its rowid) after received_at, so the order needs no sort.
constexpr const char* kLateRows =
    "SELECT seq, received_at FROM inbox INDEXED BY deliveries_received_at "
    "WHERE received_at >= ?1 AND received_at < ?3 AND (received_at > ?1 OR seq > ?2) "
    "ORDER BY received_at, seq LIMIT ?4";
// Where the walk stands after a batch (the last delivery it took), written by every batch
// and before any late removal, so that the fallback above is read once at most.
constexpr const char* kWalkTo =
    "INSERT INTO retention_walk (id, walked_seq) VALUES (1, ?1) "
    "ON CONFLICT (id) DO UPDATE SET walked_seq = max(walked_seq, excluded.walked_seq)";
constexpr const char* kApplied = "SELECT applied_seq FROM processor_state WHERE id = 1";
constexpr const char* kLateBody =
    "SELECT body FROM inbox WHERE seq = ?1 AND NOT EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = ?1)";
constexpr const char* kEmpty = "UPDATE inbox SET headers = '{}', body = x'' WHERE seq = ?1";
// With the user the processor recorded for the delivery (its outcome), so the row stays
// findable by `purge-user` once the body that named the user is gone (spec §11).
constexpr const char* kRecord =
    "INSERT INTO removed_bodies (seq, body_sha256, body_bytes, removed_at_ms, user_id) "
    "VALUES (?1, ?2, ?3, ?4, (SELECT user_id FROM delivery_outcomes WHERE seq = ?1))";

// changes_without_body: each removed body looked up in the feed by its seq (changes_seq).
constexpr const char* kChangesWithoutBody =
    "SELECT count(DISTINCT c.seq), count(*), coalesce(sum(c.row_count), 0) "
    "FROM removed_bodies AS r JOIN changes AS c ON c.seq = r.seq";
// ?1 the most ranges; runs of consecutive seqs as in removed_so_far.
constexpr const char* kChangesWithoutBodyRanges =
    "SELECT min(seq), max(seq) FROM (SELECT seq, seq - row_number() OVER (ORDER BY seq) AS run "
    "FROM removed_bodies AS r WHERE EXISTS (SELECT 1 FROM changes AS c WHERE c.seq = r.seq)) "
    "GROUP BY run ORDER BY 1 LIMIT ?1";

struct Removal {
  int64_t seq;
  std::string sha256;
  int64_t bytes;
};

class SqliteBodyRetention final : public BodyRetention {
 public:
  struct Statements {
    sqlite::Statement candidates, late_rows, late_body, walk_to, empty, record;
  };
  SqliteBodyRetention(sqlite::Connection& db, Statements statements) : db_(db), s_(std::move(statements)) {}

  Result<RemovedBodies> remove_bodies(int64_t received_before_ms, int64_t max_deliveries, int64_t now_ms) override {
    auto txn = sqlite::Transaction::begin(db_);
    if (!txn) return fail(txn);
    auto walked_to = db_.query_int(kWalkedTo);
    if (!walked_to) return fail(walked_to);
    RemovedBodies removed;
    auto chosen = choose(walked_to->value_or(0), received_before_ms, max_deliveries, removed);
    if (!chosen) return fail(chosen);
    if (auto written = write_removals(now_ms); !written) return fail(written);
    const int64_t walked = removals_.empty() ? walked_to->value_or(0) : removals_.back().seq;
    if (auto moved = walk_to(walked); !moved) return fail(moved);
    if (auto committed = txn->commit(); !committed) return fail(committed);
    return removed;
  }

  Result<LateSweep> remove_late_bodies(int64_t received_before_ms, LateCursor after, int64_t max_rows,
                                       int64_t now_ms) override {
    auto txn = sqlite::Transaction::begin(db_);
    if (!txn) return fail(txn);
    auto walked_to = db_.query_int(kWalkedTo);
    if (!walked_to) return fail(walked_to);
    auto applied = db_.query_int(kApplied);
    if (!applied) return fail(applied);
    std::vector<int64_t> seqs, received_at;
    s_.late_rows.bind(1, after.received_at_ms).bind(2, after.seq).bind(3, received_before_ms).bind(4, max_rows);
    auto read = s_.late_rows.for_each_row([&](const sqlite::Statement& row) {
      seqs.push_back(row.column_int(0));
      received_at.push_back(row.column_int(1));
    });
    if (!read) return fail(read);
    LateSweep sweep;
    sweep.done = static_cast<int64_t>(seqs.size()) < max_rows;
    if (!seqs.empty()) sweep.next = LateCursor{received_at.back(), seqs.back()};
    removals_.clear();
    for (size_t i = 0; i < seqs.size(); ++i) {
      if (seqs[i] <= walked_to->value_or(0) || seqs[i] > applied->value_or(0)) continue;
      if (sweep.removed.bytes >= kMaxBodyBatchBytes) {  // the rest in the next step, from this row
        sweep.next = LateCursor{received_at[i], seqs[i] - 1};
        sweep.done = false;
        sweep.removed.more = true;
        break;
      }
      s_.late_body.bind(1, seqs[i]);
      auto has_body = s_.late_body.step();
      if (!has_body) return fail(has_body);
      if (*has_body) {
        const std::string_view body = s_.late_body.column_blob(0);
        removals_.push_back(Removal{seqs[i], sha256_hex(body), static_cast<int64_t>(body.size())});
        sweep.removed.deliveries += 1;
        sweep.removed.bytes += static_cast<int64_t>(body.size());
      }
      s_.late_body.reset();
    }
    // The walk's place kept before a late removal can move the fallback past it.
    if (!removals_.empty()) {
      if (auto kept = walk_to(walked_to->value_or(0)); !kept) return fail(kept);
    }
    if (auto written = write_removals(now_ms); !written) return fail(written);
    if (auto committed = txn->commit(); !committed) return fail(committed);
    return sweep;
  }

  Result<RemovedSoFar> removed_so_far(int64_t max_ranges) override {
    RemovedSoFar so_far;
    auto count = db_.query_int("SELECT count(*) FROM removed_bodies");
    if (!count) return fail(count);
    so_far.deliveries = count->value_or(0);
    // Runs of consecutive seqs: seq minus its rank is the same along a run.
    auto ranges = db_.prepare(
        "SELECT min(seq), max(seq) FROM (SELECT seq, seq - row_number() OVER (ORDER BY seq) AS run "
        "FROM removed_bodies) GROUP BY run ORDER BY 1 LIMIT ?1");
    if (!ranges) return fail(ranges);
    ranges->bind(1, max_ranges);
    auto read = ranges->for_each_row([&](const sqlite::Statement& row) {
      so_far.ranges.push_back(SeqRange{row.column_int(0), row.column_int(1)});
    });
    if (!read) return fail(read);
    return so_far;
  }

  Result<ChangesWithoutBody> changes_without_body(int64_t max_ranges) override {
    ChangesWithoutBody found;
    auto counts = db_.prepare(kChangesWithoutBody);
    if (!counts) return fail(counts);
    auto counted = counts->for_each_row([&](const sqlite::Statement& row) {
      found.deliveries = row.column_int(0);
      found.changes = row.column_int(1);
      found.rows = row.column_int(2);
    });
    if (!counted) return fail(counted);
    if (found.deliveries == 0) return found;
    auto ranges = db_.prepare(kChangesWithoutBodyRanges);
    if (!ranges) return fail(ranges);
    ranges->bind(1, max_ranges);
    auto read = ranges->for_each_row([&](const sqlite::Statement& row) {
      found.ranges.push_back(SeqRange{row.column_int(0), row.column_int(1)});
    });
    if (!read) return fail(read);
    return found;
  }

  Result<bool> give_space_back(int64_t max_bytes) override {
    auto mode = db_.query_int("PRAGMA auto_vacuum");
    if (!mode) return fail(mode);
    if (mode->value_or(0) != 2) return false;  // not INCREMENTAL: the pages are reused instead
    auto page_size = db_.query_int("PRAGMA page_size");
    if (!page_size) return fail(page_size);
    const int64_t pages = std::max<int64_t>(1, max_bytes / page_size->value_or(4096));
    if (auto vacuumed = db_.exec("PRAGMA incremental_vacuum(" + std::to_string(pages) + ")"); !vacuumed) {
      return fail(vacuumed);
    }
    auto left = db_.query_int("PRAGMA freelist_count");
    if (!left) return fail(left);
    return left->value_or(0) > 0;
  }

 private:
  // Reads the batch (hashing each body as it goes) before anything is written: the rows
  // are then changed with no read of the same table open.
  Result<void> choose(int64_t walked_to, int64_t received_before_ms, int64_t max_deliveries, RemovedBodies& removed) {
    removals_.clear();
    auto& candidates_ = s_.candidates;
    candidates_.bind(1, walked_to).bind(2, max_deliveries);
    BodyBatch batch(received_before_ms, max_deliveries);  // store/body_batch.h: which rows, when to stop
    for (;;) {
      auto has_row = candidates_.step();
      if (!has_row) return fail(has_row);
      if (!*has_row) break;
      const std::string_view body = candidates_.column_blob(2);
      const auto verdict = batch.consider(candidates_.column_int(1), static_cast<int64_t>(body.size()));
      if (verdict == BodyBatch::Verdict::stop) break;
      removals_.push_back(Removal{candidates_.column_int(0), sha256_hex(body), static_cast<int64_t>(body.size())});
      if (verdict == BodyBatch::Verdict::take_last) break;
    }
    candidates_.reset();
    removed = batch.result();
    return {};
  }

  Result<void> walk_to(int64_t seq) {
    s_.walk_to.bind(1, seq);
    return s_.walk_to.run();
  }

  // Empties the chosen bodies and records each, in the caller's transaction.
  Result<void> write_removals(int64_t now_ms) {
    for (const Removal& removal : removals_) {
      s_.empty.bind(1, removal.seq);
      if (auto emptied = s_.empty.run(); !emptied) return fail(emptied);
      s_.record.bind(1, removal.seq).bind(2, std::string_view(removal.sha256)).bind(3, removal.bytes).bind(4, now_ms);
      if (auto recorded = s_.record.run(); !recorded) return fail(recorded);
    }
    return {};
  }

  sqlite::Connection& db_;
  Statements s_;
  std::vector<Removal> removals_;
};

}  // namespace

Result<std::unique_ptr<BodyRetention>> open_sqlite_body_retention(sqlite::Connection& write_db) {
  auto candidates = write_db.prepare(kCandidates);
  if (!candidates) return fail(candidates);
  auto late_rows = write_db.prepare(kLateRows);
  if (!late_rows) return fail(late_rows);
  auto late_body = write_db.prepare(kLateBody);
  if (!late_body) return fail(late_body);
  auto walk_to = write_db.prepare(kWalkTo);
  if (!walk_to) return fail(walk_to);
  auto empty = write_db.prepare(kEmpty);
  if (!empty) return fail(empty);
  auto record = write_db.prepare(kRecord);
  if (!record) return fail(record);
  return std::unique_ptr<BodyRetention>(new SqliteBodyRetention(
      write_db, {std::move(*candidates), std::move(*late_rows), std::move(*late_body), std::move(*walk_to),
                 std::move(*empty), std::move(*record)}));
}

}  // namespace hh::store
