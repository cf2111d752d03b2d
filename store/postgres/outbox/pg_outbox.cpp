// store::Outbox on PostgreSQL: the outbox written once (store/outbox/outbox_of.h) on a
// connection of its own. Instances sharing the store forward one at a time: a sender
// classifies, sends and drops only while it holds the forwarding lock (kForwardLock, on
// its session), and one of the others takes over when that instance stops.
#include "store/postgres/outbox/pg_outbox.h"

#include <array>
#include <optional>

#include "store/migration.h"
#include "store/outbox/outbox_of.h"
#include "store/postgres/connection.h"
#include "store/postgres/database.h"
#include "store/postgres/jobs/pg_job_admin.h"
#include "store/postgres/migrations.h"
#include "store/postgres/outbox/pg_outbox_writer.h"
#include "store/postgres/read/pg_listings.h"
#include "store/postgres/read/read_session.h"
#include "store/schema/dialect.h"

namespace hh::store {
namespace {

// The schema version that has post_id, head and outbox_dropped (004-outbox-posts.sql).
int64_t version_with_posts() { return version_with(postgres_migrations(), "outbox-posts"); }

// The outbox session on PostgreSQL (store/outbox/outbox_of.h says what it provides).
// Statements are sent unnamed: the sender's are short and few.
class PgOutboxSession {
 public:
  using Transaction = pg::Transaction;
  // The writer makes the entries in the transactions they describe (store/outbox.h).
  static constexpr bool kSenderCanMakeEntries = false;

  PgOutboxSession(pg::Connection db, OutboxUse use) : db_(std::move(db)), use_(use) {}

  Result<Transaction> begin() { return Transaction::begin(db_); }

  // An admin handle always may; a sender only while it holds the forwarding lock (taking
  // it when free).
  Result<bool> may_forward() {
    if (use_ != OutboxUse::sender) return true;
    if (auto open = db_.reconnect_if_broken(); !open) return fail(open);
    if (lock_generation_ && *lock_generation_ == db_.generation()) return true;
    auto locked = db_.query("SELECT pg_try_advisory_lock($1)", pg::Params().add(kForwardLock));
    if (!locked) return fail(locked);
    if (!locked->boolean(0, 0)) return false;
    lock_generation_ = db_.generation();
    return true;
  }

  template <typename Read>
  Result<void> rows(int slot, const std::string& sql, const QueryArgs& args, Read&& read) {
    auto result = db_.query(spelled(slot, sql), pgread::params_of(args));
    if (!result) return fail(result);
    pgread::ResultRow row{&*result, 0, nullptr};
    for (row.row = 0; row.row < result->size(); ++row.row) read(row);
    return {};
  }

  Result<int64_t> exec(int slot, const std::string& sql, const QueryArgs& args) {
    auto result = db_.query(spelled(slot, sql), pgread::params_of(args));
    if (!result) return fail(result);
    return result->affected();
  }

  std::string event_filter(const ForwardRule& rule, std::string_view column) const {
    return pg_outbox_event_filter(rule, column);
  }
  std::string recreate_sql(const ForwardRule& rule) const { return pg_outbox_recreate_sql(rule); }
  std::string processed_seq_sql() const { return "hh_processed_seq()"; }

 private:
  // The SQL of a slot is spelled once; the others each time.
  const std::string& spelled(int slot, const std::string& sql) {
    std::string& kept = slot >= 0 ? slots_[static_cast<size_t>(slot)] : once_;
    if (kept.empty() || slot < 0) kept = schema::spell(sql, schema::Dialect::postgres);
    return kept;
  }

  pg::Connection db_;
  OutboxUse use_;
  std::optional<uint64_t> lock_generation_;  // the connection generation the forwarding lock was taken on
  std::array<std::string, kOutboxSlots> slots_;
  std::string once_;
};

}  // namespace

Result<std::unique_ptr<Outbox>> open_postgres_outbox(const Database& database, OutboxUse use) {
  auto db = open_postgres_admin_connection(database, version_with_posts());
  if (!db) return fail(db);
  if (use == OutboxUse::sender) {
    if (auto relaxed = db->exec("SET synchronous_commit = off"); !relaxed) return fail(relaxed);
  }
  return std::unique_ptr<Outbox>(new OutboxOf<PgOutboxSession>(PgOutboxSession(std::move(*db), use)));
}

}  // namespace hh::store
