#include "store/sqlite/sqlite_inbox.h"

#include <algorithm>
#include <memory>

namespace hh::store {
namespace {

// Bodies from this size on are inserted as a zeroblob and then written in place
// (sqlite3_blob_write): binding them whole makes SQLite build the row record in memory, a
// second full copy of the body (docs/decisions/019-large-bodies-written-in-place.md).
constexpr size_t kIncrementalBodyBytes = 1024 * 1024;
constexpr size_t kBlobChunkBytes = 1024 * 1024;
// Room in a row for everything but the body and headers (message id, event type, the
// record's own header): both are bounded far below this.
constexpr uint64_t kRowOverheadBytes = 4096;

struct BlobCloser {
  void operator()(sqlite3_blob* blob) const { sqlite3_blob_close(blob); }
};

Result<void> write_body_in_place(sqlite::Connection& db, int64_t seq, std::string_view body) {
  sqlite3_blob* raw = nullptr;
  if (sqlite3_blob_open(db.get(), "main", "inbox", "body", seq, 1, &raw) != SQLITE_OK) {
    sqlite3_blob_close(raw);
    return fail("writing the body: " + db.last_error());
  }
  std::unique_ptr<sqlite3_blob, BlobCloser> blob(raw);
  for (size_t at = 0; at < body.size(); at += kBlobChunkBytes) {
    const size_t n = std::min(kBlobChunkBytes, body.size() - at);
    if (sqlite3_blob_write(blob.get(), body.data() + at, static_cast<int>(n), static_cast<int>(at)) != SQLITE_OK) {
      return fail("writing the body: " + db.last_error());
    }
  }
  return {};
}

}  // namespace

std::string_view origin_name(Origin origin) { return origin == Origin::webhook ? "webhook" : "fetch"; }

Result<SqliteInbox> SqliteInbox::create(sqlite::Connection& db, WriterEntries entries) {
  // ON CONFLICT DO NOTHING: a new row changes one row (its seq is the last rowid), a known
  // message id none (then we look the existing seq up). Not RETURNING: SQLite collects
  // RETURNING rows in a temporary b-tree that it builds and frees at every execution
  // (docs/decisions/017-inbox-insert-without-returning.md).
  auto insert = db.prepare(
      "INSERT INTO inbox (message_id, origin, received_at, webhook_timestamp, event_type, headers, body) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (message_id) DO NOTHING");
  if (!insert) return fail(insert);
  auto find = db.prepare("SELECT seq FROM inbox WHERE message_id = ?1");
  if (!find) return fail(find);
  auto last = db.query_int("SELECT max(seq) FROM inbox");
  if (!last) return fail(last);
  return SqliteInbox(db, std::move(*insert), std::move(*find), std::move(entries), last->value_or(0));
}

namespace {

// The largest delivery a row holds on `db`, beside the rest of the row.
uint64_t max_delivery_bytes_of(sqlite3* db) {
  const int limit = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
  return limit > static_cast<int>(kRowOverheadBytes) ? static_cast<uint64_t>(limit) - kRowOverheadBytes : 0;
}

}  // namespace

// SQLite refuses a string, blob or row longer than SQLITE_LIMIT_LENGTH (SQLITE_TOOBIG).
// Checked per delivery before its insert, so one such delivery is refused alone instead
// of failing the transaction its whole group commit shares.
uint64_t SqliteInbox::max_delivery_bytes() const { return max_delivery_bytes_of(db_->get()); }

uint64_t sqlite_max_delivery_bytes() {
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE, nullptr);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db(raw, &sqlite3_close);
  // No connection (out of memory): SQLite's default limit, what a build that keeps it has.
  constexpr uint64_t kDefaultLengthLimit = 1'000'000'000;
  if (opened != SQLITE_OK) return kDefaultLengthLimit - kRowOverheadBytes;
  return max_delivery_bytes_of(db.get());
}

// The write lock taken and given back if it is free now. A look, not a wait: a probe that
// waited commit_deadline_ms for a lock still held kept the writer thread, and the
// deliveries that arrived meanwhile, that long each time.
Result<void> SqliteInbox::probe_write() {
  const auto waits = db_->busy_timeout();
  db_->wait_when_busy(std::chrono::milliseconds(0));
  auto txn = sqlite::Transaction::begin(*db_);
  Result<void> probed = txn ? txn->commit() : Result<void>(fail(txn));
  db_->wait_when_busy(waits);
  return probed;
}

Result<std::vector<Appended>> SqliteInbox::append(std::span<const NewDelivery* const> batch) {
  return append_with(batch, {});
}

Result<std::vector<Appended>> SqliteInbox::append_with(std::span<const NewDelivery* const> batch,
                                                       const AlsoInTransaction& also) {
  std::vector<Appended> results;
  results.reserve(batch.size());
  auto txn = sqlite::Transaction::begin(*db_);
  if (!txn) return fail(txn);
  int64_t last_seq = last_seq_;
  const uint64_t max_bytes = max_delivery_bytes();
  for (const NewDelivery* d : batch) {
    if (d->body.size() + d->headers_json.size() + d->message_id.size() > max_bytes) {
      results.push_back({AppendStatus::too_large, 0});
      continue;
    }
    insert_.bind_static(1, d->message_id)
        .bind_static(2, origin_name(d->origin))
        .bind(3, d->received_at_ms)
        .bind(4, d->webhook_timestamp);
    const bool in_place = d->body.size() >= kIncrementalBodyBytes;
    if (in_place) {
      if (sqlite3_bind_zeroblob64(insert_.get(), 7, d->body.size()) != SQLITE_OK) {
        return fail("binding the body: " + db_->last_error());
      }
    } else {
      insert_.bind_blob_static(7, d->body);
    }
    if (d->event_type) {
      insert_.bind_static(5, *d->event_type);
    } else {
      insert_.bind_null(5);
    }
    insert_.bind_static(6, d->headers_json);
    if (auto inserted = insert_.run(); !inserted) return fail(inserted);
    if (db_->changes() == 1) {
      last_seq = db_->last_insert_rowid();
      if (in_place) {
        if (auto written = write_body_in_place(*db_, last_seq, d->body); !written) return fail(written);
      }
      results.push_back({AppendStatus::stored, last_seq});
      continue;
    }
    find_existing_.bind_static(1, d->message_id);
    auto found = find_existing_.step();
    if (!found) return fail(found);
    const int64_t existing = *found ? find_existing_.column_int(0) : 0;
    find_existing_.reset();
    results.push_back({AppendStatus::duplicate, existing});
  }
  if (last_seq > last_seq_) {
    if (auto made = entries_.made_through(last_seq); !made) return fail(made);
  }
  if (also) {
    if (auto done = also(results); !done) return fail(done);
  }
  auto committed = txn->commit();
  if (!committed) return fail(committed);
  last_seq_ = last_seq;
  return results;
}

}  // namespace hh::store
