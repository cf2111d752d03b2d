#pragma once
// store::StreamQuery for every backend: workout stream points (`healthhook query streams`,
// the read API's stream pages) and the workout_streams row that describes a stream. Both
// listings read the stream_points primary key (workout_id, idx): no sort, constant memory.
//
// Lifetime: the session must outlive the query; one thread at a time.
#include <array>
#include <string>

#include "store/queries/listings.h"
#include "store/queries/query_args.h"
#include "store/read_query_common.h"
#include "store/read_store.h"
#include "store/schema/dialect.h"

namespace hh::store {

template <typename Reads>
class StreamQueryOf final : public StreamQuery {
 public:
  explicit StreamQueryOf(typename Reads::Session& session) : statements_(session, sql()) {}

  Result<void> start_export(const StreamFilter& filter) override {
    QueryArgs args;
    args.add(filter.workout_id).add(filter.user_id).add(filter.provider).add(filter.since_ms).add(filter.until_ms);
    return statements_.start(stream_export, args, Fetch::cursor);
  }

  Result<void> start_page(std::string_view workout_id, std::optional<int64_t> after_idx, int64_t limit) override {
    return statements_.start(stream_page, QueryArgs().add(workout_id).add(after_idx.value_or(-1)).add(limit),
                             Fetch::whole);
  }

  Result<bool> next(StoredStreamPoint& row) override {
    return statements_.next([&row](const auto& s) { read_stream_point(s, row); });
  }
  void finish() override { statements_.finish(); }

  Result<bool> find_workout(std::string_view workout_id, StoredWorkoutStream& row) override {
    return statements_.lookup(workout_stream, QueryArgs().add(workout_id),
                              [&row](const auto& s) { read_workout_stream(s, row); });
  }

 private:
  enum Statement : size_t { stream_export, stream_page, workout_stream };

  static const std::array<std::string, 3>& sql() {
    static const std::array<std::string, 3> built = [] {
      constexpr std::string_view points =
          "SELECT workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, "
          "resistance, temperature FROM stream_points ";
      return std::array<std::string, 3>{
          schema::spell(std::string(points) +
                            "WHERE (?1::text IS NULL OR workout_id = ?1) "
                            "AND ((?2::text IS NULL AND ?3::text IS NULL) OR workout_id IN (SELECT workout_id FROM "
                            "workout_streams WHERE (?2::text IS NULL OR user_id = ?2) AND (?3::text IS NULL OR "
                            "provider = ?3))) "
                            "AND (?4::bigint IS NULL OR time * 1000 >= ?4) AND (?5::bigint IS NULL OR time * 1000 < ?5) "
                            "ORDER BY workout_id COLLATE \"C\", idx",
                        Reads::dialect),
          schema::spell(std::string(points) + "WHERE workout_id = ?1 AND idx > ?2 ORDER BY idx LIMIT ?3",
                        Reads::dialect),
          schema::spell("SELECT workout_id, user_id, provider, provider_id, sport, point_count, seq, fetched_seq FROM "
                        "workout_streams WHERE workout_id = ?1",
                        Reads::dialect)};
    }();
    return built;
  }

  typename Reads::template Listings<3> statements_;
};

}  // namespace hh::store
