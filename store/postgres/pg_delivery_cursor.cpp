#include "store/postgres/pg_delivery_cursor.h"

#include <algorithm>

#include "store/postgres/database.h"

namespace hh::store {
namespace {

// Rows per round trip: enough to amortise it, few enough that a chunk of large bodies
// stays small (the processor parses one row at a time).
constexpr int64_t kChunkRows = 64;

// Columns as SqliteDeliveryCursor reads them; removed_bodies is looked up only for an
// empty body.
constexpr const char* kChunk =
    "SELECT i.seq, i.origin, i.received_at, coalesce(i.event_type, ''), i.headers, i.body, "
    "coalesce(o.status, 'pending'), o.family, o.error, "
    "CASE WHEN length(i.body) = 0 THEN EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = i.seq) "
    "ELSE false END, o.user_id "
    "FROM inbox AS i LEFT JOIN delivery_outcomes AS o ON o.seq = i.seq "
    "WHERE i.seq > $1 AND i.seq <= $2 ORDER BY i.seq LIMIT $3";

class PgDeliveryReader final : public DeliveryCursor {
 public:
  explicit PgDeliveryReader(pg::Connection db) : db_(std::move(db)), cursor_(db_) {}
  void start(int64_t after, int64_t last, int64_t limit) override { cursor_.start(after, last, limit); }
  Result<bool> next(PendingDelivery& pending) override { return cursor_.next(pending); }
  void finish() override { cursor_.finish(); }

 private:
  pg::Connection db_;  // declared first: the cursor refers to it
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
  auto rows = db_->run("hh_delivery_chunk", pg::Params().add(after_).add(last_).add(wanted), pg::Results::binary);
  if (!rows) return fail(rows, "reading the inbox");
  chunk_ = std::move(*rows);
  exhausted_ = chunk_.size() < wanted;  // a short chunk was the last one
  at_ = 0;
  return {};
}

Result<bool> PgDeliveryCursor::next(PendingDelivery& pending) {
  if (at_ >= chunk_.size()) {
    if (left_ <= 0 || exhausted_) return false;
    if (auto fetched = fetch_chunk(); !fetched) return fail(fetched);
    if (chunk_.empty()) return false;
  }
  const int r = at_++;
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
  after_ = pending.row.seq;
  --left_;
  return true;
}

void PgDeliveryCursor::finish() {
  chunk_ = pg::Rows();
  at_ = 0;
  left_ = 0;
}

Result<std::unique_ptr<DeliveryCursor>> open_postgres_delivery_reader(const Database& database) {
  auto db = connect(database);
  if (!db) return fail(db);
  return std::unique_ptr<DeliveryCursor>(new PgDeliveryReader(std::move(*db)));
}

}  // namespace hh::store
