// store::Outbox on SQLite: the outbox written once (store/outbox/outbox_of.h) on an admin
// connection, with its sender statements kept prepared.
#include "store/sqlite/outbox/sqlite_outbox.h"

#include <array>
#include <optional>

#include "store/migration.h"
#include "store/outbox/outbox_of.h"
#include "store/schema/dialect.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/outbox/outbox_entries.h"
#include "store/sqlite/queries/query_statements.h"

namespace hh::store {
namespace {

// The schema version that has post_id, head and outbox_dropped (010-outbox-posts.sql).
int64_t version_with_posts() { return version_with(migrations(), "outbox-posts"); }

// The outbox session on SQLite (store/outbox/outbox_of.h says what it provides). One
// instance owns the file: every handle may forward.
class SqliteOutboxSession {
 public:
  using Transaction = sqlite::Transaction;
  // The sender takes the making of entries over while it is behind (store/outbox.h).
  static constexpr bool kSenderCanMakeEntries = true;

  explicit SqliteOutboxSession(sqlite::Connection db) : db_(std::move(db)) {}

  Result<Transaction> begin() { return Transaction::begin(db_); }
  Result<bool> may_forward() { return true; }

  template <typename Read>
  Result<void> rows(int slot, const std::string& sql, const QueryArgs& args, Read&& read) {
    auto stmt = statement(slot, sql, args);
    if (!stmt) return fail(stmt);
    return (*stmt)->for_each_row([&](const sqlite::Statement& s) { read(s); });
  }

  Result<int64_t> exec(int slot, const std::string& sql, const QueryArgs& args) {
    auto stmt = statement(slot, sql, args);
    if (!stmt) return fail(stmt);
    if (auto done = (*stmt)->run(); !done) return fail(done);
    return db_.changes();
  }

  std::string event_filter(const ForwardRule& rule, std::string_view column) const {
    return outbox_event_filter(rule, column);
  }
  std::string recreate_sql(const ForwardRule& rule) const { return outbox_entries_sql(rule, EntriesMade::requeued); }
  std::string entries_sql(const ForwardRule& rule) const { return outbox_entries_sql(rule, EntriesMade::by_sender); }
  std::string processed_seq_sql() const { return "(SELECT applied_seq FROM processor_state WHERE id = 1)"; }

 private:
  // `sql` prepared (kept in its slot when it has one) with `args` bound.
  Result<sqlite::Statement*> statement(int slot, const std::string& sql, const QueryArgs& args) {
    std::optional<sqlite::Statement>& kept = slot >= 0 ? slots_[static_cast<size_t>(slot)] : once_;
    if (!kept || slot < 0) {
      auto prepared = db_.prepare(schema::spell(sql, schema::Dialect::sqlite));
      if (!prepared) return fail(prepared);
      kept.emplace(std::move(*prepared));
    }
    bind_args(*kept, args);
    return &*kept;
  }

  sqlite::Connection db_;
  std::array<std::optional<sqlite::Statement>, kOutboxSlots> slots_;
  std::optional<sqlite::Statement> once_;  // the last statement without a slot
};

}  // namespace

Result<std::unique_ptr<Outbox>> open_sqlite_outbox(const std::string& path, OutboxUse use) {
  auto db = open_admin_connection(path);
  if (!db) return fail(db);
  if (use == OutboxUse::sender) {
    if (auto relaxed = db->exec("PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0"); !relaxed) {
      return fail(relaxed, path);
    }
  }
  auto version = db->query_int("PRAGMA user_version");
  if (!version) return fail(version);
  if (version->value_or(0) < version_with_posts()) {
    return fail(path + ": the outbox is older than this healthhook (the database was last opened by an older "
                       "healthhook; `serve` migrates it)");
  }
  return std::unique_ptr<Outbox>(new OutboxOf<SqliteOutboxSession>(SqliteOutboxSession(std::move(*db))));
}

}  // namespace hh::store
