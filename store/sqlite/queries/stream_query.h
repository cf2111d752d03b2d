#pragma once
// Reads workout stream points (`healthhook query streams`, the read API's stream pages)
// and the workout_streams row that describes a stream.
//
//  - export: points of every matching workout, in (workout_id, idx) order: the primary
//    key, no sort, constant memory.
//  - page: one workout's points after index `after_idx`, at most `limit`.
//
// Lifetime: the connection must outlive the query; one thread at a time. Views are valid
// until the next next()/start/find call.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct StreamFilter {
  std::optional<std::string> workout_id;
  std::optional<std::string> user_id;   // via workout_streams
  std::optional<std::string> provider;  // via workout_streams
  std::optional<int64_t> since_ms;      // inclusive, on the point's time
  std::optional<int64_t> until_ms;      // exclusive
};

struct StoredStreamPoint {
  std::string_view workout_id;
  int64_t idx = 0;                     // position in the stream (the page cursor)
  std::optional<int64_t> time;         // Unix seconds, as sent
  std::optional<double> distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, resistance,
      temperature;
};

// Owned copies: the statement is reset before find_workout() returns.
struct StoredWorkoutStream {
  std::string workout_id;
  std::optional<std::string> user_id, provider, provider_id, sport;
  std::optional<int64_t> point_count;  // NULL until the stream was fetched
  int64_t seq = 0;
};

class StreamQuery {
 public:
  static Result<StreamQuery> create(sqlite::Connection& db);

  void start_export(const StreamFilter& filter);
  void start_page(std::string_view workout_id, std::optional<int64_t> after_idx, int64_t limit);
  // Resets the statements of a query stopped early (ends its read snapshot).
  void finish();
  Result<bool> next(StoredStreamPoint& row);

  // The workout_streams row; false when there is none.
  Result<bool> find_workout(std::string_view workout_id, StoredWorkoutStream& row);

 private:
  StreamQuery(sqlite::Statement all, sqlite::Statement page, sqlite::Statement workout)
      : all_(std::move(all)), page_(std::move(page)), workout_(std::move(workout)) {}
  sqlite::Statement all_;
  sqlite::Statement page_;
  sqlite::Statement workout_;
  sqlite::Statement* active_ = nullptr;
};

}  // namespace hh::store
