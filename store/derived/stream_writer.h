#pragma once
// Workout streams, for every backend: the shallow notice (daily.data.workout_stream.*)
// upserts the workout_streams row; a fetched stream replaces every stored point of the
// workout, in the same transaction, unless a later fetch of it is already stored.
//
//   notice:  latest wins on notice_seq (user, provider, provider_id, sport, notice_seq)
//   fetch:   if fetched_seq is NULL or older: DELETE points, INSERT the new ones
//            (StreamPointReader, no per-point allocation), set fetched_seq, point_count
//   seq = max(notice_seq, fetched_seq) either way
//
// `State` is what the backend's statements need (store/sqlite/derived/stream_writer.h,
// store/postgres/derived/pg_stream_writer.h): its `Connection` type and whatever it keeps
// between calls. The backend defines create(), write_notice() and replace_points() for
// its State (explicit specialisations, declared in its header, defined in its .cpp).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <utility>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"

namespace hh::store {

template <typename State>
class StreamWriterOf {
 public:
  static Result<StreamWriterOf> create(typename State::Connection& db);

  Result<WriteOutcome> write_notice(const rows::WorkoutStreamNotice& notice, int64_t seq);
  // Fails with an error starting "stream: " when the body is not a valid stream (the
  // caller rolls back); the parser validated it, so that means the parser and this reader
  // disagree.
  Result<StreamReplaced> replace_points(const rows::FetchedStream& stream, int64_t seq);

 private:
  explicit StreamWriterOf(State state) : state_(std::move(state)) {}

  State state_;
};

}  // namespace hh::store
