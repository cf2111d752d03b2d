#pragma once
// The derived writer on SQLite (store/derived/derived_writer.h): its parts are prepared
// statements run once per row on the writer's connection (latest_wins.h, user_table.h,
// sample_writer.h, stream_writer.h, job_upsert.h, change_inserts.h).
#include "common/result.h"
#include "store/derived/derived_writer.h"
#include "store/sqlite/connection.h"
#include "store/derived/change_feed.h"
#include "store/derived/follow_up_jobs.h"
#include "store/sqlite/derived/change_inserts.h"
#include "store/sqlite/derived/job_upsert.h"
#include "store/sqlite/derived/latest_wins.h"
#include "store/sqlite/derived/sample_writer.h"
#include "store/sqlite/derived/stream_writer.h"
#include "store/sqlite/derived/user_table.h"

namespace hh::store {

struct SqliteWrites {
  using Connection = sqlite::Connection;
  using LatestWins = hh::store::LatestWins;
  using UserTable = SqliteUserTable;
  using SampleWriter = SqliteSampleWriter;
  using StreamWriter = SqliteStreamWriter;
  using FollowUpJobs = FollowUpJobsOf<SqliteJobUpsert>;
  using ChangeFeed = ChangeFeedOf<SqliteChangeInserts>;
  // The failed statement's code stays on the connection until the caller's ROLLBACK
  // replaces it: read it now.
  static ErrorKind failure_kind(sqlite::Connection& db, const Result<void>&) {
    return sqlite::error_kind(db.last_error_code());
  }
};

using DerivedWriter = DerivedWriterOf<SqliteWrites>;
extern template class DerivedWriterOf<SqliteWrites>;

}  // namespace hh::store
