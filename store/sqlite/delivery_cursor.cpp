#include "store/sqlite/delivery_cursor.h"

#include "store/damaged_file.h"
#include "store/sqlite/database.h"

namespace hh::store {
namespace {

// At most the first 256 MiB of the file are mapped; SQLite reads the rest with pread().
constexpr const char* kReaderMmap = "PRAGMA mmap_size = 268435456";

class DeliveryReader final : public DeliveryCursor {
 public:
  DeliveryReader(sqlite::Connection db, SqliteDeliveryCursor cursor) : db_(std::move(db)), cursor_(std::move(cursor)) {}
  void start(int64_t after, int64_t last, int64_t limit) override { cursor_.start(after, last, limit); }
  Result<bool> next(PendingDelivery& pending) override { return cursor_.next(pending); }
  void finish() override { cursor_.finish(); }

 private:
  sqlite::Connection db_;  // declared first: destroyed after the cursor's statement
  SqliteDeliveryCursor cursor_;
};

}  // namespace

Result<SqliteDeliveryCursor> SqliteDeliveryCursor::create(sqlite::Connection& db) {
  auto select = db.prepare(
      "SELECT i.seq, i.origin, i.received_at, i.event_type, i.headers, i.body, coalesce(o.status, 'pending'), "
      "o.family, o.error, "
      // Only an empty body is looked up among the removed ones: no lookup per delivery.
      "CASE WHEN length(i.body) = 0 THEN EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = i.seq) "
      "ELSE 0 END, o.user_id FROM inbox AS i LEFT JOIN delivery_outcomes AS o ON o.seq = i.seq "
      "WHERE i.seq > ?1 AND i.seq <= ?2 ORDER BY i.seq LIMIT ?3");
  if (!select) return fail(select);
  auto newest_up_to = db.prepare("SELECT max(seq) FROM inbox WHERE seq <= ?1");
  if (!newest_up_to) return fail(newest_up_to);
  return SqliteDeliveryCursor(std::move(*select), std::move(*newest_up_to));
}

void SqliteDeliveryCursor::start(int64_t after, int64_t last, int64_t limit) {
  select_.bind(1, after).bind(2, last).bind(3, limit);
  last_ = last;
  limit_ = limit;
  read_ = 0;
  seen_seq_ = after;
}

// A read that stopped short of `last` (fewer rows than its limit) saw every row up to it,
// or the table's pages are damaged: the newest row up to `last` is found by a descent from
// the root, not by the walk. Rows are only added above the newest seq, and erasure's
// placeholder takes a seq that was there, so no row appears under `last` in between.
Result<void> SqliteDeliveryCursor::check_read_through() {
  if (read_ >= limit_ || seen_seq_ >= last_) return {};
  newest_up_to_.bind(1, last_);
  int64_t newest = 0;
  auto row = newest_up_to_.step();
  if (row && *row) newest = newest_up_to_.column_int(0);
  newest_up_to_.reset();
  if (!row) return fail(row);
  if (newest <= seen_seq_) return {};
  return fail(ErrorKind::io, "the inbox cannot be read past seq " + std::to_string(seen_seq_) +
                                 ", though rows up to seq " + std::to_string(newest) +
                                 " are there: " + store::damaged_file());
}

Result<bool> SqliteDeliveryCursor::next(PendingDelivery& pending) {
  auto row = select_.step();
  if (!row) return fail(row);
  if (!*row) {
    if (auto checked = check_read_through(); !checked) return fail(checked);
    return false;
  }
  ++read_;
  pending.row.seq = select_.column_int(0);
  seen_seq_ = pending.row.seq;
  pending.row.origin = select_.column_text(1);
  pending.received_at_ms = select_.column_int(2);
  pending.row.event_type = select_.column_text(3);  // "" for NULL
  pending.row.headers_json = select_.column_text(4);
  pending.row.body = select_.column_blob(5);
  pending.stored.status = select_.column_text(6);
  pending.stored.family = select_.column_optional_text(7);
  pending.stored.error = select_.column_optional_text(8);
  pending.body_removed = select_.column_int(9) != 0;
  pending.stored.user_id = select_.column_optional_text(10);
  return true;
}

void SqliteDeliveryCursor::finish() { select_.reset(); }

Result<std::unique_ptr<DeliveryCursor>> open_delivery_reader(const std::string& path, ReaderUse use) {
  auto db = open_for_reading(path);
  if (!db) return fail(db);
  // Page reads through mmap instead of one pread() per page: reading large bodies is much
  // of a catch-up's work. SQLite falls back to reads by itself.
  // Not when following: its rows are the newest, mostly still in the WAL (read with
  // pread() either way), and `serve` would show every page of the file it ever read in
  // its resident memory.
  if (use == ReaderUse::catch_up) {
    if (auto mapped = db->exec(kReaderMmap); !mapped) return fail(mapped);
  }
  auto cursor = SqliteDeliveryCursor::create(*db);
  if (!cursor) return fail(cursor);
  return std::unique_ptr<DeliveryCursor>(new DeliveryReader(std::move(*db), std::move(*cursor)));
}

}  // namespace hh::store
