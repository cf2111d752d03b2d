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
#include "store/derived/follow_up_jobs.h"
#include "store/postgres/connection.h"

namespace hh::store {

// The statement is prepared on the connection under a fixed name.
struct PgJobUpsertState {
  using Connection = pg::Connection;
  pg::Connection* db;
};

using PgJobUpsert = JobUpsertOf<PgJobUpsertState>;
template <>
Result<PgJobUpsert> PgJobUpsert::create(pg::Connection& db);
template <>
Result<bool> PgJobUpsert::run(std::string_view kind, std::string_view key, int64_t now_ms, int64_t seq,
                              std::string_view payload, std::optional<std::string_view> user);

}  // namespace hh::store
