#include "store/postgres/derived/pg_sample_writer.h"

#include <algorithm>
#include <limits>

namespace hh::store {
namespace {

// A series not in the cache is looked up; one that is not there either is inserted, under
// the lock on new ids (pg_statements.h), by a statement that looks it up again (another
// session may have inserted it before this one had the lock) and inserts it only if it is
// still missing. Looked up first so that a series that exists takes no id and no lock (an
// INSERT … ON CONFLICT DO NOTHING would take an id each time and leave gaps SQLite's ids
// do not have).
const std::string kPgSeriesFind = "hh_derived_series_find";
constexpr std::string_view kPgSeriesFindSql =
    "SELECT series_id FROM series WHERE user_id = $1::text AND resource = $2::text AND provider = $3::text "
    "AND source_type = $4::text";

const std::string kPgSeries = "hh_derived_series";
constexpr std::string_view kPgSeriesSql =
    "WITH found AS (SELECT series_id FROM series WHERE user_id = $1::text AND resource = $2::text "
    "AND provider = $3::text AND source_type = $4::text), "
    "inserted AS (INSERT INTO series (series_id, user_id, resource, provider, source_type) "
    "SELECT (SELECT coalesce(max(series_id), 0) + 1 FROM series), $1::text, $2::text, $3::text, $4::text "
    "WHERE NOT EXISTS (SELECT 1 FROM found) RETURNING series_id) "
    "SELECT series_id FROM found UNION ALL SELECT series_id FROM inserted";

const std::string kPgSourceId = "hh_derived_series_source_id";
constexpr std::string_view kPgSourceIdSql =
    "UPDATE series SET source_id = $2::jsonb WHERE series_id = $1::bigint AND source_id IS DISTINCT FROM $2::jsonb";

const std::string kPgAppId = "hh_derived_series_app_id";
constexpr std::string_view kPgAppIdSql =
    "UPDATE series SET app_id = $2::text WHERE series_id = $1::bigint AND app_id IS DISTINCT FROM $2::text";

// $1 series_id, $2 seq, then the arrays.
const std::string kPgSamplesFull = "hh_derived_samples_full";
constexpr std::string_view kPgSamplesFullSql =
    "INSERT INTO samples AS cur (series_id, t_ms, timezone_offset, value, unit, seq, type, start_ms, end_ms, "
    "systolic, diastolic, extra) "
    "SELECT $1::bigint, x.t_ms, x.timezone_offset, x.value, x.unit, $2::bigint, x.type, x.start_ms, x.end_ms, "
    "x.systolic, x.diastolic, x.extra "
    "FROM unnest($3::bigint[], $4::bigint[], $5::jsonb[], $6::text[], $7::text[], $8::bigint[], $9::bigint[], "
    "$10::double precision[], $11::double precision[], $12::text[]) "
    "AS x(t_ms, timezone_offset, value, unit, type, start_ms, end_ms, systolic, diastolic, extra) "
    "ON CONFLICT (series_id, t_ms) DO UPDATE SET timezone_offset = excluded.timezone_offset, "
    "value = excluded.value, unit = excluded.unit, seq = excluded.seq, type = excluded.type, "
    "start_ms = excluded.start_ms, end_ms = excluded.end_ms, systolic = excluded.systolic, "
    "diastolic = excluded.diastolic, extra = excluded.extra "
    "WHERE cur.seq < excluded.seq RETURNING t_ms, (xmax = 0) AS inserted";

const std::string kPgSamplesPlain = "hh_derived_samples_plain";
constexpr std::string_view kPgSamplesPlainSql =
    "INSERT INTO samples AS cur (series_id, t_ms, timezone_offset, value, unit, seq) "
    "SELECT $1::bigint, x.t_ms, x.timezone_offset, x.value, x.unit, $2::bigint "
    "FROM unnest($3::bigint[], $4::bigint[], $5::jsonb[], $6::text[]) AS x(t_ms, timezone_offset, value, unit) "
    "ON CONFLICT (series_id, t_ms) DO UPDATE SET timezone_offset = excluded.timezone_offset, "
    "value = excluded.value, unit = excluded.unit, seq = excluded.seq, type = NULL, start_ms = NULL, "
    "end_ms = NULL, systolic = NULL, diastolic = NULL, extra = NULL "
    "WHERE cur.seq < excluded.seq RETURNING t_ms, (xmax = 0) AS inserted";

// Samples after the series' newest stored time: plain inserts. Without ON CONFLICT the
// server looks the key up once, on the insert itself, where the upsert looks first and
// then inserts (half the server's CPU per sample: decision 062). No RETURNING: every row
// given is inserted, or the statement fails.
const std::string kPgNewSamplesFull = "hh_derived_new_samples_full";
constexpr std::string_view kPgNewSamplesFullSql =
    "INSERT INTO samples (series_id, t_ms, timezone_offset, value, unit, seq, type, start_ms, end_ms, "
    "systolic, diastolic, extra) "
    "SELECT $1::bigint, x.t_ms, x.timezone_offset, x.value, x.unit, $2::bigint, x.type, x.start_ms, x.end_ms, "
    "x.systolic, x.diastolic, x.extra "
    "FROM unnest($3::bigint[], $4::bigint[], $5::jsonb[], $6::text[], $7::text[], $8::bigint[], $9::bigint[], "
    "$10::double precision[], $11::double precision[], $12::text[]) "
    "AS x(t_ms, timezone_offset, value, unit, type, start_ms, end_ms, systolic, diastolic, extra)";

const std::string kPgNewSamplesPlain = "hh_derived_new_samples_plain";
constexpr std::string_view kPgNewSamplesPlainSql =
    "INSERT INTO samples (series_id, t_ms, timezone_offset, value, unit, seq) "
    "SELECT $1::bigint, x.t_ms, x.timezone_offset, x.value, x.unit, $2::bigint "
    "FROM unnest($3::bigint[], $4::bigint[], $5::jsonb[], $6::text[]) AS x(t_ms, timezone_offset, value, unit)";

// Not prepared: planned each time for the series and the table as they are (read once per
// series while its shards stay with this session), so a plan made while the table was
// small (a sequential scan) is never kept for a large one.
constexpr std::string_view kPgNewestSampleSql = "SELECT max(t_ms) FROM samples WHERE series_id = $1::bigint";

constexpr std::string_view kUniqueViolation = "23505";

bool pg_strictly_increasing(const std::vector<rows::SampleRow>& samples) {
  for (size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].t_ms <= samples[i - 1].t_ms) return false;
  }
  return true;
}

}  // namespace

