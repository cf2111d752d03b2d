#include "store/sqlite/derived/stream_writer.h"

#include <optional>
#include <string>

#include "rows/stream_points.h"

namespace hh::store {

template <>
Result<SqliteStreamWriter> SqliteStreamWriter::create(sqlite::Connection& db) {
  // A row may exist without a notice (fetched first: notice_seq NULL), so the update
  // compares with coalesce(notice_seq, 0); seq keeps the later of notice and fetch.
  auto notice = LatestWins::create(
      db,
      "INSERT INTO workout_streams (workout_id, user_id, provider, provider_id, sport, notice_seq, seq) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT DO NOTHING",
      "UPDATE workout_streams SET user_id = ?2, provider = ?3, provider_id = ?4, sport = ?5, notice_seq = ?6, "
      "seq = max(?6, coalesce(fetched_seq, 0)) WHERE workout_id = ?1 AND coalesce(notice_seq, 0) < ?6");
  if (!notice) return fail(notice);
  auto fetched_seq = db.prepare("SELECT fetched_seq FROM workout_streams WHERE workout_id = ?1");
  if (!fetched_seq) return fail(fetched_seq);
  auto delete_points = db.prepare("DELETE FROM stream_points WHERE workout_id = ?1");
  if (!delete_points) return fail(delete_points);
  auto delete_range = db.prepare("DELETE FROM stream_points WHERE workout_id = ?1 AND idx >= ?2 AND idx < ?3");
  if (!delete_range) return fail(delete_range);
  auto delete_tail = db.prepare("DELETE FROM stream_points WHERE workout_id = ?1 AND idx >= ?2");
  if (!delete_tail) return fail(delete_tail);
  auto insert_point = db.prepare(
      "INSERT INTO stream_points (workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, "
      "cadence, power, resistance, temperature) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  if (!insert_point) return fail(insert_point);
  auto update_fetched = db.prepare(
      "UPDATE workout_streams SET fetched_seq = ?2, point_count = ?3, seq = max(coalesce(notice_seq, 0), ?2), "
      "user_id = coalesce(user_id, ?4) WHERE workout_id = ?1");
  if (!update_fetched) return fail(update_fetched);
  auto insert_fetched = db.prepare(
      "INSERT INTO workout_streams (workout_id, fetched_seq, point_count, seq, user_id) VALUES (?1, ?2, ?3, ?2, ?4)");
  if (!insert_fetched) return fail(insert_fetched);
  return SqliteStreamWriter(SqliteStreamWriterState{std::move(*notice), std::move(*fetched_seq),
                                                     std::move(*delete_points), std::move(*delete_range),
                                                     std::move(*delete_tail), std::move(*insert_point),
                                                     std::move(*update_fetched), std::move(*insert_fetched)});
}

template <>
Result<WriteOutcome> SqliteStreamWriter::write_notice(const rows::WorkoutStreamNotice& notice, int64_t seq) {
  return state_.notice.write([&](sqlite::Statement& s) {
    s.bind_static(1, notice.workout_id).bind(2, notice.user_id).bind(3, notice.provider).bind(4, notice.provider_id)
        .bind(5, notice.sport).bind(6, seq);
  });
}

namespace {

// Inserts the points `reader` hands out, at most `limit` (none: to the stream's end); how many.
Result<int64_t> insert_stream_points(SqliteStreamWriterState& s, std::string_view workout_id,
                                     rows::StreamPointReader& reader, std::optional<int64_t> limit) {
  rows::StreamPoint point;
  int64_t count = 0;
  while ((!limit || count < *limit) && reader.next(point)) {
    s.insert_point.bind_static(1, workout_id)
        .bind(2, static_cast<int64_t>(point.index))
        .bind(3, point.time)
        .bind(4, point.distance)
        .bind(5, point.heartrate)
        .bind(6, point.velocity_smooth)
        .bind(7, point.lat)
        .bind(8, point.lng)
        .bind(9, point.altitude)
        .bind(10, point.cadence)
        .bind(11, point.power)
        .bind(12, point.resistance)
        .bind(13, point.temperature);
    if (auto done = s.insert_point.run(); !done) return fail(done);
    ++count;
  }
  if (!reader.error().empty()) return fail(ErrorKind::data, "stream: " + reader.error());
  return count;
}

// What the workout's row says of its points before they are replaced.
struct StoredStreamFetch {
  bool exists = false;                 // the workout_streams row (a notice may have made it)
  std::optional<int64_t> fetched_seq;  // the fetch its points are from; none before the first
};

Result<StoredStreamFetch> stored_stream_fetch(SqliteStreamWriterState& s, std::string_view workout_id) {
  s.fetched_seq.bind_static(1, workout_id);
  auto found = s.fetched_seq.step();
  if (!found) return fail(found);
  StoredStreamFetch stored{*found, *found ? s.fetched_seq.column_optional_int(0) : std::nullopt};
  s.fetched_seq.reset();
  return stored;
}

}  // namespace

template <>
Result<StreamReplaced> SqliteStreamWriter::replace_points(const rows::FetchedStream& stream, int64_t seq) {
  SqliteStreamWriterState& s = state_;
  const rows::StreamSlice* slice = stream.slice;
  // Latest wins, decided by the first slice: the later slices of the same delivery follow
  // in the processor's next steps, with no other delivery applied between them.
  std::optional<StoredStreamFetch> stored;  // looked up here, or (a later slice) before the row is written
  if (!slice || slice->first == 0) {
    auto found = stored_stream_fetch(s, stream.workout_id);
    if (!found) return fail(found);
    stored = *found;
    if (stored->fetched_seq && *stored->fetched_seq >= seq) return StreamReplaced{};  // a later fetch is stored
  }

  int64_t count = 0;
  if (!slice) {
    s.delete_points.bind_static(1, stream.workout_id);
    if (auto done = s.delete_points.run(); !done) return fail(done);
    rows::StreamPointReader reader(stream.body);
    auto inserted = insert_stream_points(s, stream.workout_id, reader, std::nullopt);
    if (!inserted) return fail(inserted);
    count = *inserted;
  } else {
    // A slice replaces the points at its indexes; the earlier fetch's points past them
    // stay until the last slice (readers see the new stream's first points, then the old
    // one's: docs/decisions/094-long-streams-applied-in-slices.md).
    s.delete_range.bind_static(1, stream.workout_id)
        .bind(2, static_cast<int64_t>(slice->first))
        .bind(3, static_cast<int64_t>(slice->end));
    if (auto done = s.delete_range.run(); !done) return fail(done);
    const auto points = static_cast<int64_t>(slice->end - slice->first);
    auto inserted = insert_stream_points(s, stream.workout_id, *slice->reader, points);
    if (!inserted) return fail(inserted);
    if (*inserted != points) {
      return fail(ErrorKind::data, "stream: " + std::to_string(*inserted) + " points where the parser counted " +
                                       std::to_string(points) + " from point " + std::to_string(slice->first));
    }
    if (slice->end < stream.point_count) return StreamReplaced{WriteOutcome::stale, *inserted, true};
    s.delete_tail.bind_static(1, stream.workout_id).bind(2, static_cast<int64_t>(slice->end));
    if (auto done = s.delete_tail.run(); !done) return fail(done);
    count = static_cast<int64_t>(stream.point_count);
  }

  if (!stored) {
    auto found = stored_stream_fetch(s, stream.workout_id);
    if (!found) return fail(found);
    stored = *found;
  }
  sqlite::Statement& row = stored->exists ? s.update_fetched : s.insert_fetched;
  // The fetch's user (the job's) names a stream fetched before any notice did.
  row.bind_static(1, stream.workout_id).bind(2, seq).bind(3, count).bind(4, stream.user_id);
  if (auto done = row.run(); !done) return fail(done);
  return StreamReplaced{stored->exists ? WriteOutcome::updated : WriteOutcome::inserted, count};
}

}  // namespace hh::store
