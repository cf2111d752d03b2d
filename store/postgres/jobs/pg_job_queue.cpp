#include "store/postgres/jobs/pg_job_queue.h"

#include <charconv>
#include <cmath>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/json_writer.h"
#include "store/jobs/interrupted_job.h"
#include "store/postgres/jobs/payload_json.h"

namespace hh::store {
namespace {

// Running jobs whose lease has passed → queued (due now) or dead, one failed attempt more.
// SKIP LOCKED: a row another instance is taking over or updating right now is its business.
// A running job without a lease (copied from a SQLite store) counts as expired. $4: this
// instance's jobs in flight, never taken from it (a renewal late on a busy writer).
constexpr std::string_view kPgjobsExpireSql = R"sql(
UPDATE jobs SET attempts = attempts + 1, state = CASE WHEN attempts + 1 >= $2 THEN 'dead' ELSE 'queued' END,
  last_error = $3, next_attempt_at = $1, updated_at = $1, lease_until = NULL
WHERE job_id IN (SELECT job_id FROM jobs WHERE state = 'running' AND (lease_until IS NULL OR lease_until < $1)
                 AND job_id <> ALL ($4::bigint[]) FOR UPDATE SKIP LOCKED)
)sql";

// The due jobs no other instance is claiming, oldest due first, marked running with a
// lease. Payload fields as job_store.cpp reads them (NULL when the payload is not JSON:
// hh_json_or_null, migration 002, so the runner fails that job instead of the claim
// failing for all); the team from the payload, else from `users`.
constexpr std::string_view kPgjobsClaimSql = R"sql(
WITH picked AS (
  SELECT job_id FROM jobs
  WHERE state = 'queued' AND next_attempt_at <= $1 AND job_id <> ALL ($3::bigint[])
  ORDER BY next_attempt_at, job_id LIMIT $2 FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE jobs AS j SET state = 'running', updated_at = $1, lease_until = $1 + $4
  FROM picked WHERE j.job_id = picked.job_id
  RETURNING j.job_id, j.kind, j.job_key, j.attempts, j.trigger_seq, j.next_attempt_at, j.payload, j.lease_until
)
SELECT c.job_id, c.kind, c.job_key, c.attempts, c.trigger_seq, p.doc IS NOT NULL,
  p.doc->>'workout_id', p.doc->>'user_id', p.doc->>'provider', p.doc->>'resource', p.doc->>'start',
  p.doc->>'end', p.doc->>'page', p.doc->>'cursor', p.doc->>'next_start_ms',
  coalesce(p.doc->>'team_id', (SELECT u.team_id FROM users AS u WHERE u.user_id = p.doc->>'user_id')),
  c.payload, c.lease_until
FROM claimed AS c CROSS JOIN LATERAL (SELECT hh_json_or_null(c.payload) AS doc) AS p
ORDER BY c.next_attempt_at, c.job_id
)sql";

// $1 job, $2 trigger_seq, $3 the leases this object set: the last and the one before it
// (the last renewal's transaction may have rolled back); NULL: none known.
constexpr std::string_view kPgjobsClaimedBy = "job_id = $1 AND trigger_seq = $2 AND state = 'running' "
                                              "AND ($3::bigint[] IS NULL OR lease_until = ANY ($3::bigint[]))";

std::string pgjobs_array(std::span<const int64_t> ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "}";
}

// A payload field as SQLite's column_int reads json_extract's value: an integer, or the
// integer part of a number ("2.0", "1e3"); nullopt for NULL, 0 for anything else.
std::optional<int64_t> pgjobs_payload_int(const pg::Rows& rows, int row, int column) {
  auto text = rows.optional_text(row, column);
  if (!text) return std::nullopt;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec == std::errc() && end == text->data() + text->size()) return value;
  double real = 0;
  auto [rend, rec] = std::from_chars(text->data(), text->data() + text->size(), real);
  if (rec == std::errc() && rend == text->data() + text->size() && std::isfinite(real) && std::fabs(real) < 9.2e18) {
    return static_cast<int64_t>(real);
  }
  return int64_t{0};
}

Result<std::string> payload_with_progress(std::string_view payload, bool backfill, const JobProgress& progress) {
  std::vector<std::pair<std::string_view, std::string>> values;
  values.emplace_back("page", std::to_string(progress.page));
  if (backfill) {
    std::string cursor = "null";
    if (progress.cursor) {
      cursor.clear();
      json::append_string(cursor, *progress.cursor);
    }
    values.emplace_back("cursor", std::move(cursor));
    values.emplace_back("next_start_ms",
                        progress.next_start_ms ? std::to_string(*progress.next_start_ms) : std::string("null"));
  }
  return json_set_members(payload, values);
}

