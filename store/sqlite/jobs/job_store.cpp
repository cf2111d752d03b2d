#include "store/sqlite/jobs/job_store.h"

#include <algorithm>

#include "store/jobs/interrupted_job.h"

namespace hh::store {
namespace {

// Payload fields, NULL when the payload is not valid JSON (the runner then fails the job
// with a clear error instead of the claim failing for every job). The team: the payload's
// team_id when a command put one there (`backfill --team`), else the team the user's
// deliveries named (`users`, written in the same step as the job), else none.
constexpr std::string_view kClaimSql = R"sql(
UPDATE jobs SET state = 'running', updated_at = ?2
WHERE job_id = ?1 AND state = 'queued'
RETURNING job_id, kind, job_key, attempts, trigger_seq, json_valid(payload),
  CASE WHEN json_valid(payload) THEN json_extract(payload, '$.workout_id') END,
  CASE WHEN json_valid(payload) THEN json_extract(payload, '$.user_id') END,
  CASE WHEN json_valid(payload) THEN json_extract(payload, '$.provider') END,
  CASE WHEN json_valid(payload) THEN json_extract(payload, '$.resource') END,
  CASE WHEN json_valid(payload) THEN json_extract(payload, '$.start') END,
  CASE WHEN json_valid(payload) THEN json_extract(payload, '$.end') END,
  CASE WHEN json_valid(payload) THEN json_extract(payload, '$.page') END,
  CASE WHEN json_valid(payload) THEN json_extract(payload, '$.cursor') END,
  CASE WHEN json_valid(payload) THEN json_extract(payload, '$.next_start_ms') END,
  CASE WHEN json_valid(payload) THEN coalesce(json_extract(payload, '$.team_id'),
    (SELECT u.team_id FROM users AS u WHERE u.user_id = json_extract(payload, '$.user_id'))) END
)sql";

std::string text_or_empty(const sqlite::Statement& stmt, int column) {
  return stmt.column_is_null(column) ? std::string() : std::string(stmt.column_text(column));
}

Result<bool> run_conditional(sqlite::Connection& db, sqlite::Statement& stmt) {
  auto ran = stmt.run();
  if (!ran) return fail(ran);
  return db.changes() > 0;
}

}  // namespace

Result<JobStore> JobStore::create(sqlite::Connection& db) {
  JobStore store(db);
  auto prepare = [&db](std::optional<sqlite::Statement>& slot, std::string_view sql) -> Result<void> {
    auto stmt = db.prepare(sql);
    if (!stmt) return fail(stmt, "jobs");
    slot.emplace(std::move(*stmt));
    return {};
  };
  const std::pair<std::optional<sqlite::Statement>*, std::string_view> statements[] = {
      {&store.requeue_running_,
       "UPDATE jobs SET attempts = attempts + 1, "
       "state = CASE WHEN attempts + 1 >= ?2 THEN 'dead' ELSE 'queued' END, "
       "last_error = ?3, "
       "next_attempt_at = ?1, updated_at = ?1 WHERE state = 'running'"},
      {&store.select_due_,
       "SELECT job_id FROM jobs WHERE state = 'queued' AND next_attempt_at <= ?1 "
       "ORDER BY next_attempt_at, job_id LIMIT ?2"},
      {&store.claim_one_, kClaimSql},
      {&store.progress_stream_,
       "UPDATE jobs SET payload = json_set(payload, '$.page', ?3), attempts = 0, last_error = NULL, "
       "state = CASE WHEN ?4 THEN 'done' ELSE state END, updated_at = ?5 "
       "WHERE job_id = ?1 AND trigger_seq = ?2 AND state = 'running'"},
      {&store.progress_backfill_,
       "UPDATE jobs SET payload = json_set(payload, '$.page', ?3, '$.cursor', ?6, '$.next_start_ms', ?7), "
       "attempts = 0, last_error = NULL, state = CASE WHEN ?4 THEN 'done' ELSE state END, updated_at = ?5 "
       "WHERE job_id = ?1 AND trigger_seq = ?2 AND state = 'running'"},
      {&store.failure_,
       "UPDATE jobs SET state = ?3, attempts = ?4, next_attempt_at = ?5, last_error = ?6, updated_at = ?7 "
       "WHERE job_id = ?1 AND trigger_seq = ?2 AND state = 'running'"},
      {&store.release_,
       "UPDATE jobs SET state = 'queued', next_attempt_at = ?3, updated_at = ?3 "
       "WHERE job_id = ?1 AND trigger_seq = ?2 AND state = 'running'"},
  };
  for (const auto& [slot, sql] : statements) {
    if (auto prepared = prepare(*slot, sql); !prepared) return fail(prepared);
  }
  return store;
}

