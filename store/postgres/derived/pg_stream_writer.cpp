#include "store/postgres/derived/pg_stream_writer.h"

#include "rows/stream_points.h"

namespace hh::store {
namespace {

// A row may exist without a notice (fetched first: notice_seq NULL), so the update
// compares with coalesce(notice_seq, 0); seq keeps the later of notice and fetch.
constexpr std::string_view kPgNoticeSql =
    "INSERT INTO workout_streams AS cur (workout_id, user_id, provider, provider_id, sport, notice_seq, seq) "
    "VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $6::bigint) "
    "ON CONFLICT (workout_id) DO UPDATE SET user_id = excluded.user_id, provider = excluded.provider, "
    "provider_id = excluded.provider_id, sport = excluded.sport, notice_seq = excluded.notice_seq, "
    "seq = greatest(excluded.notice_seq, coalesce(cur.fetched_seq, 0)) "
    "WHERE coalesce(cur.notice_seq, 0) < excluded.notice_seq RETURNING (xmax = 0) AS inserted";

const std::string kPgFetchedSeq = "hh_derived_stream_fetched_seq";
constexpr std::string_view kPgFetchedSeqSql = "SELECT fetched_seq FROM workout_streams WHERE workout_id = $1::text";

const std::string kPgDeletePoints = "hh_derived_stream_delete_points";
constexpr std::string_view kPgDeletePointsSql = "DELETE FROM stream_points WHERE workout_id = $1::text";

const std::string kPgInsertPoints = "hh_derived_stream_insert_points";
constexpr std::string_view kPgInsertPointsSql =
    "INSERT INTO stream_points (workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, "
    "cadence, power, resistance, temperature) "
    "SELECT $1::text, x.* FROM unnest($2::bigint[], $3::bigint[], $4::double precision[], $5::double precision[], "
    "$6::double precision[], $7::double precision[], $8::double precision[], $9::double precision[], "
    "$10::double precision[], $11::double precision[], $12::double precision[], $13::double precision[]) AS x";

// $1 workout_id, $2 fetched_seq, $3 point_count, $4 the fetch's user (the job's): it names a
// stream fetched before any notice did.
const std::string kPgUpdateFetched = "hh_derived_stream_update_fetched";
constexpr std::string_view kPgUpdateFetchedSql =
    "UPDATE workout_streams SET fetched_seq = $2::bigint, point_count = $3::bigint, "
    "seq = greatest(coalesce(notice_seq, 0), $2::bigint), user_id = coalesce(user_id, $4::text) "
    "WHERE workout_id = $1::text";
const std::string kPgInsertFetched = "hh_derived_stream_insert_fetched";
constexpr std::string_view kPgInsertFetchedSql =
    "INSERT INTO workout_streams (workout_id, fetched_seq, point_count, seq, user_id) "
    "VALUES ($1::text, $2::bigint, $3::bigint, $2::bigint, $4::text)";

}  // namespace

template <>
Result<PgStreamWriter> PgStreamWriter::create(pg::Connection& db) {
  auto notice = PgLatestWins::create(db, "hh_derived_stream_notice", kPgNoticeSql);
  if (!notice) return fail(notice);
  for (const auto& [name, sql] : {std::pair{&kPgFetchedSeq, kPgFetchedSeqSql},
                                  std::pair{&kPgDeletePoints, kPgDeletePointsSql},
                                  std::pair{&kPgInsertPoints, kPgInsertPointsSql},
                                  std::pair{&kPgUpdateFetched, kPgUpdateFetchedSql},
                                  std::pair{&kPgInsertFetched, kPgInsertFetchedSql}}) {
    if (auto prepared = prepare_once(db, *name, sql); !prepared) return fail(prepared);
  }
  return PgStreamWriter(PgStreamWriterState{&db, std::move(*notice), {}});
}

template <>
Result<WriteOutcome> PgStreamWriter::write_notice(const rows::WorkoutStreamNotice& notice, int64_t seq) {
  pg::Params p;
  p.add(notice.workout_id).add(notice.user_id).add(notice.provider).add(notice.provider_id).add(notice.sport);
  p.add(seq);
  return state_.notice.write(p);
}

template <>
Result<StreamReplaced> PgStreamWriter::replace_points(const rows::FetchedStream& stream, int64_t seq) {
  auto& columns = state_.columns;
  auto found = state_.db->run(kPgFetchedSeq, pg::Params().add(stream.workout_id));
  if (!found) return fail(found);
  const bool exists = !found->empty();
  const std::optional<int64_t> stored = exists ? found->optional_integer(0, 0) : std::nullopt;
  if (stored && *stored >= seq) return StreamReplaced{};  // a later fetch is stored

  for (ArrayLiteral& column : columns) column.clear();
  rows::StreamPointReader reader(stream.body);
  rows::StreamPoint point;
  int64_t count = 0;
  while (reader.next(point)) {
    columns[0].integer(static_cast<int64_t>(point.index));
    columns[1].integer(point.time);
    int at = 2;
    for (const std::optional<double>& value :
         {point.distance, point.heartrate, point.velocity_smooth, point.lat, point.lng, point.altitude, point.cadence,
          point.power, point.resistance, point.temperature}) {
      columns[at++].real(value);
    }
    ++count;
  }
  if (!reader.error().empty()) return fail(ErrorKind::data, "stream: " + reader.error());

  pg::Params points;
  points.add(stream.workout_id);
  points.add(columns[0].finish());  // idx: never NULL (the rows' count)
  for (size_t i = 1; i < std::size(columns); ++i) columns[i].add_to(points);
  pg::Params workout;
  workout.add(stream.workout_id);
  pg::Params row;
  row.add(stream.workout_id).add(seq).add(count).add(stream.user_id);
  auto pipeline = pg::Pipeline::begin(*state_.db);
  if (!pipeline) return fail(pipeline);
  for (const auto& [name, params] : {std::pair{&kPgDeletePoints, &workout}, std::pair{&kPgInsertPoints, &points},
                                     std::pair{exists ? &kPgUpdateFetched : &kPgInsertFetched, &row}}) {
    if (auto sent = pipeline->send_prepared(*name, *params); !sent) return fail(sent);
  }
  if (auto done = pipeline->finish(); !done) return fail(done);
  return StreamReplaced{exists ? WriteOutcome::updated : WriteOutcome::inserted, count};
}

}  // namespace hh::store
