#pragma once
// The derived writer on PostgreSQL (store/derived/derived_writer.h), with the same rows,
// change feed, counts and jobs as SQLite's for the same calls. Its parts: latest wins in
// one round trip per row (pg_latest_wins.h), a batch of samples or a stream's points in one
// statement (pg_sample_writer.h, pg_stream_writer.h), the feed buffered into one insert per
// flush (pg_change_inserts.h). Statements are prepared on the connection under fixed names
// ("hh_derived_…"), once per connection. apply() runs its own statements and pipelines:
// call it with the connection out of pipeline mode (not between a caller's
// Pipeline::begin and finish).
#include "common/result.h"
#include "store/derived/derived_writer.h"
#include "store/postgres/connection.h"
#include "store/derived/change_feed.h"
#include "store/postgres/derived/pg_change_inserts.h"
#include "store/derived/follow_up_jobs.h"
#include "store/postgres/derived/pg_job_upsert.h"
#include "store/postgres/derived/pg_latest_wins.h"
#include "store/postgres/derived/pg_sample_writer.h"
#include "store/postgres/derived/pg_stream_writer.h"
#include "store/postgres/derived/pg_user_table.h"

namespace hh::store {

struct PgWrites {
  using Connection = pg::Connection;
  using LatestWins = PgLatestWins;
  using UserTable = PgUserTable;
  using SampleWriter = PgSampleWriter;
  using StreamWriter = PgStreamWriter;
  using FollowUpJobs = FollowUpJobsOf<PgJobUpsert>;
  using ChangeFeed = ChangeFeedOf<PgChangeInserts>;
  // The parts' errors carry the kind of their SQLSTATE (pg::error_kind).
  static ErrorKind failure_kind(pg::Connection&, const Result<void>& failed) { return failed.error_kind(); }
};

using PgDerivedWriter = DerivedWriterOf<PgWrites>;
extern template class DerivedWriterOf<PgWrites>;

}  // namespace hh::store