std::string pgjobs_text_or_empty(const pg::Rows& rows, int row, int column) {
  return std::string(rows.optional_text(row, column).value_or(std::string_view()));
}

class PgJobQueue final : public JobQueue {
 public:
  PgJobQueue(pg::Connection& db, int64_t lease_ms) : db_(db), lease_ms_(lease_ms) {}

  Result<int64_t> requeue_interrupted(int64_t now_ms, int64_t max_attempts) override {
    max_attempts_ = max_attempts;
    auto expired = db_.query(kPgjobsExpireSql,
                             pg::Params().add(now_ms).add(max_attempts).add(kInterruptedJobError).add("{}"));
    if (!expired) return fail(expired, "jobs");
    return expired->affected();
  }

  Result<std::vector<ClaimedJob>> claim_due(int64_t now_ms, size_t limit, std::span<const int64_t> busy) override {
    std::vector<ClaimedJob> claimed;
    if (limit == 0) return claimed;
    const std::string busy_ids = pgjobs_array(busy);
    // One round trip: take expired leases over, then claim, in one transaction.
    auto results = [&]() -> Result<std::vector<pg::Rows>> {
      auto pipeline = pg::Pipeline::begin(db_);
      if (!pipeline) return fail(pipeline);
      const pg::Params expire =
          pg::Params().add(now_ms).add(max_attempts_).add(kInterruptedJobError).add(std::string_view(busy_ids));
      const pg::Params claim =
          pg::Params().add(now_ms).add(static_cast<int64_t>(limit)).add(std::string_view(busy_ids)).add(lease_ms_);
      for (auto sent : {pipeline->send("BEGIN"), pipeline->send(kPgjobsExpireSql, expire),
                        pipeline->send(kPgjobsClaimSql, claim), pipeline->send("COMMIT")}) {
        if (!sent) return fail(sent);
      }
      return pipeline->finish();
    }();
    if (!results) {
      (void)db_.exec("ROLLBACK");  // a failed pipeline leaves its BEGIN open
      return fail(results, "jobs");
    }
    const pg::Rows& rows = (*results)[2];
    for (int r = 0; r < rows.size(); ++r) {
      ClaimedJob job;
      job.job_id = rows.integer(r, 0);
      job.kind = std::string(rows.text(r, 1));
      job.job_key = std::string(rows.text(r, 2));
      job.attempts = rows.integer(r, 3);
      job.trigger_seq = rows.integer(r, 4);
      job.payload_valid = rows.boolean(r, 5);
      job.workout_id = pgjobs_text_or_empty(rows, r, 6);
      job.user_id = pgjobs_text_or_empty(rows, r, 7);
      job.provider = pgjobs_text_or_empty(rows, r, 8);
      job.resource = pgjobs_text_or_empty(rows, r, 9);
      job.start = pgjobs_text_or_empty(rows, r, 10);
      job.end = pgjobs_text_or_empty(rows, r, 11);
      job.page = pgjobs_payload_int(rows, r, 12).value_or(0);
      if (auto cursor = rows.optional_text(r, 13)) job.cursor = std::string(*cursor);
      job.next_start_ms = pgjobs_payload_int(rows, r, 14);
      job.team_id = pgjobs_text_or_empty(rows, r, 15);
      held_[job.job_id] = Held{rows.integer(r, 17), std::nullopt, std::string(rows.text(r, 16))};
      claimed.push_back(std::move(job));
    }
    return claimed;
  }

  Result<bool> record_progress_in_transaction(const ClaimedJob& job, const JobProgress& progress,
                                              int64_t now_ms) override {
    // The payload as SQLite's json_set leaves it, from the text read at the claim: while
    // this object holds the job (the update below checks it), nobody else writes it.
    auto found = held_.find(job.job_id);
    if (found == held_.end()) {
      // Claimed by another queue object of this process (not the server's way): read it.
      auto stored = db_.query("SELECT lease_until, payload FROM jobs WHERE job_id = $1", pg::Params().add(job.job_id));
      if (!stored) return fail(stored, "jobs");
      if (stored->empty()) return false;
      found = held_.emplace(job.job_id, Held{stored->optional_integer(0, 0).value_or(0), std::nullopt,
                                             std::string(stored->text(0, 1))}).first;
    }
    auto payload = payload_with_progress(found->second.payload, job.kind == kKindBackfill, progress);
    if (!payload) return fail(ErrorKind::data, "jobs: job " + std::to_string(job.job_id) + ": " + payload.error());
    const int64_t lease_until = now_ms + lease_ms_;
    const std::string leases = found->second.leases();
    auto updated = db_.query(
        "UPDATE jobs SET payload = $4, attempts = 0, last_error = NULL, "
        "state = CASE WHEN $5 THEN 'done' ELSE state END, updated_at = $6, lease_until = $7 WHERE " +
            std::string(kPgjobsClaimedBy),
        pg::Params().add(job.job_id).add(job.trigger_seq).add(std::string_view(leases)).add(std::string_view(*payload))
            .add(progress.complete ? "true" : "false").add(now_ms).add(lease_until));
    if (!updated) return fail(updated, "jobs");
    if (updated->affected() == 0) return false;  // kept: the job's next update is refused too
    if (progress.complete) {
      held_.erase(found);
    } else {
      // The caller may still roll back: the lease before stays acceptable until the next
      // renewal. (The payload after a rollback differs from this one only in the progress
      // keys, which the next renewal sets again: its text comes out the same.)
      found->second = Held{lease_until, found->second.lease_until, std::move(*payload)};
    }
    return true;
  }

