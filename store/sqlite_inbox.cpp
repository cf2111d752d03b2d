#include "store/sqlite_inbox.h"

namespace hh::store {

std::string_view origin_name(Origin origin) { return origin == Origin::webhook ? "webhook" : "fetch"; }

Result<SqliteInbox> SqliteInbox::create(sqlite::Connection& db) {
  // ON CONFLICT DO NOTHING + RETURNING: a new row returns its seq, a known message id
  // returns no row (then we look the existing seq up).
  auto insert = db.prepare(
      "INSERT INTO deliveries (message_id, origin, received_at, webhook_timestamp, event_type, headers, body) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (message_id) DO NOTHING RETURNING seq");
  if (!insert) return fail(insert.error());
  auto find = db.prepare("SELECT seq FROM deliveries WHERE message_id = ?1");
  if (!find) return fail(find.error());
  auto last = db.query_int("SELECT max(seq) FROM deliveries");
  if (!last) return fail(last.error());
  return SqliteInbox(db, std::move(*insert), std::move(*find), last->value_or(0));
}

Result<std::vector<Appended>> SqliteInbox::append(std::span<const NewDelivery* const> batch) {
  std::vector<Appended> results;
  results.reserve(batch.size());
  auto txn = sqlite::Transaction::begin(*db_);
  if (!txn) return fail(txn.error());
  int64_t last_seq = last_seq_;
  for (const NewDelivery* d : batch) {
    insert_.bind_static(1, d->message_id)
        .bind_static(2, origin_name(d->origin))
        .bind(3, d->received_at_ms)
        .bind(4, d->webhook_timestamp)
        .bind_blob_static(7, d->body);
    if (d->event_type) {
      insert_.bind_static(5, *d->event_type);
    } else {
      insert_.bind_null(5);
    }
    insert_.bind_static(6, d->headers_json);
    auto row = insert_.step();
    if (!row) return fail(row.error());
    if (*row) {
      last_seq = insert_.column_int(0);
      insert_.reset();
      results.push_back({AppendStatus::stored, last_seq});
      continue;
    }
    insert_.reset();
    find_existing_.bind_static(1, d->message_id);
    auto found = find_existing_.step();
    if (!found) return fail(found.error());
    const int64_t existing = *found ? find_existing_.column_int(0) : 0;
    find_existing_.reset();
    results.push_back({AppendStatus::duplicate, existing});
  }
  auto committed = txn->commit();
  if (!committed) return fail(committed.error());
  last_seq_ = last_seq;
  return results;
}

}  // namespace hh::store
