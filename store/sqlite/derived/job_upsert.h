#pragma once
// The SQLite statement that queues a follow-up job (store/derived/follow_up_jobs.h says the
// rules): one upsert, `ON CONFLICT (kind, job_key) DO UPDATE … WHERE excluded.trigger_seq >
// jobs.trigger_seq`, so only a delivery with a higher seq re-queues a job.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.h"
#include "store/derived/follow_up_jobs.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct SqliteJobUpsertState {
  using Connection = sqlite::Connection;
  sqlite::Connection* db;
  sqlite::Statement upsert;
};

using SqliteJobUpsert = JobUpsertOf<SqliteJobUpsertState>;
template <>
Result<SqliteJobUpsert> SqliteJobUpsert::create(sqlite::Connection& db);
template <>
Result<bool> SqliteJobUpsert::run(std::string_view kind, std::string_view key, int64_t now_ms, int64_t seq,
                                  std::string_view payload, std::optional<std::string_view> user);

}  // namespace hh::store
