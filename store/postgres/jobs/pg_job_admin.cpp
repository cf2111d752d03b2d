#include "store/postgres/jobs/pg_job_admin.h"

#include <algorithm>
#include <string>
#include <vector>

#include "store/postgres/copy_progress.h"
#include "store/postgres/database.h"
#include "store/postgres/jobs/payload_json.h"

namespace hh::store {
namespace {

constexpr std::string_view kPgadminColumns =
    "SELECT job_id, kind, job_key, state, attempts, next_attempt_at, last_error, trigger_seq, payload, "
    "created_at, updated_at FROM jobs ";

JobRow pgadmin_row(const pg::Rows& rows, int r) {
  JobRow row;
  row.job_id = rows.integer(r, 0);
  row.kind = std::string(rows.text(r, 1));
  row.job_key = std::string(rows.text(r, 2));
  row.state = std::string(rows.text(r, 3));
  row.attempts = rows.integer(r, 4);
  row.next_attempt_at = rows.integer(r, 5);
  if (auto error = rows.optional_text(r, 6)) row.last_error = std::string(*error);
  row.trigger_seq = rows.integer(r, 7);
  row.payload = std::string(rows.text(r, 8));
  row.created_at = rows.integer(r, 9);
  row.updated_at = rows.integer(r, 10);
  return row;
}

// What a re-queued job's payload becomes (job_admin.cpp's kRequeueSet): a done one starts
// its window again, without its progress keys; any other keeps its payload.
std::string pgadmin_requeued_payload(std::string_view state, std::string_view payload) {
  static constexpr std::string_view kProgressKeys[] = {"cursor", "next_start_ms"};
  if (state != "done") return std::string(payload);
  auto removed = json_remove_members(payload, kProgressKeys);
  return removed ? std::move(*removed) : std::string(payload);
}

// queued/done/dead → queued, due now, attempts 0; the payload as above.
Result<void> pgadmin_requeue_row(pg::Connection& db, int64_t job_id, std::string_view state, std::string_view payload,
                                 int64_t now_ms) {
  const std::string requeued = pgadmin_requeued_payload(state, payload);
  auto updated = db.query(
      "UPDATE jobs SET state = 'queued', attempts = 0, next_attempt_at = $1, updated_at = $1, payload = $2 "
      "WHERE job_id = $3",
      pg::Params().add(now_ms).add(std::string_view(requeued)).add(job_id));
  if (!updated) return fail(updated);
  return {};
}

class PgJobAdmin final : public JobAdmin {
 public:
  explicit PgJobAdmin(pg::Connection db) : db_(std::move(db)) {}

  using JobAdmin::list;
  Result<std::vector<JobRow>> list(const std::optional<std::string>& state, std::optional<int64_t> at_most) override {
    // LIMIT NULL is no limit on PostgreSQL (which refuses a negative one).
    if (at_most) at_most = std::max<int64_t>(*at_most, 0);
    auto rows = state ? db_.query(std::string(kPgadminColumns) + "WHERE state = $1 ORDER BY job_id LIMIT $2::bigint",
                                  pg::Params().add(*state).add(at_most))
                      : db_.query(std::string(kPgadminColumns) + "ORDER BY job_id LIMIT $1::bigint",
                                  pg::Params().add(at_most));
    if (!rows) return fail(rows);
    std::vector<JobRow> out;
    for (int r = 0; r < rows->size(); ++r) out.push_back(pgadmin_row(*rows, r));
    return out;
  }

  Result<std::optional<JobRow>> find(int64_t job_id) override {
    auto rows = db_.query(std::string(kPgadminColumns) + "WHERE job_id = $1", pg::Params().add(job_id));
    if (!rows) return fail(rows);
    if (rows->empty()) return std::optional<JobRow>{};
    return std::optional<JobRow>{pgadmin_row(*rows, 0)};
  }

  Result<RequeueStatus> requeue(int64_t job_id, int64_t now_ms) override {
    auto txn = pg::Transaction::begin(db_);
    if (!txn) return fail(txn);
    auto found = db_.query("SELECT state, payload FROM jobs WHERE job_id = $1 FOR UPDATE", pg::Params().add(job_id));
    if (!found) return fail(found);
    if (found->empty()) return RequeueStatus::not_found;
    if (found->text(0, 0) == "running") return RequeueStatus::running;
    if (auto done = pgadmin_requeue_row(db_, job_id, found->text(0, 0), found->text(0, 1), now_ms); !done) {
      return fail(done);
    }
    if (auto committed = txn->commit(); !committed) return fail(committed);
    return RequeueStatus::requeued;
  }

