#include "store/sqlite/queries/stream_query.h"

namespace hh::store {
namespace {

constexpr std::string_view kAll =
    "SELECT workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, "
    "resistance, temperature FROM stream_points "
    "WHERE (?1 IS NULL OR workout_id = ?1) "
    "AND ((?2 IS NULL AND ?3 IS NULL) OR workout_id IN (SELECT workout_id FROM workout_streams "
    "     WHERE (?2 IS NULL OR user_id = ?2) AND (?3 IS NULL OR provider = ?3))) "
    "AND (?4 IS NULL OR time * 1000 >= ?4) AND (?5 IS NULL OR time * 1000 < ?5) "
    "ORDER BY workout_id, idx";

constexpr std::string_view kPage =
    "SELECT workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, "
    "resistance, temperature FROM stream_points "
    "WHERE workout_id = ?1 AND idx > ?2 ORDER BY idx LIMIT ?3";

constexpr std::string_view kWorkout =
    "SELECT workout_id, user_id, provider, provider_id, sport, point_count, seq FROM workout_streams "
    "WHERE workout_id = ?1";

std::optional<std::string_view> view(const std::optional<std::string>& text) {
  return text ? std::optional<std::string_view>(*text) : std::nullopt;
}

std::optional<double> optional_real(const sqlite::Statement& s, int column) {
  if (s.column_is_null(column)) return std::nullopt;
  return s.column_double(column);
}

}  // namespace

Result<StreamQuery> StreamQuery::create(sqlite::Connection& db) {
  auto all = db.prepare(kAll);
  if (!all) return fail(all.error());
  auto page = db.prepare(kPage);
  if (!page) return fail(page.error());
  auto workout = db.prepare(kWorkout);
  if (!workout) return fail(workout.error());
  return StreamQuery(std::move(*all), std::move(*page), std::move(*workout));
}

void StreamQuery::start_export(const StreamFilter& filter) {
  all_.reset();
  page_.reset();
  all_.bind(1, view(filter.workout_id)).bind(2, view(filter.user_id)).bind(3, view(filter.provider));
  all_.bind(4, filter.since_ms).bind(5, filter.until_ms);
  active_ = &all_;
}

void StreamQuery::start_page(std::string_view workout_id, std::optional<int64_t> after_idx, int64_t limit) {
  all_.reset();
  page_.reset();
  page_.bind(1, workout_id).bind(2, after_idx.value_or(-1)).bind(3, limit);
  active_ = &page_;
}

void StreamQuery::finish() {
  all_.reset();
  page_.reset();
  active_ = nullptr;
}

Result<bool> StreamQuery::next(StoredStreamPoint& row) {
  if (!active_) return false;
  sqlite::Statement& s = *active_;
  auto has_row = s.step();
  if (!has_row) return fail(has_row.error());
  if (!*has_row) {
    s.reset();
    active_ = nullptr;
    return false;
  }
  row.workout_id = s.column_text(0);
  row.idx = s.column_int(1);
  row.time = s.column_optional_int(2);
  row.distance = optional_real(s, 3);
  row.heartrate = optional_real(s, 4);
  row.velocity_smooth = optional_real(s, 5);
  row.lat = optional_real(s, 6);
  row.lng = optional_real(s, 7);
  row.altitude = optional_real(s, 8);
  row.cadence = optional_real(s, 9);
  row.power = optional_real(s, 10);
  row.resistance = optional_real(s, 11);
  row.temperature = optional_real(s, 12);
  return true;
}

Result<bool> StreamQuery::find_workout(std::string_view workout_id, StoredWorkoutStream& row) {
  workout_.bind(1, workout_id);
  auto has_row = workout_.step();
  if (!has_row) return fail(has_row.error());
  if (!*has_row) {
    workout_.reset();
    return false;
  }
  const auto copy = [this](int column) -> std::optional<std::string> {
    if (workout_.column_is_null(column)) return std::nullopt;
    return std::string(workout_.column_text(column));
  };
  row.workout_id = std::string(workout_.column_text(0));
  row.user_id = copy(1);
  row.provider = copy(2);
  row.provider_id = copy(3);
  row.sport = copy(4);
  row.point_count = workout_.column_optional_int(5);
  row.seq = workout_.column_int(6);
  workout_.reset();
  return true;
}

}  // namespace hh::store
