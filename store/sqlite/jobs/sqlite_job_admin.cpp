#include "store/sqlite/jobs/sqlite_job_admin.h"

#include <algorithm>
#include <filesystem>

#include "store/sqlite/database.h"

namespace hh::store {
namespace {

constexpr std::string_view kColumns =
    "SELECT job_id, kind, job_key, state, attempts, next_attempt_at, last_error, trigger_seq, payload, "
    "created_at, updated_at FROM jobs ";

JobRow read_row(const sqlite::Statement& s) {
  JobRow row;
  row.job_id = s.column_int(0);
  row.kind = std::string(s.column_text(1));
  row.job_key = std::string(s.column_text(2));
  row.state = std::string(s.column_text(3));
  row.attempts = s.column_int(4);
  row.next_attempt_at = s.column_int(5);
  if (auto error = s.column_optional_text(6)) row.last_error = std::string(*error);
  row.trigger_seq = s.column_int(7);
  row.payload = std::string(s.column_text(8));
  row.created_at = s.column_int(9);
  row.updated_at = s.column_int(10);
  return row;
}

// The same text a re-queued job gets for `payload` (see requeue_job).
constexpr std::string_view kRequeueSet =
    "SET state = 'queued', attempts = 0, next_attempt_at = ?1, updated_at = ?1, "
    "payload = CASE WHEN state = 'done' AND json_valid(payload) "
    "THEN json_remove(payload, '$.cursor', '$.next_start_ms') ELSE payload END ";

class SqliteJobAdmin final : public JobAdmin {
 public:
  explicit SqliteJobAdmin(sqlite::Connection db) : db_(std::move(db)) {}
  using JobAdmin::list;
  Result<std::vector<JobRow>> list(const std::optional<std::string>& state, std::optional<int64_t> at_most) override {
    return list_jobs(db_, state, at_most);
  }
  Result<std::optional<JobRow>> find(int64_t job_id) override { return find_job(db_, job_id); }
  Result<RequeueStatus> requeue(int64_t job_id, int64_t now_ms) override { return requeue_job(db_, job_id, now_ms); }
  Result<int64_t> requeue_dead(int64_t now_ms) override { return requeue_dead_jobs(db_, now_ms); }
  Result<std::vector<QueuedBackfill>> queue_backfills(std::span<const BackfillWindow> windows,
                                                      int64_t now_ms) override {
    return queue_backfill_jobs(db_, windows, now_ms);
  }

 private:
  sqlite::Connection db_;
};

}  // namespace

Result<std::unique_ptr<JobAdmin>> open_sqlite_job_admin(const std::string& path) {
  auto db = open_admin_connection(path);
  if (!db) return fail(db);
  return std::unique_ptr<JobAdmin>(new SqliteJobAdmin(std::move(*db)));
}

Result<sqlite::Connection> open_admin_connection(const std::string& path, int64_t busy_timeout_ms) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return fail("database " + path + " does not exist");
  auto db = sqlite::Connection::open(path, sqlite::OpenMode::read_write);
  if (!db) return db;
  db->wait_when_busy(std::chrono::milliseconds(busy_timeout_ms));
  auto version = db->query_int("PRAGMA user_version");
  if (!version) return fail(version, path);
  if (version->value_or(0) < 3) return fail(path + ": no jobs table (not a healthhook database, or too old)");
  if (auto ours = not_another_programs(*db); !ours) return fail(ours, path);
  if (*version > schema_version()) {
    return fail(path + ": database schema version " + std::to_string(version->value_or(0)) + " is newer than this healthhook (" +
                std::to_string(schema_version()) + "); upgrade healthhook");
  }
  return db;
}

Result<std::vector<JobRow>> list_jobs(sqlite::Connection& db, const std::optional<std::string>& state,
                                      std::optional<int64_t> at_most) {
  auto stmt = db.prepare(std::string(kColumns) + (state ? "WHERE state = ?1 " : "") + "ORDER BY job_id LIMIT ?2");
  if (!stmt) return fail(stmt);
  if (state) stmt->bind(1, std::string_view(*state));
  stmt->bind(2, at_most ? std::max<int64_t>(*at_most, 0) : -1);  // SQLite: a negative LIMIT is none
  std::vector<JobRow> rows;
  for (;;) {
    auto row = stmt->step();
    if (!row) return fail(row);
    if (!*row) break;
    rows.push_back(read_row(*stmt));
  }
  return rows;
}