  Result<int64_t> requeue_dead(int64_t now_ms) override {
    // A dead job's payload stays as it is (only a done one's progress keys go).
    auto updated = db_.query(
        "UPDATE jobs SET state = 'queued', attempts = 0, next_attempt_at = $1, updated_at = $1 WHERE state = 'dead'",
        pg::Params().add(now_ms));
    if (!updated) return fail(updated);
    return updated->affected();
  }

  Result<std::vector<QueuedBackfill>> queue_backfills(std::span<const BackfillWindow> windows,
                                                      int64_t now_ms) override {
    auto txn = pg::Transaction::begin(db_);
    if (!txn) return fail(txn);
    auto newest = db_.query_int("SELECT coalesce(max(seq), 0) FROM inbox");
    if (!newest) return fail(newest);
    const int64_t trigger_seq = newest->value_or(0);
    std::vector<QueuedBackfill> results;
    std::string payload;
    for (const BackfillWindow& window : windows) {
      QueuedBackfill& result = results.emplace_back();
      backfill_job_key(result.job_key, window);
      auto found = db_.query(
          "SELECT job_id, state, payload FROM jobs WHERE kind = 'backfill' AND job_key = $1 FOR UPDATE",
                             pg::Params().add(std::string_view(result.job_key)));
      if (!found) return fail(found);
      if (found->empty()) {
        backfill_job_payload(payload, window);
        auto inserted = db_.query(
            "INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, "
            "updated_at, user_id) VALUES ('backfill', $1, 'queued', 0, $2, $3, $4, $2, $2, $5) RETURNING job_id",
            pg::Params().add(std::string_view(result.job_key)).add(now_ms).add(trigger_seq)
                .add(std::string_view(payload)).add(window.user_id));
        if (!inserted) return fail(inserted);
        result.job_id = inserted->integer(0, 0);
        result.outcome = QueuedBackfill::Outcome::queued;
        continue;
      }
      result.job_id = found->integer(0, 0);
      result.previous_state = std::string(found->text(0, 1));
      if (result.previous_state == "queued" || result.previous_state == "running") {
        result.outcome = QueuedBackfill::Outcome::pending;
      } else {
        if (auto done = pgadmin_requeue_row(db_, result.job_id, result.previous_state, found->text(0, 2), now_ms);
            !done) {
          return fail(done);
        }
        result.outcome = QueuedBackfill::Outcome::requeued;
      }
    }
    if (auto committed = txn->commit(); !committed) return fail(committed);
    return results;
  }

 private:
  pg::Connection db_;
};

}  // namespace

Result<pg::Connection> open_postgres_admin_connection(const Database& database, int64_t min_version,
                                                      int64_t busy_timeout_ms) {
  auto db = connect(database);
  if (!db) return db;
  if (auto set = db->exec("SET lock_timeout = " + std::to_string(busy_timeout_ms)); !set) {
    return fail(set);
  }
  auto exists = db->query_int("SELECT count(*) FROM pg_tables WHERE tablename = 'schema_migrations' "
                              "AND schemaname = current_schema()");
  if (!exists) return fail(exists);
  if (exists->value_or(0) == 0) return fail(ErrorKind::other, "not a healthhook store (no schema_migrations table)");
  auto version = db->query_int("SELECT max(version) FROM schema_migrations");
  if (!version) return fail(version);
  if (version->value_or(0) < min_version) {
    return fail(ErrorKind::other, "the store's schema is older than this command needs (`serve` migrates it)");
  }
  if (*version > postgres_schema_version()) {
    return fail(ErrorKind::other, "database schema version " + std::to_string(version->value_or(0)) +
                                      " is newer than this healthhook (" + std::to_string(postgres_schema_version()) +
                                      "); upgrade healthhook");
  }
  if (auto whole = refuse_unfinished_copy(*db, database); !whole) return fail(whole);
  return db;
}

Result<std::unique_ptr<JobAdmin>> open_postgres_job_admin(const Database& database) {
  auto db = open_postgres_admin_connection(database, kPgJobsSchemaVersion);
  if (!db) return fail(db);
  return std::unique_ptr<JobAdmin>(new PgJobAdmin(std::move(*db)));
}

}  // namespace hh::store