template <>
Result<PgSampleWriter> PgSampleWriter::create(pg::Connection& db) {
  for (const auto& [name, sql] : {std::pair{&kPgSeriesFind, kPgSeriesFindSql}, std::pair{&kPgSeries, kPgSeriesSql},
                                  std::pair{&kPgSourceId, kPgSourceIdSql},
                                  std::pair{&kPgAppId, kPgAppIdSql},
                                  std::pair{&kPgSamplesFull, kPgSamplesFullSql},
                                  std::pair{&kPgSamplesPlain, kPgSamplesPlainSql},
                                  std::pair{&kPgNewSamplesFull, kPgNewSamplesFullSql},
                                  std::pair{&kPgNewSamplesPlain, kPgNewSamplesPlainSql}}) {
    if (auto prepared = prepare_once(db, *name, sql); !prepared) return fail(prepared);
  }
  if (auto prepared = prepare_lock_new_ids(db); !prepared) return fail(prepared);
  PgSampleWriterState state;
  state.db = &db;
  return PgSampleWriter(std::move(state));
}

namespace {

using Series = SeriesIds::Series;

// The series of `batch`, from `series_ids` or else found or inserted (and remembered).
Result<Series*> pg_series_of(pg::Connection& db, SeriesIds& series_ids, const rows::SampleBatch& batch) {
  if (Series* found = series_ids.find(batch)) return found;
  pg::Params key;
  key.add(batch.user_id).add(batch.resource).add(batch.provider).add(batch.source_type);
  auto rows = db.run(kPgSeriesFind, key);
  if (!rows) return fail(rows);
  if (rows->empty()) {
    if (auto locked = lock_new_ids(db); !locked) return fail(locked);
    rows = db.run(kPgSeries, key);
    if (!rows) return fail(rows);
    if (rows->empty()) return fail("series: neither inserted nor found");
  }
  return &series_ids.add(batch, rows->integer(0, 0));
}

// `scalar`: a reused buffer.
Result<void> pg_keep_source_id(pg::Connection& db, std::string& scalar, Series& series,
                               const rows::SampleValue& source_id) {
  if (!SeriesIds::source_id_unknown(series, source_id)) return {};
  if (!json_scalar(scalar, source_id)) return {};
  auto done = db.run(kPgSourceId, pg::Params().add(series.id).add(std::string_view(scalar)));
  if (!done) return fail(done);
  SeriesIds::wrote_source_id(series, source_id);
  return {};
}

Result<void> pg_keep_app_id(pg::Connection& db, Series& series, std::string_view app_id) {
  if (!SeriesIds::app_id_unknown(series, app_id)) return {};
  auto done = db.run(kPgAppId, pg::Params().add(series.id).add(app_id));
  if (!done) return fail(done);
  SeriesIds::wrote_app_id(series, app_id);
  return {};
}

// The newest time stored for `series`, read once and then kept up to date by write().
Result<int64_t> pg_newest_t_ms(pg::Connection& db, Series& series) {
  if (series.newest_t_ms) return *series.newest_t_ms;
  auto newest = db.query_int(kPgNewestSampleSql, pg::Params().add(series.id));
  if (!newest) return fail(newest);
  series.newest_t_ms = newest->value_or(std::numeric_limits<int64_t>::min());
  return *series.newest_t_ms;
}

// Fills the arrays with the samples to send, those after `newest` (`after`) or the others;
// true when every one is plain. Of the samples sharing a timestamp the first stays
// (`s.taken`, when `check_taken`: cleared once per batch, as a timestamp falls on one side
// only).
bool fill_sample_arrays(PgSampleWriterState& s, const rows::SampleBatch& batch, int64_t newest, bool after,
                        bool check_taken) {
  for (ArrayLiteral* a : {&s.t_ms, &s.timezone_offset, &s.value, &s.unit, &s.type, &s.start_ms, &s.end_ms,
                          &s.systolic, &s.diastolic, &s.extra}) {
    a->clear();
  }
  s.sent.clear();
  bool plain = true;
  for (const rows::SampleRow& sample : batch.samples) {
    if ((sample.t_ms > newest) != after) continue;
    if (check_taken && !s.taken.insert(sample.t_ms).second) continue;
    s.sent.push_back(sample.t_ms);
    s.t_ms.integer(sample.t_ms);
    s.timezone_offset.integer(sample.timezone_offset);
    if (json_scalar(s.scalar, sample.value)) {
      s.value.text(std::string_view(s.scalar));
    } else {
      s.value.null();
    }
    s.unit.text(sample.unit);
    s.type.text(sample.type);
    s.start_ms.integer(sample.start_ms);
    s.end_ms.integer(sample.end_ms);
    s.systolic.real(sample.systolic);
    s.diastolic.real(sample.diastolic);
    if (sample.extra_json.empty()) {
      s.extra.null();
    } else {
      s.extra.text(std::string_view(sample.extra_json));
    }
    plain = plain && is_plain_sample(sample);
  }
  return plain;
}

// The arrays filled last, as parameters of the statement `plain` picks.
pg::Params sample_params(PgSampleWriterState& s, int64_t series_id, int64_t seq, bool plain) {
  pg::Params params;
  params.add(series_id).add(seq).add(s.t_ms.finish());
  for (ArrayLiteral* column : {&s.timezone_offset, &s.value, &s.unit}) column->add_to(params);
  if (!plain) {
    for (ArrayLiteral* column : {&s.type, &s.start_ms, &s.end_ms, &s.systolic, &s.diastolic, &s.extra}) {
      column->add_to(params);
    }
  }
  return params;
}

// Sends the samples at or before the series' newest time to the upsert (latest wins; it
// says per sample inserted, replaced or stale) and those after it to the plain insert, in
// one round trip; how many were inserted or replaced.
Result<int64_t> pg_write_samples(PgSampleWriterState& s, const rows::SampleBatch& batch, int64_t seq,
                                 int64_t newest, Series& series, SeriesChange& change) {
  auto pipeline = pg::Pipeline::begin(*s.db);
  if (!pipeline) return fail(pipeline);
  const bool check_taken = !pg_strictly_increasing(batch.samples);
  s.taken.clear();
  // Each statement's parameters are copied out when it is sent: the arrays are then reused.
  const bool stored_plain = fill_sample_arrays(s, batch, newest, false, check_taken);
  const bool upserting = !s.sent.empty();
  if (upserting) {
    auto sent = pipeline->send_prepared(stored_plain ? kPgSamplesPlain : kPgSamplesFull,
                                        sample_params(s, series.id, seq, stored_plain));
    if (!sent) return fail(sent);
  }
  const bool new_plain = fill_sample_arrays(s, batch, newest, true, check_taken);  // s.sent: the new ones' times
  if (!s.sent.empty()) {
    auto sent = pipeline->send_prepared(new_plain ? kPgNewSamplesPlain : kPgNewSamplesFull,
                                        sample_params(s, series.id, seq, new_plain));
    if (!sent) return fail(sent);
  }
  auto results = pipeline->finish();
  if (!results) {
    // Only a newest time that is not the stored one can make a new sample's key taken (no
    // other session writes the series while this one holds its shard; the upsert cannot
    // meet a key): not the delivery's fault. The processor rolls back, forgets the cache,
    // and applies the step again.
    if (s.db->last_sqlstate() == kUniqueViolation) {
      return fail(ErrorKind::busy, "samples: a sample after the series' newest time known here was stored "
                                   "already (the step is applied again, its series read afresh): " +
                                       results.error());
    }
    return fail(results);
  }
  int64_t written = 0;
  if (upserting) {
    const pg::Rows& rows = results->front();
    for (int i = 0; i < rows.size(); ++i) note_sample(change, rows.integer(i, 0), rows.boolean(i, 1));
    written += rows.size();
  }
  for (const int64_t t_ms : s.sent) {
    note_sample(change, t_ms, true);
    series.newest_t_ms = std::max(*series.newest_t_ms, t_ms);
  }
  return written + static_cast<int64_t>(s.sent.size());
}

}  // namespace

template <>
Result<int64_t> PgSampleWriter::write(const rows::SampleBatch& batch, int64_t seq, std::vector<SeriesChange>& changes) {
  if (batch.samples.empty()) return int64_t{0};
  PgSampleWriterState& s = state_;
  auto series_entry = pg_series_of(*s.db, series_ids_, batch);
  if (!series_entry) return fail(series_entry);
  Series& entry = **series_entry;
  if (batch.source_id.index() != 0) {
    if (auto kept = pg_keep_source_id(*s.db, s.scalar, entry, batch.source_id); !kept) {
      return fail(kept);
    }
  }
  if (batch.app_id) {  // the latest delivery naming an App ID wins; one without leaves it
    if (auto kept = pg_keep_app_id(*s.db, entry, *batch.app_id); !kept) return fail(kept);
  }
  SeriesChange& change = series_change_of(changes, entry.id, &entry.row_key, batch.user_id.size());
  auto newest = pg_newest_t_ms(*s.db, entry);
  if (!newest) return fail(newest);
  return pg_write_samples(s, batch, seq, *newest, entry, change);
}

}  // namespace hh::store
