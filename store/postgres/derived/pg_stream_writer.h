#pragma once
// Workout streams on PostgreSQL, the rules of store/sqlite/derived/stream_writer.h: the
// shallow notice upserts the workout_streams row (latest wins on notice_seq); a fetched
// stream replaces every stored point of the workout unless a later fetch of it is stored.
// The points travel as arrays (pg_statements.h): after one round trip to read fetched_seq,
// the delete, the insert of every point and the row's update go in one pipeline.
//
// Lifetime: the connection must outlive this object. Used on the thread that owns it.
#include <cstdint>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/postgres/derived/pg_latest_wins.h"
#include "store/postgres/derived/pg_statements.h"

namespace hh::store {

class PgStreamWriter {
 public:
  static Result<PgStreamWriter> create(pg::Connection& db);

  Result<WriteOutcome> write_notice(const rows::WorkoutStreamNotice& notice, int64_t seq);
  // Fails with an error starting "stream: " (ErrorKind::data) when the body is not a valid
  // stream; nothing is written then.
  Result<StreamReplaced> replace_points(const rows::FetchedStream& stream, int64_t seq);

 private:
  PgStreamWriter(pg::Connection& db, PgLatestWins notice) : db_(&db), notice_(std::move(notice)) {}

  pg::Connection* db_;
  PgLatestWins notice_;
  ArrayLiteral columns_[12];  // idx, time, distance, …, temperature; reused
};

}  // namespace hh::store
