// store::FollowUpReads on a read-only SQLite connection of its own.
#include "store/sqlite/sqlite_follow_up_reads.h"

#include "store/sqlite/database.h"

namespace hh::store {
namespace {

class SqliteFollowUpReads final : public FollowUpReads {
 public:
  SqliteFollowUpReads(sqlite::Connection db, sqlite::Statement next_due)
      : db_(std::move(db)), next_due_(std::move(next_due)) {}

  Result<std::optional<int64_t>> next_due_at() override {
    auto row = next_due_.step();
    std::optional<int64_t> due;
    if (row && *row && !next_due_.column_is_null(0)) due = next_due_.column_int(0);
    next_due_.reset();
    if (!row) return fail(row);
    return due;
  }

  Result<std::optional<std::string>> newest_body_with_id_prefix(std::string_view prefix) override {
    if (prefix.empty()) return fail("an empty message-id prefix");
    // [prefix, prefix with its last byte raised by one): every id that starts with prefix.
    std::string past(prefix);
    past.back() = static_cast<char>(past.back() + 1);
    auto newest = db_.prepare(
        "SELECT body FROM inbox WHERE message_id >= ?1 AND message_id < ?2 ORDER BY seq DESC LIMIT 1");
    if (!newest) return fail(newest);
    newest->bind(1, prefix).bind(2, std::string_view(past));
    auto row = newest->step();
    if (!row) return fail(row);
    if (!*row) return std::optional<std::string>{};
    return std::optional<std::string>{std::string(newest->column_blob(0))};
  }

 private:
  sqlite::Connection db_;
  sqlite::Statement next_due_;
};

}  // namespace

Result<std::unique_ptr<FollowUpReads>> open_sqlite_follow_up_reads(const std::string& database) {
  auto db = open_for_reading(database);
  if (!db) return fail(db);
  auto next_due = db->prepare("SELECT min(next_attempt_at) FROM jobs WHERE state = 'queued'");
  if (!next_due) return fail(next_due);
  return std::unique_ptr<FollowUpReads>(new SqliteFollowUpReads(std::move(*db), std::move(*next_due)));
}

}  // namespace hh::store
