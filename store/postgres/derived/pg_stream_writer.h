#pragma once
// Workout streams on PostgreSQL (store/derived/stream_writer.h says the rules). The points
// travel as arrays (pg_statements.h): after one round trip to read fetched_seq, the
// delete, the insert of every point and the row's update go in one pipeline. A stream
// that fails to read fails with ErrorKind::data before anything is written.
//
// Lifetime: the connection must outlive this object. Used on the thread that owns it.
#include <cstdint>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/derived/stream_writer.h"
#include "store/postgres/derived/pg_latest_wins.h"
#include "store/postgres/derived/pg_statements.h"

namespace hh::store {

// The statements besides the notice's are prepared on the connection under fixed names.
struct PgStreamWriterState {
  using Connection = pg::Connection;
  pg::Connection* db;
  PgLatestWins notice;
  ArrayLiteral columns[12];  // idx, time, distance, …, temperature; reused
};

using PgStreamWriter = StreamWriterOf<PgStreamWriterState>;
template <>
Result<PgStreamWriter> PgStreamWriter::create(pg::Connection& db);
template <>
Result<WriteOutcome> PgStreamWriter::write_notice(const rows::WorkoutStreamNotice& notice, int64_t seq);
template <>
Result<StreamReplaced> PgStreamWriter::replace_points(const rows::FetchedStream& stream, int64_t seq);

}  // namespace hh::store
