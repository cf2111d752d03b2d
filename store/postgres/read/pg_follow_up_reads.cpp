// store::FollowUpReads on PostgreSQL, on a connection of its own (autocommit: each read is
// one statement).
#include "store/postgres/read/pg_read_store.h"
#include "store/postgres/read/read_session.h"

namespace hh::store {
namespace {

// A running job is due once its lease has run out (an instance that died holding it: the
// claim takes over a lease_until before now); without a lease (copied from a SQLite
// store), at once.
constexpr std::string_view kPgNextDue =
    "SELECT min(due) FROM (SELECT min(next_attempt_at) AS due FROM jobs WHERE state = 'queued' "
    "UNION ALL SELECT min(coalesce(lease_until + 1, 0)) FROM jobs WHERE state = 'running') AS next";
// Every id that starts with the prefix, bytewise: the range [prefix, prefix with its last
// byte raised by one) as SQLite reads it (store/sqlite/sqlite_follow_up_reads.cpp), which an
// index can serve, when that end is still valid text (an ASCII last byte); starts_with decides.
constexpr std::string_view kPgNewestBody =
    "SELECT body FROM inbox WHERE message_id COLLATE \"C\" >= $1::text "
    "AND ($2::text IS NULL OR message_id COLLATE \"C\" < $2::text) AND starts_with(message_id, $1::text) "
    "ORDER BY seq DESC LIMIT 1";

class PgFollowUpReads final : public FollowUpReads {
 public:
  explicit PgFollowUpReads(pgread::ReaderLink db) : db_(std::move(db)) {}

  Result<std::optional<int64_t>> next_due_at() override {
    auto due = db_.query(kPgNextDue);
    if (!due) return fail(due);
    return due->optional_integer(0, 0);
  }

  Result<std::optional<std::string>> newest_body_with_id_prefix(std::string_view prefix) override {
    if (prefix.empty()) return fail("an empty message-id prefix");
    std::optional<std::string> past;
    if (static_cast<unsigned char>(prefix.back()) < 0x7f) {
      past.emplace(prefix);
      past->back() = static_cast<char>(past->back() + 1);
    }
    auto rows = db_.query(kPgNewestBody, pg::Params().add(prefix).add(past));
    if (!rows) return fail(rows);
    if (rows->empty()) return std::optional<std::string>{};
    std::string body;
    pgread::decode_bytea(rows->text(0, 0), body);
    return std::optional<std::string>{std::move(body)};
  }

 private:
  pgread::ReaderLink db_;
};

}  // namespace

Result<std::unique_ptr<FollowUpReads>> open_postgres_follow_up_reads(const Database& database) {
  auto db = pgread::ReaderLink::open(database);
  if (!db) return fail(db);
  return std::unique_ptr<FollowUpReads>(new PgFollowUpReads(std::move(*db)));
}

}  // namespace hh::store
