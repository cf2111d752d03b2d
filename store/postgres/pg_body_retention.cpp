#include "store/postgres/pg_body_retention.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "store/body_batch.h"
#include "store/postgres/database.h"

namespace hh::store {
namespace {

// As sqlite_body_retention.cpp: the walk's applied deliveries from where it stands
// (retention_walk; without its row, after the last removed body that had bytes: a store
// migrated from SQLite may hold an erasure's placeholder above bodies still there), passing
// over rows already recorded, in seq order (only their sizes: the batch is chosen before any
// body is read). Below the processed position (every shard's: hh_processed_seq()) every seq
// has committed, so no gap is walked past.
constexpr std::string_view kPgretWalkedTo =
    "SELECT coalesce((SELECT walked_seq FROM retention_walk WHERE id = 1), "
    "(SELECT seq FROM removed_bodies WHERE body_bytes > 0 ORDER BY seq DESC LIMIT 1), 0), hh_processed_seq()";
// $1 where the walk stands, $2 the most rows.
constexpr std::string_view kPgretCandidates =
    "SELECT seq, received_at, octet_length(body) FROM inbox AS i "
    "WHERE seq > $1 AND seq <= hh_processed_seq() "
    "AND NOT EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = i.seq) "
    "ORDER BY seq LIMIT $2";
// Where the walk stands after a batch, written by every batch and before any late removal.
constexpr std::string_view kPgretWalkTo =
    "INSERT INTO retention_walk (id, walked_seq) VALUES (1, $1) "
    "ON CONFLICT (id) DO UPDATE SET walked_seq = greatest(retention_walk.walked_seq, excluded.walked_seq)";
// Recorded before the body goes, hashed where it lies, with the user of the delivery's
// outcome (as sqlite_body_retention.cpp).
constexpr std::string_view kPgretRecord =
    "INSERT INTO removed_bodies (seq, body_sha256, body_bytes, removed_at_ms, user_id) "
    "SELECT i.seq, encode(sha256(i.body), 'hex'), octet_length(i.body), $2, "
    "(SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = i.seq) FROM inbox AS i WHERE i.seq = ANY ($1::bigint[])";
constexpr std::string_view kPgretEmpty =
    "UPDATE inbox SET headers = '{}', body = ''::bytea WHERE seq = ANY ($1::bigint[])";

// The late sweep (body_retention.h): a step's rows in (received_at, seq) order,
// and, of those beyond the walk and processed, the ones still holding a body, with its size.
// $1, $2 the cursor (received_at, seq), $3 the cutoff, $4 the most rows.
constexpr std::string_view kPgretLateRows =
    "SELECT seq, received_at FROM inbox WHERE received_at >= $1 AND received_at < $3 "
    "AND (received_at > $1 OR seq > $2) ORDER BY received_at, seq LIMIT $4";
constexpr std::string_view kPgretLateSizes =
    "SELECT seq, octet_length(body) FROM inbox AS i WHERE seq = ANY ($1::bigint[]) "
    "AND NOT EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = i.seq)";

class PgBodyRetention final : public BodyRetention {
 public:
  explicit PgBodyRetention(pg::Connection& db) : db_(db) {}

  Result<RemovedBodies> remove_bodies(int64_t received_before_ms, int64_t max_deliveries, int64_t now_ms) override {
    auto txn = pg::Transaction::begin(db_);
    if (!txn) return fail(txn);
    auto locked = db_.query("SELECT pg_try_advisory_xact_lock($1)", pg::Params().add(kBodyRetentionLock));
    if (!locked) return fail(locked);
    if (!locked->boolean(0, 0)) return RemovedBodies{};  // another instance is removing a batch
    auto walked = db_.query(kPgretWalkedTo);
    if (!walked) return fail(walked);
    const int64_t walked_to = walked->integer(0, 0);
    auto candidates = db_.query(kPgretCandidates, pg::Params().add(walked_to).add(max_deliveries));
    if (!candidates) return fail(candidates);
    BodyBatch batch(received_before_ms, max_deliveries);
    std::string seqs = "{";
    int64_t last_taken = walked_to;
    for (int r = 0; r < candidates->size(); ++r) {
      const auto verdict = batch.consider(candidates->integer(r, 1), candidates->integer(r, 2));
      if (verdict == BodyBatch::Verdict::stop) break;
      last_taken = candidates->integer(r, 0);
      if (seqs.size() > 1) seqs += ',';
      seqs += std::to_string(last_taken);
      if (verdict == BodyBatch::Verdict::take_last) break;
    }
    seqs += '}';
    const RemovedBodies removed = batch.result();
    if (removed.deliveries > 0) {
      if (auto written = write_removals(seqs, now_ms); !written) return fail(written);
    }
    if (auto moved = walk_to(last_taken); !moved) return fail(moved);
    if (auto committed = txn->commit(); !committed) return fail(committed);
    return removed;
  }

