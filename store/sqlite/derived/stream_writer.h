#pragma once
// Workout streams: the shallow notice (daily.data.workout_stream.*) upserts the
// workout_streams row; a fetched stream replaces every stored point of the workout, in
// the same transaction, unless a later fetch of it is already stored.
//
//   notice:  latest wins on notice_seq (user, provider, provider_id, sport, notice_seq)
//   fetch:   if fetched_seq is NULL or older: DELETE points, INSERT the new ones
//            (StreamPointReader, no per-point allocation), set fetched_seq, point_count
//   seq = max(notice_seq, fetched_seq) either way
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/sqlite/derived/latest_wins.h"

namespace hh::store {

class StreamWriter {
 public:
  static Result<StreamWriter> create(sqlite::Connection& db);

  Result<WriteOutcome> write_notice(const rows::WorkoutStreamNotice& notice, int64_t seq);
  // Fails (and writes must be rolled back) when the body is not a valid stream; the
  // parser validated it, so that means the parser and this reader disagree.
  Result<StreamReplaced> replace_points(const rows::FetchedStream& stream, int64_t seq);

 private:
  StreamWriter(LatestWins notice, sqlite::Statement fetched_seq, sqlite::Statement delete_points,
               sqlite::Statement insert_point, sqlite::Statement update_fetched, sqlite::Statement insert_fetched)
      : notice_(std::move(notice)),
        fetched_seq_(std::move(fetched_seq)),
        delete_points_(std::move(delete_points)),
        insert_point_(std::move(insert_point)),
        update_fetched_(std::move(update_fetched)),
        insert_fetched_(std::move(insert_fetched)) {}

  LatestWins notice_;
  sqlite::Statement fetched_seq_;
  sqlite::Statement delete_points_;
  sqlite::Statement insert_point_;
  sqlite::Statement update_fetched_;
  sqlite::Statement insert_fetched_;
};

}  // namespace hh::store
