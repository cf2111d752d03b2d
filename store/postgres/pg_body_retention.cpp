#include "store/postgres/pg_body_retention.h"

#include <string>
#include <vector>

#include "store/body_batch.h"
#include "store/postgres/database.h"

namespace hh::store {
namespace {

// As sqlite_body_retention.cpp: the applied deliveries after the last removed body that had
// bytes (a store migrated from SQLite may hold an erasure's placeholder above bodies still
// there), passing over rows already recorded, in seq order (only their sizes: the batch is
// chosen before any body is read). Below the processed position (every shard's:
// hh_processed_seq()) every seq has committed, so no gap is walked past.
constexpr std::string_view kPgretCandidates =
    "SELECT seq, received_at, octet_length(body) FROM inbox AS i "
    "WHERE seq > coalesce((SELECT seq FROM removed_bodies WHERE body_bytes > 0 ORDER BY seq DESC LIMIT 1), 0) "
    "AND seq <= hh_processed_seq() "
    "AND NOT EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = i.seq) "
    "ORDER BY seq LIMIT $1";
// Recorded before the body goes, hashed where it lies, with the user of the delivery's
// outcome (as sqlite_body_retention.cpp).
constexpr std::string_view kPgretRecord =
    "INSERT INTO removed_bodies (seq, body_sha256, body_bytes, removed_at_ms, user_id) "
    "SELECT i.seq, encode(sha256(i.body), 'hex'), octet_length(i.body), $2, "
    "(SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = i.seq) FROM inbox AS i WHERE i.seq = ANY ($1::bigint[])";
constexpr std::string_view kPgretEmpty =
    "UPDATE inbox SET headers = '{}', body = ''::bytea WHERE seq = ANY ($1::bigint[])";

class PgBodyRetention final : public BodyRetention {
 public:
  explicit PgBodyRetention(pg::Connection& db) : db_(db) {}

  Result<RemovedBodies> remove_bodies(int64_t received_before_ms, int64_t max_deliveries, int64_t now_ms) override {
    auto txn = pg::Transaction::begin(db_);
    if (!txn) return fail(txn);
    auto locked = db_.query("SELECT pg_try_advisory_xact_lock($1)", pg::Params().add(kBodyRetentionLock));
    if (!locked) return fail(locked);
    if (!locked->boolean(0, 0)) return RemovedBodies{};  // another instance is removing a batch
    auto candidates = db_.query(kPgretCandidates, pg::Params().add(max_deliveries));
    if (!candidates) return fail(candidates);
    BodyBatch batch(received_before_ms, max_deliveries);
    std::string seqs = "{";
    for (int r = 0; r < candidates->size(); ++r) {
      const auto verdict = batch.consider(candidates->integer(r, 1), candidates->integer(r, 2));
      if (verdict == BodyBatch::Verdict::stop) break;
      if (seqs.size() > 1) seqs += ',';
      seqs += std::to_string(candidates->integer(r, 0));
      if (verdict == BodyBatch::Verdict::take_last) break;
    }
    seqs += '}';
    const RemovedBodies removed = batch.result();
    if (removed.deliveries > 0) {
      if (auto recorded = db_.query(kPgretRecord, pg::Params().add(std::string_view(seqs)).add(now_ms)); !recorded) {
        return fail(recorded);
      }
      if (auto emptied = db_.query(kPgretEmpty, pg::Params().add(std::string_view(seqs))); !emptied) {
        return fail(emptied);
      }
    }
    if (auto committed = txn->commit(); !committed) return fail(committed);
    return removed;
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
  pg::Connection& db_;
};

}  // namespace

Result<std::unique_ptr<BodyRetention>> open_postgres_body_retention(pg::Connection& write_db) {
  return std::unique_ptr<BodyRetention>(new PgBodyRetention(write_db));
}

}  // namespace hh::store