  Result<bool> record_failure(const ClaimedJob& job, const RetryDecision& decision, std::string_view error,
                              int64_t now_ms) override {
    return finish(job, "state = $4, attempts = $5, next_attempt_at = $6, last_error = $7, updated_at = $8",
                  pg::Params()
                      .add(decision.dead ? "dead" : "queued")
                      .add(decision.attempts)
                      .add(decision.next_attempt_at_ms)
                      .add(error)
                      .add(now_ms));
  }

  Result<bool> release(const ClaimedJob& job, int64_t now_ms) override {
    return finish(job, "state = 'queued', next_attempt_at = $4, updated_at = $4", pg::Params().add(now_ms));
  }

  std::optional<std::chrono::milliseconds> lease() const override { return std::chrono::milliseconds(lease_ms_); }

  Result<bool> renew_lease(const ClaimedJob& job, int64_t now_ms) override {
    auto found = held_.find(job.job_id);
    if (found == held_.end()) return false;  // not claimed by this object (or finished)
    const int64_t lease_until = now_ms + lease_ms_;
    const std::string leases = found->second.leases();
    auto updated = db_.query("UPDATE jobs SET lease_until = $4 WHERE " + std::string(kPgjobsClaimedBy),
                             pg::Params().add(job.job_id).add(job.trigger_seq).add(std::string_view(leases))
                                 .add(lease_until));
    if (!updated) return fail(updated, "jobs");
    if (updated->affected() == 0) return false;
    // Autocommit: this renewal has committed; the lease before it is still accepted once
    // more, as after a stored page.
    found->second.previous_lease = found->second.lease_until;
    found->second.lease_until = lease_until;
    return true;
  }

 private:
  struct Held {
    int64_t lease_until = 0;
    std::optional<int64_t> previous_lease;  // before the last renewal, which may have rolled back
    std::string payload;
    std::string leases() const {
      return "{" + std::to_string(lease_until) + (previous_lease ? "," + std::to_string(*previous_lease) : "") + "}";
    }
  };

  // An update that ends this object's hold on `job` (autocommit: one statement is one
  // transaction). `set` uses $4… for `more`'s values.
  Result<bool> finish(const ClaimedJob& job, std::string_view set, const pg::Params& more) {
    auto found = held_.find(job.job_id);
    const std::optional<std::string> leases =
        found == held_.end() ? std::nullopt : std::optional<std::string>(found->second.leases());
    pg::Params params;
    params.add(job.job_id).add(job.trigger_seq).add(leases);
    for (int i = 0; i < more.size(); ++i) {
      if (more.values()[i] == nullptr) {
        params.add_null();
      } else {
        params.add(std::string_view(more.values()[i], static_cast<size_t>(more.lengths()[i])));
      }
    }
    auto updated = db_.query("UPDATE jobs SET lease_until = NULL, " + std::string(set) + " WHERE " +
                                 std::string(kPgjobsClaimedBy),
                             params);
    if (!updated) return fail(updated, "jobs");
    if (found != held_.end()) held_.erase(found);
    return updated->affected() > 0;
  }

  pg::Connection& db_;
  int64_t lease_ms_;
  int64_t max_attempts_ = RetryPolicy{}.max_attempts;
  std::unordered_map<int64_t, Held> held_;  // jobs this object claimed and still runs
};

}  // namespace

Result<std::unique_ptr<JobQueue>> open_postgres_job_queue(pg::Connection& db, int64_t lease_ms) {
  if (lease_ms <= 0) return fail("jobs: the lease must be positive");
  return std::unique_ptr<JobQueue>(new PgJobQueue(db, lease_ms));
}

}  // namespace hh::store
