#include "store/sqlite/outbox/sqlite_outbox.h"

#include "store/sqlite/connection.h"
#include "store/sqlite/jobs/job_admin.h"

namespace hh::store {
namespace {

constexpr int64_t kFirstVersionWithOutbox = 8;  // 008-outbox.sql

constexpr std::string_view kColumns =
    "SELECT outbox_id, destination, kind, seq, event_type, table_name, row_key, op, row_count, from_ms, to_ms, "
    "user_id, order_key, state, attempts, created_at, next_attempt_at, batch_id, last_status, last_error "
    "FROM outbox ";

std::optional<std::string> optional_text(const sqlite::Statement& s, int column) {
  auto text = s.column_optional_text(column);
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

OutboxEntry read_entry(const sqlite::Statement& s) {
  OutboxEntry e;
  e.outbox_id = s.column_int(0);
  e.destination = std::string(s.column_text(1));
  e.kind = std::string(s.column_text(2));
  e.seq = s.column_int(3);
  e.event_type = optional_text(s, 4);
  e.table_name = std::string(s.column_text(5));
  e.row_key = std::string(s.column_text(6));
  e.op = std::string(s.column_text(7));
  e.row_count = s.column_int(8);
  e.from_ms = s.column_optional_int(9);
  e.to_ms = s.column_optional_int(10);
  e.user_id = optional_text(s, 11);
  e.order_key = optional_text(s, 12);
  e.state = std::string(s.column_text(13));
  e.attempts = s.column_int(14);
  e.created_at_ms = s.column_int(15);
  e.next_attempt_at_ms = s.column_int(16);
  e.batch_id = s.column_optional_int(17);
  e.last_status = s.column_optional_int(18);
  e.last_error = optional_text(s, 19);
  return e;
}

// "?1, ?2, …" for `n` parameters.
std::string placeholders(size_t n, int first = 1) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    out += "?" + std::to_string(first + static_cast<int>(i));
  }
  return out;
}

class SqliteOutbox final : public Outbox {
 public:
  explicit SqliteOutbox(sqlite::Connection db) : db_(std::move(db)) {}

  Result<std::vector<OutboxEntry>> list(const OutboxSelection& selection) override {
    auto stmt = db_.prepare(std::string(kColumns) +
                            "WHERE (?1 IS NULL OR destination = ?1) AND (?2 IS NULL OR state = ?2) "
                            "AND outbox_id > ?3 AND (?5 IS NULL OR outbox_id = ?5) ORDER BY outbox_id LIMIT ?4");
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, selection.destination).bind(2, selection.state).bind(3, selection.after_id).bind(4, selection.limit);
    stmt->bind(5, selection.outbox_id);
    std::vector<OutboxEntry> entries;
    auto read = stmt->for_each_row([&](const sqlite::Statement& s) { entries.push_back(read_entry(s)); });
    if (!read) return fail(read.error());
    return entries;
  }