  Result<LateSweep> remove_late_bodies(int64_t received_before_ms, LateCursor after, int64_t max_rows,
                                       int64_t now_ms) override {
    auto txn = pg::Transaction::begin(db_);
    if (!txn) return fail(txn);
    auto locked = db_.query("SELECT pg_try_advisory_xact_lock($1)", pg::Params().add(kBodyRetentionLock));
    if (!locked) return fail(locked);
    if (!locked->boolean(0, 0)) return LateSweep{{}, {}, true};  // another instance is removing: its sweep
    auto walked = db_.query(kPgretWalkedTo);
    if (!walked) return fail(walked);
    const int64_t walked_to = walked->integer(0, 0), processed = walked->integer(0, 1);
    auto rows = db_.query(kPgretLateRows, pg::Params()
                                              .add(after.received_at_ms)
                                              .add(after.seq)
                                              .add(received_before_ms)
                                              .add(max_rows));
    if (!rows) return fail(rows);
    std::vector<int64_t> received_at;
    for (int r = 0; r < rows->size(); ++r) received_at.push_back(rows->integer(r, 1));
    LateSweep sweep;
    sweep.done = rows->size() < max_rows;
    if (rows->size() > 0) sweep.next = LateCursor{received_at.back(), rows->integer(rows->size() - 1, 0)};
    std::string beyond = "{";
    for (size_t i = 0; i < received_at.size(); ++i) {
      const int64_t seq = rows->integer(static_cast<int>(i), 0);
      if (seq <= walked_to || seq > processed) continue;
      if (beyond.size() > 1) beyond += ',';
      beyond += std::to_string(seq);
    }
    beyond += '}';
    if (beyond.size() == 2) return sweep;  // nothing late here ({}); the transaction changed nothing
    auto sizes = db_.query(kPgretLateSizes, pg::Params().add(std::string_view(beyond)));
    if (!sizes) return fail(sizes);
    std::unordered_map<int64_t, int64_t> size_of;
    for (int r = 0; r < sizes->size(); ++r) size_of.emplace(sizes->integer(r, 0), sizes->integer(r, 1));
    std::string seqs = "{";
    for (size_t i = 0; i < received_at.size() && !size_of.empty(); ++i) {  // in (received_at, seq) order
      const auto size = size_of.find(rows->integer(static_cast<int>(i), 0));
      if (size == size_of.end()) continue;
      if (sweep.removed.bytes >= kMaxBodyBatchBytes) {  // the rest in the next step, from this row
        sweep.next = LateCursor{received_at[i], size->first - 1};
        sweep.done = false;
        sweep.removed.more = true;
        break;
      }
      if (seqs.size() > 1) seqs += ',';
      seqs += std::to_string(size->first);
      sweep.removed.deliveries += 1;
      sweep.removed.bytes += size->second;
    }
    seqs += '}';
    if (sweep.removed.deliveries > 0) {
      // The walk's place kept before a late removal can move the fallback past it.
      if (auto kept = walk_to(walked_to); !kept) return fail(kept);
      if (auto written = write_removals(seqs, now_ms); !written) return fail(written);
    }
    if (auto committed = txn->commit(); !committed) return fail(committed);
    return sweep;
  }

  Result<ChangesWithoutBody> changes_without_body(int64_t max_ranges) override {
    ChangesWithoutBody found;
    // Each removed body looked up in the feed by its seq (changes_seq).
    auto counts = db_.query(
        "SELECT count(DISTINCT c.seq), count(*), coalesce(sum(c.row_count), 0)::bigint "
        "FROM removed_bodies AS r JOIN changes AS c ON c.seq = r.seq");
    if (!counts) return fail(counts);
    found.deliveries = counts->integer(0, 0);
    found.changes = counts->integer(0, 1);
    found.rows = counts->integer(0, 2);
    if (found.deliveries == 0) return found;
    auto ranges = db_.query(
        "SELECT min(seq), max(seq) FROM (SELECT seq, seq - row_number() OVER (ORDER BY seq) AS run "
        "FROM removed_bodies AS r WHERE EXISTS (SELECT 1 FROM changes AS c WHERE c.seq = r.seq)) AS numbered "
        "GROUP BY run ORDER BY 1 LIMIT $1",
        pg::Params().add(max_ranges));
    if (!ranges) return fail(ranges);
    for (int r = 0; r < ranges->size(); ++r) {
      found.ranges.push_back(SeqRange{ranges->integer(r, 0), ranges->integer(r, 1)});
    }
    return found;
  }

  Result<bool> give_space_back(int64_t) override { return false; }  // autovacuum reuses the space

  Result<RemovedSoFar> removed_so_far(int64_t max_ranges) override {
    RemovedSoFar so_far;
    auto count = db_.query_int("SELECT count(*) FROM removed_bodies");
    if (!count) return fail(count);
    so_far.deliveries = count->value_or(0);
    // Runs of consecutive seqs: seq minus its rank is the same along a run.
    auto ranges = db_.query(
        "SELECT min(seq), max(seq) FROM (SELECT seq, seq - row_number() OVER (ORDER BY seq) AS run "
        "FROM removed_bodies) AS numbered GROUP BY run ORDER BY 1 LIMIT $1",
        pg::Params().add(max_ranges));
    if (!ranges) return fail(ranges);
    for (int r = 0; r < ranges->size(); ++r) {
      so_far.ranges.push_back(SeqRange{ranges->integer(r, 0), ranges->integer(r, 1)});
    }
    return so_far;
  }

 private:
  Result<void> walk_to(int64_t seq) {
    if (auto moved = db_.query(kPgretWalkTo, pg::Params().add(seq)); !moved) return fail(moved);
    return {};
  }

  // Records, then empties, the bodies of `seqs` (a bigint[] literal), in the caller's
  // transaction.
  Result<void> write_removals(const std::string& seqs, int64_t now_ms) {
    if (auto recorded = db_.query(kPgretRecord, pg::Params().add(std::string_view(seqs)).add(now_ms)); !recorded) {
      return fail(recorded);
    }
    if (auto emptied = db_.query(kPgretEmpty, pg::Params().add(std::string_view(seqs))); !emptied) {
      return fail(emptied);
    }
    return {};
  }

  pg::Connection& db_;
};

}  // namespace

Result<std::unique_ptr<BodyRetention>> open_postgres_body_retention(pg::Connection& write_db) {
  return std::unique_ptr<BodyRetention>(new PgBodyRetention(write_db));
}

}  // namespace hh::store