Result<int64_t> JobStore::requeue_interrupted(int64_t now_ms, int64_t max_attempts) {
  auto txn = sqlite::Transaction::begin(*db_);
  if (!txn) return fail(txn);
  requeue_running_->bind(1, now_ms).bind(2, max_attempts).bind_static(3, kInterruptedJobError);
  if (auto ran = requeue_running_->run(); !ran) return fail(ran);
  const int64_t count = db_->changes();
  if (auto committed = txn->commit(); !committed) return fail(committed);
  return count;
}

Result<std::vector<ClaimedJob>> JobStore::claim_due(int64_t now_ms, size_t limit, std::span<const int64_t> busy) {
  std::vector<ClaimedJob> claimed;
  if (limit == 0) return claimed;
  auto txn = sqlite::Transaction::begin(*db_);
  if (!txn) return fail(txn);
  std::vector<int64_t> due;
  select_due_->bind(1, now_ms).bind(2, static_cast<int64_t>(limit + busy.size()));
  for (;;) {
    auto row = select_due_->step();
    if (!row) return fail(row);
    if (!*row) break;
    const int64_t id = select_due_->column_int(0);
    if (std::find(busy.begin(), busy.end(), id) == busy.end() && due.size() < limit) due.push_back(id);
  }
  select_due_->reset();
  for (const int64_t id : due) {
    claim_one_->bind(1, id).bind(2, now_ms);
    auto row = claim_one_->step();
    if (!row) return fail(row);
    if (*row) {
      const auto& s = *claim_one_;
      ClaimedJob job;
      job.job_id = s.column_int(0);
      job.kind = std::string(s.column_text(1));
      job.job_key = std::string(s.column_text(2));
      job.attempts = s.column_int(3);
      job.trigger_seq = s.column_int(4);
      job.payload_valid = s.column_int(5) != 0;
      job.workout_id = text_or_empty(s, 6);
      job.user_id = text_or_empty(s, 7);
      job.provider = text_or_empty(s, 8);
      job.resource = text_or_empty(s, 9);
      job.start = text_or_empty(s, 10);
      job.end = text_or_empty(s, 11);
      job.page = s.column_is_null(12) ? 0 : s.column_int(12);
      if (!s.column_is_null(13)) job.cursor = std::string(s.column_text(13));
      job.next_start_ms = s.column_optional_int(14);
      job.team_id = text_or_empty(s, 15);
      claimed.push_back(std::move(job));
      // RETURNING rows must be stepped to the end before the update is complete.
      while (true) {
        auto more = claim_one_->step();
        if (!more) return fail(more);
        if (!*more) break;
      }
    }
    claim_one_->reset();
  }
  if (auto committed = txn->commit(); !committed) return fail(committed);
  return claimed;
}

Result<bool> JobStore::record_progress_in_transaction(const ClaimedJob& job, const JobProgress& progress,
                                                      int64_t now_ms) {
  const bool backfill = job.kind == kKindBackfill;
  sqlite::Statement& stmt = backfill ? *progress_backfill_ : *progress_stream_;
  stmt.bind(1, job.job_id).bind(2, job.trigger_seq).bind(3, progress.page)
      .bind(4, int64_t{progress.complete ? 1 : 0}).bind(5, now_ms);
  if (backfill) {
    if (progress.cursor) {
      stmt.bind(6, std::string_view(*progress.cursor));
    } else {
      stmt.bind_null(6);
    }
    stmt.bind(7, progress.next_start_ms);
  }
  return run_conditional(*db_, stmt);
}

Result<bool> JobStore::record_failure(const ClaimedJob& job, const RetryDecision& decision, std::string_view error,
                                      int64_t now_ms) {
  auto txn = sqlite::Transaction::begin(*db_);
  if (!txn) return fail(txn);
  failure_->bind(1, job.job_id).bind(2, job.trigger_seq)
      .bind_static(3, decision.dead ? std::string_view("dead") : std::string_view("queued"))
      .bind(4, decision.attempts).bind(5, decision.next_attempt_at_ms).bind(6, error).bind(7, now_ms);
  auto updated = run_conditional(*db_, *failure_);
  if (!updated) return updated;
  if (auto committed = txn->commit(); !committed) return fail(committed);
  return updated;
}

Result<bool> JobStore::release(const ClaimedJob& job, int64_t now_ms) {
  auto txn = sqlite::Transaction::begin(*db_);
  if (!txn) return fail(txn);
  release_->bind(1, job.job_id).bind(2, job.trigger_seq).bind(3, now_ms);
  auto updated = run_conditional(*db_, *release_);
  if (!updated) return updated;
  if (auto committed = txn->commit(); !committed) return fail(committed);
  return updated;
}

}  // namespace hh::store
