#include "store/sqlite/queries/stream_query.h"

#include "store/read_query_common.h"

namespace hh::store {
namespace {

constexpr std::string_view kStreamExport =
    "SELECT workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, "
    "resistance, temperature FROM stream_points "
    "WHERE (?1 IS NULL OR workout_id = ?1) "
    "AND ((?2 IS NULL AND ?3 IS NULL) OR workout_id IN (SELECT workout_id FROM workout_streams "
    "     WHERE (?2 IS NULL OR user_id = ?2) AND (?3 IS NULL OR provider = ?3))) "
    "AND (?4 IS NULL OR time * 1000 >= ?4) AND (?5 IS NULL OR time * 1000 < ?5) "
    "ORDER BY workout_id, idx";

constexpr std::string_view kStreamPage =
    "SELECT workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, "
    "resistance, temperature FROM stream_points "
    "WHERE workout_id = ?1 AND idx > ?2 ORDER BY idx LIMIT ?3";

constexpr std::string_view kWorkoutStream =
    "SELECT workout_id, user_id, provider, provider_id, sport, point_count, seq FROM workout_streams "
    "WHERE workout_id = ?1";

enum StreamStatement : size_t { stream_export, stream_page, workout_stream };

}  // namespace

SqliteStreamQuery::SqliteStreamQuery(sqlite::Connection& db)
    : statements_(db, {kStreamExport, kStreamPage, kWorkoutStream}) {}

Result<void> SqliteStreamQuery::start_export(const StreamFilter& filter) {
  auto s = statements_.start(stream_export);
  if (!s) return fail(s.error());
  (*s)->bind(1, filter.workout_id).bind(2, filter.user_id).bind(3, filter.provider);
  (*s)->bind(4, filter.since_ms).bind(5, filter.until_ms);
  return {};
}

Result<void> SqliteStreamQuery::start_page(std::string_view workout_id, std::optional<int64_t> after_idx,
                                           int64_t limit) {
  auto s = statements_.start(stream_page);
  if (!s) return fail(s.error());
  (*s)->bind(1, workout_id).bind(2, after_idx.value_or(-1)).bind(3, limit);
  return {};
}

Result<bool> SqliteStreamQuery::next(StoredStreamPoint& row) {
  return statements_.next_row([&row](const sqlite::Statement& s) { read_stream_point(s, row); });
}

Result<bool> SqliteStreamQuery::find_workout(std::string_view workout_id, StoredWorkoutStream& row) {
  auto s = statements_.get(workout_stream);
  if (!s) return fail(s.error());
  (*s)->bind(1, workout_id);
  return (*s)->first_row([&row](const sqlite::Statement& found) { read_workout_stream(found, row); });
}

}  // namespace hh::store
