#pragma once
// The `jobs` table as a persistent queue, on the write connection. Every method runs on
// the writer thread (store/inbox_writer.h: InboxWriter::post); nothing here locks.
//
// The state machine and every method's promise: store/jobs/job_queue.h.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/jobs/job_queue.h"
#include "store/sqlite/connection.h"

namespace hh::store {

class JobStore final : public JobQueue {
 public:
  // `db` is the write connection; it must stay live, migrated, and used only by the thread
  // that calls these methods.
  static Result<JobStore> create(sqlite::Connection& db);

  Result<int64_t> requeue_interrupted(int64_t now_ms, int64_t max_attempts) override;
  Result<std::vector<ClaimedJob>> claim_due(int64_t now_ms, size_t limit, std::span<const int64_t> busy) override;
  Result<bool> record_progress_in_transaction(const ClaimedJob& job, const JobProgress& progress,
                                              int64_t now_ms) override;
  Result<bool> record_failure(const ClaimedJob& job, const RetryDecision& decision, std::string_view error,
                              int64_t now_ms) override;
  Result<bool> release(const ClaimedJob& job, int64_t now_ms) override;

 private:
  JobStore(sqlite::Connection& db) : db_(&db) {}
  sqlite::Connection* db_;
  std::optional<sqlite::Statement> requeue_running_, select_due_, claim_one_, progress_stream_, progress_backfill_,
      failure_, release_;
};

}  // namespace hh::store
