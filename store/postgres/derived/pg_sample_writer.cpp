#include "store/postgres/derived/pg_sample_writer.h"

#include <algorithm>

namespace hh::store {
namespace {

// Finds the series, or inserts it, in one round trip. Looked up first so that a series
// that exists takes no identity value (an INSERT … ON CONFLICT DO NOTHING would take one
// each time and leave gaps SQLite's ids do not have).
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

bool pg_strictly_increasing(const std::vector<rows::SampleRow>& samples) {
  for (size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].t_ms <= samples[i - 1].t_ms) return false;
  }
  return true;
}

}  // namespace

Result<PgSampleWriter> PgSampleWriter::create(pg::Connection& db) {
  for (const auto& [name, sql] : {std::pair{&kPgSeries, kPgSeriesSql}, std::pair{&kPgSourceId, kPgSourceIdSql},
                                  std::pair{&kPgAppId, kPgAppIdSql},
                                  std::pair{&kPgSamplesFull, kPgSamplesFullSql},
                                  std::pair{&kPgSamplesPlain, kPgSamplesPlainSql}}) {
    if (auto prepared = prepare_once(db, *name, sql); !prepared) return fail(prepared.error_kind(), prepared.error());
  }
  return PgSampleWriter(db);
}

Result<PgSampleWriter::Series*> PgSampleWriter::series(const rows::SampleBatch& batch) {
  if (Series* found = series_ids_.find(batch)) return found;
  auto rows = db_->run(kPgSeries, pg::Params()
                                      .add(batch.user_id)
                                      .add(batch.resource)
                                      .add(batch.provider)
                                      .add(batch.source_type));
  if (!rows) return fail(rows.error_kind(), rows.error());
  if (rows->empty()) return fail("series: neither inserted nor found");
  return &series_ids_.add(batch, rows->integer(0, 0));
}

Result<void> PgSampleWriter::keep_source_id(Series& series, const rows::SampleValue& source_id) {
  if (!SeriesIds::source_id_unknown(series, source_id)) return {};
  if (!json_scalar(scalar_, source_id)) return {};
  auto done = db_->run(kPgSourceId, pg::Params().add(series.id).add(std::string_view(scalar_)));
  if (!done) return fail(done.error_kind(), done.error());
  SeriesIds::wrote_source_id(series, source_id);
  return {};
}

Result<void> PgSampleWriter::keep_app_id(Series& series, std::string_view app_id) {
  if (!SeriesIds::app_id_unknown(series, app_id)) return {};
  auto done = db_->run(kPgAppId, pg::Params().add(series.id).add(app_id));
  if (!done) return fail(done.error_kind(), done.error());
  SeriesIds::wrote_app_id(series, app_id);
  return {};
}

bool PgSampleWriter::fill_arrays(const rows::SampleBatch& batch) {
  for (ArrayLiteral* a : {&t_ms_, &timezone_offset_, &value_, &unit_, &type_, &start_ms_, &end_ms_, &systolic_,
                          &diastolic_, &extra_}) {
    a->clear();
  }
  const bool check_taken = !pg_strictly_increasing(batch.samples);
  taken_.clear();
  bool plain = true;
  for (const rows::SampleRow& sample : batch.samples) {
    if (check_taken && !taken_.insert(sample.t_ms).second) continue;  // the first of a timestamp stays
    t_ms_.integer(sample.t_ms);
    timezone_offset_.integer(sample.timezone_offset);
    if (json_scalar(scalar_, sample.value)) {
      value_.text(std::string_view(scalar_));
    } else {
      value_.null();
    }
    unit_.text(sample.unit);
    type_.text(sample.type);
    start_ms_.integer(sample.start_ms);
    end_ms_.integer(sample.end_ms);
    systolic_.real(sample.systolic);
    diastolic_.real(sample.diastolic);
    if (sample.extra_json.empty()) {
      extra_.null();
    } else {
      extra_.text(std::string_view(sample.extra_json));
    }
    plain = plain && is_plain_sample(sample);
  }
  return plain;
}

Result<int64_t> PgSampleWriter::write(const rows::SampleBatch& batch, int64_t seq,
                                      std::vector<SeriesChange>& changes) {
  if (batch.samples.empty()) return int64_t{0};
  auto series_entry = series(batch);
  if (!series_entry) return fail(series_entry.error_kind(), series_entry.error());
  Series& entry = **series_entry;
  if (batch.source_id.index() != 0) {
    if (auto kept = keep_source_id(entry, batch.source_id); !kept) return fail(kept.error_kind(), kept.error());
  }
  if (batch.app_id) {  // the latest delivery naming an App ID wins; one without leaves it
    if (auto kept = keep_app_id(entry, *batch.app_id); !kept) return fail(kept.error_kind(), kept.error());
  }
  SeriesChange& change = series_change_of(changes, entry.id, &entry.row_key, batch.user_id.size());

  const bool plain = fill_arrays(batch);
  pg::Params params;
  params.add(entry.id).add(seq).add(t_ms_.finish()).add(timezone_offset_.finish()).add(value_.finish());
  params.add(unit_.finish());
  if (!plain) {
    params.add(type_.finish()).add(start_ms_.finish()).add(end_ms_.finish()).add(systolic_.finish());
    params.add(diastolic_.finish()).add(extra_.finish());
  }
  auto rows = db_->run(plain ? kPgSamplesPlain : kPgSamplesFull, params);
  if (!rows) return fail(rows.error_kind(), rows.error());
  for (int i = 0; i < rows->size(); ++i) note_sample(change, rows->integer(i, 0), rows->boolean(i, 1));
  return static_cast<int64_t>(rows->size());
}

}  // namespace hh::store
