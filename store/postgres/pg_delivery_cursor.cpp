#include "store/postgres/pg_delivery_cursor.h"

#include <algorithm>

#include "store/postgres/database.h"

namespace hh::store {
namespace {

// Rows per round trip: enough to amortise it, few enough that a chunk of large bodies
// stays small (the processor parses one row at a time).
constexpr int64_t kChunkRows = 64;

// Columns as SqliteDeliveryCursor reads them, then the row's shard; removed_bodies is
// looked up only for an empty body. $4: the owned shards, NULL for every row.
constexpr const char* kChunk =
    "SELECT i.seq, i.origin, i.received_at, coalesce(i.event_type, ''), i.headers, i.body, "
    "coalesce(o.status, 'pending'), o.family, o.error, "
    "CASE WHEN length(i.body) = 0 THEN EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = i.seq) "
    "ELSE false END, o.user_id, i.shard "
    "FROM inbox AS i LEFT JOIN delivery_outcomes AS o ON o.seq = i.seq "
    "WHERE i.seq > $1 AND i.seq <= $2 AND ($4::bigint[] IS NULL OR i.shard IS NULL OR i.shard = ANY ($4::bigint[])) "
    "ORDER BY i.seq LIMIT $3";
constexpr int kShardColumn = 11;

// The owned shards, or NULL when they are all owned (no filter).
void add_shard_filter(pg::Params& params, const pgshard::OwnedShards* shards) {
  if (shards == nullptr || shards->all()) {
    params.add_null();
  } else {
    params.add(shards->array_literal());
  }
}

class PgDeliveryReader final : public DeliveryCursor {
 public:
  PgDeliveryReader(pg::Connection db, std::optional<pgshard::OwnedShards> shards)
      : db_(std::move(db)), shards_(shards), cursor_(db_, shards_ ? &*shards_ : nullptr) {}
  void start(int64_t after, int64_t last, int64_t limit) override { cursor_.start(after, last, limit); }
  Result<bool> next(PendingDelivery& pending) override { return cursor_.next(pending); }
  void finish() override { cursor_.finish(); }

 private:
  pg::Connection db_;  // declared first: the cursor refers to it
  const std::optional<pgshard::OwnedShards> shards_;  // and to these
  PgDeliveryCursor cursor_;
};

}  // namespace

void PgDeliveryCursor::start(int64_t after, int64_t last, int64_t limit) {
  after_ = after;
  last_ = last;
  left_ = limit;
  exhausted_ = false;
  chunk_ = pg::Rows();
  at_ = 0;
}

Result<void> PgDeliveryCursor::fetch_chunk() {
  if (!prepared_) {
    if (auto p = db_->prepare("hh_delivery_chunk", kChunk); !p) return p;
    prepared_ = true;
  }
  const int64_t wanted = std::min(left_, kChunkRows);
  pg::Params params;
  params.add(after_).add(last_).add(wanted);
  add_shard_filter(params, shards_);
  auto rows = db_->run("hh_delivery_chunk", params, pg::Results::binary);
  if (!rows) return fail(rows, "reading the inbox");
  chunk_ = std::move(*rows);
  exhausted_ = chunk_.size() < wanted;  // a short chunk was the last one
  at_ = 0;
  return {};
}

bool PgDeliveryCursor::wanted(int row, int64_t seq) const {
  if (shards_ == nullptr) return true;
  // Every owned row above every owned position is wanted (the usual case): no shard to
  // compute. A row of another shard was not read, except one stored without a shard.
  if (shards_->all() && !shards_->any_ahead_of(seq)) return true;
  const int shard = chunk_.is_null(row, kShardColumn)
                        ? pgshard::shard_of_row(chunk_.text(row, 1), chunk_.text(row, 4), chunk_.text(row, 5))
                        : static_cast<int>(chunk_.integer(row, kShardColumn));
  return shard >= 0 && shard < pgshard::kShardCount && shards_->wants(shard, seq);
}

Result<bool> PgDeliveryCursor::next(PendingDelivery& pending) {
  int r = 0;
  for (;;) {
    if (at_ >= chunk_.size()) {
      if (left_ <= 0 || exhausted_) return false;
      if (auto fetched = fetch_chunk(); !fetched) return fail(fetched);
      if (chunk_.empty()) return false;
    }
    r = at_++;
    after_ = chunk_.integer(r, 0);  // the next chunk starts after it, handed out or not
    if (wanted(r, after_)) break;
  }
  pending.row.seq = chunk_.integer(r, 0);
  pending.row.origin = chunk_.text(r, 1);
  pending.received_at_ms = chunk_.integer(r, 2);
  pending.row.event_type = chunk_.text(r, 3);
  pending.row.headers_json = chunk_.text(r, 4);
  pending.row.body = chunk_.text(r, 5);
  pending.stored.status = chunk_.text(r, 6);
  pending.stored.family = chunk_.optional_text(r, 7);
  pending.stored.error = chunk_.optional_text(r, 8);
  pending.body_removed = chunk_.text(r, 9) == std::string_view("\1", 1);  // binary bool
  pending.stored.user_id = chunk_.optional_text(r, 10);
  --left_;
  return true;
}

void PgDeliveryCursor::finish() {
  chunk_ = pg::Rows();
  at_ = 0;
  left_ = 0;
}

Result<std::unique_ptr<DeliveryCursor>> open_postgres_delivery_reader(const Database& database,
                                                                      std::optional<pgshard::OwnedShards> shards) {
  auto db = connect(database);
  if (!db) return fail(db);
  return std::unique_ptr<DeliveryCursor>(new PgDeliveryReader(std::move(*db), shards));
}

}  // namespace hh::store