  Result<std::optional<OutboxEntry>> find(int64_t outbox_id) override {
    auto stmt = db_.prepare(std::string(kColumns) + "WHERE outbox_id = ?1");
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, outbox_id);
    std::optional<OutboxEntry> entry;
    auto read = stmt->for_each_row([&](const sqlite::Statement& s) { entry = read_entry(s); });
    if (!read) return fail(read.error());
    return entry;
  }

  Result<std::vector<OutboxFigures>> figures() override {
    auto stmt = db_.prepare(
        "SELECT destination, sum(state = 'pending'), sum(state = 'dead'), sum(state = 'dropped'), "
        "min(CASE WHEN state = 'pending' THEN created_at END) FROM outbox GROUP BY destination ORDER BY destination");
    if (!stmt) return fail(stmt.error());
    std::vector<OutboxFigures> all;
    auto read = stmt->for_each_row([&](const sqlite::Statement& s) {
      all.push_back({std::string(s.column_text(0)), s.column_int(1), s.column_int(2), s.column_int(3),
                     s.column_optional_int(4)});
    });
    if (!read) return fail(read.error());
    return all;
  }

  Result<void> sent(std::span<const int64_t> ids) override {
    if (ids.empty()) return {};
    auto stmt = db_.prepare("DELETE FROM outbox WHERE outbox_id IN (" + placeholders(ids.size()) + ")");
    if (!stmt) return fail(stmt.error());
    for (size_t i = 0; i < ids.size(); ++i) stmt->bind(static_cast<int>(i) + 1, ids[i]);
    return stmt->run();
  }

  Result<void> retry_later(std::span<const int64_t> ids, int64_t next_attempt_at_ms, std::optional<int64_t> status,
                           const std::string& error, std::optional<int64_t> batch_id) override {
    return update(
        ids, "attempts = attempts + 1, next_attempt_at = ?1, last_status = ?2, last_error = ?3, batch_id = ?4",
        [&](sqlite::Statement& s) {
          s.bind(1, next_attempt_at_ms).bind(2, status).bind(3, std::string_view(error)).bind(4, batch_id);
        },
        4);
  }

  Result<void> dead(std::span<const int64_t> ids, std::optional<int64_t> status, const std::string& error) override {
    return update(
        ids, "attempts = attempts + 1, state = 'dead', last_status = ?1, last_error = ?2",
        [&](sqlite::Statement& s) { s.bind(1, status).bind(2, std::string_view(error)); }, 2);
  }

  Result<int64_t> requeue(const OutboxSelection& selection, int64_t now_ms) override {
    auto stmt = db_.prepare(
        "UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = ?1, created_at = ?1, batch_id = NULL "
        "WHERE (?2 IS NULL OR destination = ?2) AND (?3 IS NULL OR state = ?3) AND outbox_id > ?4 "
        "AND (?5 IS NULL OR outbox_id = ?5)");
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, now_ms).bind(2, selection.destination).bind(3, selection.state).bind(4, selection.after_id);
    stmt->bind(5, selection.outbox_id);
    if (auto done = stmt->run(); !done) return fail(done.error());
    return db_.changes();
  }

  Result<bool> set_paused(const std::string& destination, bool paused, int64_t now_ms) override {
    auto stmt = db_.prepare(paused ? "INSERT INTO forward_pauses (destination, paused_at) VALUES (?1, ?2) "
                                     "ON CONFLICT (destination) DO NOTHING"
                                   : "DELETE FROM forward_pauses WHERE destination = ?1");
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, std::string_view(destination));
    if (paused) stmt->bind(2, now_ms);
    if (auto done = stmt->run(); !done) return fail(done.error());
    return db_.changes() > 0;
  }

  Result<std::vector<std::string>> paused() override {
    auto stmt = db_.prepare("SELECT destination FROM forward_pauses ORDER BY destination");
    if (!stmt) return fail(stmt.error());
    std::vector<std::string> names;
    auto read = stmt->for_each_row([&](const sqlite::Statement& s) { names.emplace_back(s.column_text(0)); });
    if (!read) return fail(read.error());
    return names;
  }

  Result<int64_t> drop_oldest(const std::string& destination, int64_t keep, const std::string& error) override {
    if (keep <= 0) return fail("drop_oldest: keep must be positive");
    auto stmt = db_.prepare(
        "UPDATE outbox SET state = 'dropped', last_error = ?3 WHERE destination = ?1 AND state = 'pending' "
        "AND outbox_id < (SELECT outbox_id FROM outbox WHERE destination = ?1 AND state = 'pending' "
        "ORDER BY outbox_id DESC LIMIT 1 OFFSET ?2)");
    if (!stmt) return fail(stmt.error());
    stmt->bind(1, std::string_view(destination)).bind(2, keep - 1).bind(3, std::string_view(error));
    if (auto done = stmt->run(); !done) return fail(done.error());
    return db_.changes();
  }

 private:
  // UPDATE outbox SET `set` for `ids` (after the `set`'s own `used` parameters).
  template <typename Bind>
  Result<void> update(std::span<const int64_t> ids, std::string_view set, Bind&& bind, int used) {
    if (ids.empty()) return {};
    auto stmt = db_.prepare("UPDATE outbox SET " + std::string(set) + " WHERE outbox_id IN (" +
                            placeholders(ids.size(), used + 1) + ")");
    if (!stmt) return fail(stmt.error());
    bind(*stmt);
    for (size_t i = 0; i < ids.size(); ++i) stmt->bind(used + 1 + static_cast<int>(i), ids[i]);
    return stmt->run();
  }

  sqlite::Connection db_;
};

}  // namespace

Result<std::unique_ptr<Outbox>> open_sqlite_outbox(const std::string& path, OutboxUse use) {
  auto db = open_admin_connection(path);
  if (!db) return fail(db.error_kind(), db.error());
  if (use == OutboxUse::sender) {
    if (auto relaxed = db->exec("PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0"); !relaxed) {
      return fail(path + ": " + relaxed.error());
    }
  }
  auto version = db->query_int("PRAGMA user_version");
  if (!version) return fail(version.error());
  if (version->value_or(0) < kFirstVersionWithOutbox) {
    return fail(path + ": no outbox yet (the database was last opened by an older healthhook; `serve` migrates it)");
  }
  return std::unique_ptr<Outbox>(new SqliteOutbox(std::move(*db)));
}

}  // namespace hh::store