Result<std::optional<JobRow>> find_job(sqlite::Connection& db, int64_t job_id) {
  auto stmt = db.prepare(std::string(kColumns) + "WHERE job_id = ?1");
  if (!stmt) return fail(stmt);
  stmt->bind(1, job_id);
  auto row = stmt->step();
  if (!row) return fail(row);
  if (!*row) return std::optional<JobRow>{};
  return std::optional<JobRow>{read_row(*stmt)};
}

Result<RequeueStatus> requeue_job(sqlite::Connection& db, int64_t job_id, int64_t now_ms) {
  auto txn = sqlite::Transaction::begin(db);
  if (!txn) return fail(txn);
  auto state = db.prepare("SELECT state FROM jobs WHERE job_id = ?1");
  if (!state) return fail(state);
  state->bind(1, job_id);
  auto row = state->step();
  if (!row) return fail(row);
  if (!*row) return RequeueStatus::not_found;
  if (state->column_text(0) == "running") return RequeueStatus::running;
  state->reset();
  auto update = db.prepare("UPDATE jobs " + std::string(kRequeueSet) + "WHERE job_id = ?2");
  if (!update) return fail(update);
  update->bind(1, now_ms).bind(2, job_id);
  if (auto ran = update->run(); !ran) return fail(ran);
  if (auto committed = txn->commit(); !committed) return fail(committed);
  return RequeueStatus::requeued;
}

Result<int64_t> requeue_dead_jobs(sqlite::Connection& db, int64_t now_ms) {
  auto txn = sqlite::Transaction::begin(db);
  if (!txn) return fail(txn);
  auto update = db.prepare("UPDATE jobs " + std::string(kRequeueSet) + "WHERE state = 'dead'");
  if (!update) return fail(update);
  update->bind(1, now_ms);
  if (auto ran = update->run(); !ran) return fail(ran);
  const int64_t count = db.changes();
  if (auto committed = txn->commit(); !committed) return fail(committed);
  return count;
}

Result<std::vector<QueuedBackfill>> queue_backfill_jobs(sqlite::Connection& db, std::span<const BackfillWindow> windows,
                                                        int64_t now_ms) {
  auto txn = sqlite::Transaction::begin(db);
  if (!txn) return fail(txn);
  // Read inside the write transaction, so no delivery committed meanwhile is left out.
  auto newest = db.query_int("SELECT coalesce(max(seq), 0) FROM deliveries");
  if (!newest) return fail(newest);
  const int64_t trigger_seq = newest->value_or(0);
  auto find = db.prepare("SELECT job_id, state FROM jobs WHERE kind = 'backfill' AND job_key = ?1");
  auto insert = db.prepare(
      "INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, updated_at, "
      "user_id) VALUES ('backfill', ?1, 'queued', 0, ?2, ?3, ?4, ?2, ?2, ?5) RETURNING job_id");
  auto requeue = db.prepare("UPDATE jobs " + std::string(kRequeueSet) + "WHERE job_id = ?2");
  for (auto* prepared : {&find, &insert, &requeue}) {
    if (!*prepared) return fail(*prepared);
  }
  std::vector<QueuedBackfill> results;
  std::string payload;
  for (const BackfillWindow& window : windows) {
    QueuedBackfill& result = results.emplace_back();
    backfill_job_key(result.job_key, window);
    find->bind(1, std::string_view(result.job_key));
    auto found = find->step();
    if (!found) return fail(found);
    if (*found) {
      result.job_id = find->column_int(0);
      result.previous_state = std::string(find->column_text(1));
    }
    find->reset();
    if (!*found) {
      backfill_job_payload(payload, window);
      insert->bind(1, std::string_view(result.job_key)).bind(2, now_ms).bind(3, trigger_seq);
      insert->bind(4, std::string_view(payload)).bind(5, window.user_id);
      auto row = insert->step();
      if (!row) return fail(row);
      if (!*row) return fail("jobs: the insert returned no job_id");
      result.job_id = insert->column_int(0);
      insert->reset();
      result.outcome = QueuedBackfill::Outcome::queued;
    } else if (result.previous_state == "queued" || result.previous_state == "running") {
      result.outcome = QueuedBackfill::Outcome::pending;
    } else {
      requeue->bind(1, now_ms).bind(2, result.job_id);
      if (auto ran = requeue->run(); !ran) return fail(ran);
      result.outcome = QueuedBackfill::Outcome::requeued;
    }
  }
  if (auto committed = txn->commit(); !committed) return fail(committed);
  return results;
}

}  // namespace hh::store
