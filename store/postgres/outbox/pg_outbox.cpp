#include "store/postgres/outbox/pg_outbox.h"

#include <optional>

#include "store/postgres/connection.h"
#include "store/postgres/database.h"
#include "store/postgres/jobs/pg_job_admin.h"

namespace hh::store {
namespace {

constexpr std::string_view kPgoutboxColumns =
    "SELECT outbox_id, destination, kind, seq, event_type, table_name, row_key, op, row_count, from_ms, to_ms, "
    "user_id, order_key, state, attempts, created_at, next_attempt_at, batch_id, last_status, last_error "
    "FROM outbox ";

std::optional<std::string> pgoutbox_text(const pg::Rows& rows, int r, int column) {
  auto text = rows.optional_text(r, column);
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

OutboxEntry pgoutbox_entry(const pg::Rows& rows, int r) {
  OutboxEntry e;
  e.outbox_id = rows.integer(r, 0);
  e.destination = std::string(rows.text(r, 1));
  e.kind = std::string(rows.text(r, 2));
  e.seq = rows.integer(r, 3);
  e.event_type = pgoutbox_text(rows, r, 4);
  e.table_name = std::string(rows.text(r, 5));
  e.row_key = std::string(rows.text(r, 6));
  e.op = std::string(rows.text(r, 7));
  e.row_count = rows.integer(r, 8);
  e.from_ms = rows.optional_integer(r, 9);
  e.to_ms = rows.optional_integer(r, 10);
  e.user_id = pgoutbox_text(rows, r, 11);
  e.order_key = pgoutbox_text(rows, r, 12);
  e.state = std::string(rows.text(r, 13));
  e.attempts = rows.integer(r, 14);
  e.created_at_ms = rows.integer(r, 15);
  e.next_attempt_at_ms = rows.integer(r, 16);
  e.batch_id = rows.optional_integer(r, 17);
  e.last_status = rows.optional_integer(r, 18);
  e.last_error = pgoutbox_text(rows, r, 19);
  return e;
}

std::string pgoutbox_array(std::span<const int64_t> ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "}";
}

Result<void> pgoutbox_done(const Result<pg::Rows>& ran) {
  if (!ran) return fail(ran.error_kind(), ran.error());
  return {};
}

class PgOutbox final : public Outbox {
 public:
  PgOutbox(pg::Connection db, OutboxUse use) : db_(std::move(db)), use_(use) {}

  Result<std::vector<OutboxEntry>> list(const OutboxSelection& selection) override {
    // Instances sharing the store forward one at a time (kForwardLock, held by the
    // sender's session): the others list nothing, and one of them takes over when the
    // forwarding instance stops (its session ends).
    if (use_ == OutboxUse::sender) {
      auto forwarding = hold_forward_lock();
      if (!forwarding) return fail(forwarding.error_kind(), forwarding.error());
      if (!*forwarding) return std::vector<OutboxEntry>();
    }
    auto rows = db_.query(std::string(kPgoutboxColumns) +
                              "WHERE ($1::text IS NULL OR destination = $1) AND ($2::text IS NULL OR state = $2) "
                              "AND outbox_id > $3 AND ($5::bigint IS NULL OR outbox_id = $5) "
                              "ORDER BY outbox_id LIMIT $4",
                          pg::Params()
                              .add(selection.destination)
                              .add(selection.state)
                              .add(selection.after_id)
                              .add(selection.limit)
                              .add(selection.outbox_id));
    if (!rows) return fail(rows.error_kind(), rows.error());
    std::vector<OutboxEntry> entries;
    for (int r = 0; r < rows->size(); ++r) entries.push_back(pgoutbox_entry(*rows, r));
    return entries;
  }

  Result<std::optional<OutboxEntry>> find(int64_t outbox_id) override {
    auto rows = db_.query(std::string(kPgoutboxColumns) + "WHERE outbox_id = $1", pg::Params().add(outbox_id));
    if (!rows) return fail(rows.error_kind(), rows.error());
    if (rows->empty()) return std::optional<OutboxEntry>{};
    return std::optional<OutboxEntry>{pgoutbox_entry(*rows, 0)};
  }

  Result<std::vector<OutboxFigures>> figures() override {
    auto rows = db_.query(
        "SELECT destination, count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'dead'), "
        "count(*) FILTER (WHERE state = 'dropped'), min(created_at) FILTER (WHERE state = 'pending') "
        "FROM outbox GROUP BY destination ORDER BY destination COLLATE \"C\"");
    if (!rows) return fail(rows.error_kind(), rows.error());
    std::vector<OutboxFigures> all;
    for (int r = 0; r < rows->size(); ++r) {
      all.push_back({std::string(rows->text(r, 0)), rows->integer(r, 1), rows->integer(r, 2), rows->integer(r, 3),
                     rows->optional_integer(r, 4)});
    }
    return all;
  }

  Result<void> sent(std::span<const int64_t> ids) override {
    if (ids.empty()) return {};
    const std::string array = pgoutbox_array(ids);
    return pgoutbox_done(db_.query("DELETE FROM outbox WHERE outbox_id = ANY ($1::bigint[])",
                                   pg::Params().add(std::string_view(array))));
  }

  Result<void> retry_later(std::span<const int64_t> ids, int64_t next_attempt_at_ms, std::optional<int64_t> status,
                           const std::string& error, std::optional<int64_t> batch_id) override {
    if (ids.empty()) return {};
    const std::string array = pgoutbox_array(ids);
    return pgoutbox_done(db_.query(
        "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = $1, last_status = $2, last_error = $3, "
        "batch_id = $4 WHERE outbox_id = ANY ($5::bigint[])",
        pg::Params().add(next_attempt_at_ms).add(status).add(error).add(batch_id).add(std::string_view(array))));
  }

  Result<void> dead(std::span<const int64_t> ids, std::optional<int64_t> status, const std::string& error) override {
    if (ids.empty()) return {};
    const std::string array = pgoutbox_array(ids);
    return pgoutbox_done(db_.query(
        "UPDATE outbox SET attempts = attempts + 1, state = 'dead', last_status = $1, last_error = $2 "
        "WHERE outbox_id = ANY ($3::bigint[])",
        pg::Params().add(status).add(error).add(std::string_view(array))));
  }

  Result<int64_t> requeue(const OutboxSelection& selection, int64_t now_ms) override {
    auto updated = db_.query(
        "UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = $1, created_at = $1, batch_id = NULL "
        "WHERE ($2::text IS NULL OR destination = $2) AND ($3::text IS NULL OR state = $3) AND outbox_id > $4 "
        "AND ($5::bigint IS NULL OR outbox_id = $5)",
        pg::Params().add(now_ms).add(selection.destination).add(selection.state).add(selection.after_id)
            .add(selection.outbox_id));
    if (!updated) return fail(updated.error_kind(), updated.error());
    return updated->affected();
  }

  // Whether this sender holds the forwarding lock (taking it when free).
  Result<bool> hold_forward_lock() {
    if (auto open = db_.reconnect_if_broken(); !open) return fail(open.error_kind(), open.error());
    if (lock_generation_ && *lock_generation_ == db_.generation()) return true;
    auto locked = db_.query("SELECT pg_try_advisory_lock($1)", pg::Params().add(kForwardLock));
    if (!locked) return fail(locked.error_kind(), locked.error());
    if (!locked->boolean(0, 0)) return false;
    lock_generation_ = db_.generation();
    return true;
  }

  Result<bool> set_paused(const std::string& destination, bool paused, int64_t now_ms) override {
    auto changed = paused ? db_.query("INSERT INTO forward_pauses (destination, paused_at) VALUES ($1, $2) "
                                      "ON CONFLICT (destination) DO NOTHING",
                                      pg::Params().add(destination).add(now_ms))
                          : db_.query("DELETE FROM forward_pauses WHERE destination = $1", pg::Params().add(destination));
    if (!changed) return fail(changed.error_kind(), changed.error());
    return changed->affected() > 0;
  }

  Result<std::vector<std::string>> paused() override {
    auto rows = db_.query("SELECT destination FROM forward_pauses ORDER BY destination COLLATE \"C\"");
    if (!rows) return fail(rows.error_kind(), rows.error());
    std::vector<std::string> names;
    for (int r = 0; r < rows->size(); ++r) names.emplace_back(rows->text(r, 0));
    return names;
  }

  Result<int64_t> drop_oldest(const std::string& destination, int64_t keep, const std::string& error) override {
    if (keep <= 0) return fail("drop_oldest: keep must be positive");
    auto updated = db_.query(
        "UPDATE outbox SET state = 'dropped', last_error = $3 WHERE destination = $1 AND state = 'pending' "
        "AND outbox_id < (SELECT outbox_id FROM outbox WHERE destination = $1 AND state = 'pending' "
        "ORDER BY outbox_id DESC LIMIT 1 OFFSET $2)",
        pg::Params().add(destination).add(keep - 1).add(error));
    if (!updated) return fail(updated.error_kind(), updated.error());
    return updated->affected();
  }

 private:
  pg::Connection db_;
  const OutboxUse use_;
  std::optional<uint64_t> lock_generation_;  // the connection generation the forwarding lock was taken on
};

}  // namespace

Result<std::unique_ptr<Outbox>> open_postgres_outbox(const Database& database, OutboxUse use) {
  auto db = open_postgres_admin_connection(database, kPgJobsSchemaVersion);
  if (!db) return fail(db.error_kind(), db.error());
  if (use == OutboxUse::sender) {
    if (auto relaxed = db->exec("SET synchronous_commit = off"); !relaxed) {
      return fail(relaxed.error_kind(), relaxed.error());
    }
  }
  return std::unique_ptr<Outbox>(new PgOutbox(std::move(*db), use));
}

}  // namespace hh::store
