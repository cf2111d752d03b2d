#include "store/sqlite/sqlite_body_retention.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/sha256.h"
#include "store/body_batch.h"

namespace hh::store {
namespace {

// Walks the inbox in seq order from just after the last removed body, so each batch starts
// where the previous one stopped instead of stepping over every row removed so far. It
// stops at the first delivery that is too new or not applied yet: received_at (taken when
// the request arrived, or the fetch ended) nearly always grows with seq, so little older
// lies beyond it. A clock stepped back, or a replayed capture's older times, only delays
// the removal of what follows until that row is old enough; nothing is removed early.
// The walk starts after the last removed body that had bytes: `purge-user` may leave a
// placeholder of no bytes at the newest seq, recorded as removed (sqlite_erasure.cpp,
// keep_seq_taken), above deliveries whose bodies are still there; rows already recorded
// are passed over.
constexpr const char* kCandidates =
    "SELECT seq, received_at, body FROM inbox "
    "WHERE seq > coalesce((SELECT seq FROM removed_bodies WHERE body_bytes > 0 ORDER BY seq DESC LIMIT 1), 0) "
    "AND seq <= (SELECT applied_seq FROM processor_state WHERE id = 1) "
    "AND NOT EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = inbox.seq) "
    "ORDER BY seq LIMIT ?1";
constexpr const char* kEmpty = "UPDATE inbox SET headers = '{}', body = x'' WHERE seq = ?1";
// With the user the processor recorded for the delivery (its outcome), so the row stays
// findable by `purge-user` once the body that named the user is gone (spec §11).
constexpr const char* kRecord =
    "INSERT INTO removed_bodies (seq, body_sha256, body_bytes, removed_at_ms, user_id) "
    "VALUES (?1, ?2, ?3, ?4, (SELECT user_id FROM delivery_outcomes WHERE seq = ?1))";

struct Removal {
  int64_t seq;
  std::string sha256;
  int64_t bytes;
};

class SqliteBodyRetention final : public BodyRetention {
 public:
  SqliteBodyRetention(sqlite::Connection& db, sqlite::Statement candidates, sqlite::Statement empty,
                      sqlite::Statement record)
      : db_(db), candidates_(std::move(candidates)), empty_(std::move(empty)), record_(std::move(record)) {}

  Result<RemovedBodies> remove_bodies(int64_t received_before_ms, int64_t max_deliveries, int64_t now_ms) override {
    auto txn = sqlite::Transaction::begin(db_);
    if (!txn) return fail(txn);
    RemovedBodies removed;
    auto chosen = choose(received_before_ms, max_deliveries, removed);
    if (!chosen) return fail(chosen);
    for (const Removal& removal : removals_) {
      empty_.bind(1, removal.seq);
      if (auto emptied = empty_.run(); !emptied) return fail(emptied);
      record_.bind(1, removal.seq).bind(2, std::string_view(removal.sha256)).bind(3, removal.bytes).bind(4, now_ms);
      if (auto recorded = record_.run(); !recorded) return fail(recorded);
    }
    if (auto committed = txn->commit(); !committed) return fail(committed);
    return removed;
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
  Result<void> choose(int64_t received_before_ms, int64_t max_deliveries, RemovedBodies& removed) {
    removals_.clear();
    candidates_.bind(1, max_deliveries);
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

  sqlite::Connection& db_;
  sqlite::Statement candidates_, empty_, record_;
  std::vector<Removal> removals_;
};

}  // namespace

Result<std::unique_ptr<BodyRetention>> open_sqlite_body_retention(sqlite::Connection& write_db) {
  auto candidates = write_db.prepare(kCandidates);
  if (!candidates) return fail(candidates);
  auto empty = write_db.prepare(kEmpty);
  if (!empty) return fail(empty);
  auto record = write_db.prepare(kRecord);
  if (!record) return fail(record);
  return std::unique_ptr<BodyRetention>(
      new SqliteBodyRetention(write_db, std::move(*candidates), std::move(*empty), std::move(*record)));
}

}  // namespace hh::store
