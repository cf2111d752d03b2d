#pragma once
// The PostgreSQL statement that queues a follow-up job (store/derived/follow_up_jobs.h says
// the rules), in one statement: an UPDATE of an older job and an INSERT of a missing one.
// Not `INSERT … ON CONFLICT DO UPDATE`: that takes a job_id from the identity for every
// attempt, even one that only finds the job, and job ids would then leave gaps SQLite's
// have not. A re-queued job's lease (lease_until, PostgreSQL only) is cleared with its
// state: it is not running any more.
//
// Lifetime: the connection must outlive this object. Used on the thread that owns it.
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.h"
#include "store/postgres/connection.h"

namespace hh::store {

class PgJobUpsert {
 public:
  static Result<PgJobUpsert> create(pg::Connection& db);
  // True when it queued or re-queued the job. `user`: whom the job fetches for
  // (jobs.user_id; `purge-user` finds the job by it).
  Result<bool> run(std::string_view kind, std::string_view key, int64_t now_ms, int64_t seq, std::string_view payload,
                   std::optional<std::string_view> user);

 private:
  explicit PgJobUpsert(pg::Connection& db) : db_(&db) {}
  pg::Connection* db_;
};

}  // namespace hh::store
