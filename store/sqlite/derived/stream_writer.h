#pragma once
// Workout streams on SQLite (store/derived/stream_writer.h says the rules): one statement
// per point. The stored points are deleted before the new ones are read, so a stream that
// fails to read leaves writes to roll back.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/stream_writer.h"
#include "store/sqlite/derived/latest_wins.h"

namespace hh::store {

struct SqliteStreamWriterState {
  using Connection = sqlite::Connection;
  LatestWins notice;
  sqlite::Statement fetched_seq;
  sqlite::Statement delete_points;
  sqlite::Statement delete_range;  // a slice's points (rows::StreamSlice)
  sqlite::Statement delete_tail;   // after the last slice: the earlier fetch's points past the new count
  sqlite::Statement insert_point;
  sqlite::Statement update_fetched;
  sqlite::Statement insert_fetched;
};

using SqliteStreamWriter = StreamWriterOf<SqliteStreamWriterState>;
template <>
Result<SqliteStreamWriter> SqliteStreamWriter::create(sqlite::Connection& db);
template <>
Result<WriteOutcome> SqliteStreamWriter::write_notice(const rows::WorkoutStreamNotice& notice, int64_t seq);
template <>
Result<StreamReplaced> SqliteStreamWriter::replace_points(const rows::FetchedStream& stream, int64_t seq);

}  // namespace hh::store
