#include "store/sqlite/derived/sample_writer.h"

#include <algorithm>

namespace hh::store {

template <>
Result<SqliteSampleWriter> SqliteSampleWriter::create(sqlite::Connection& db) {
  auto insert_series = db.prepare(
      "INSERT INTO series (user_id, resource, provider, source_type) VALUES (?1, ?2, ?3, ?4) "
      "ON CONFLICT DO NOTHING RETURNING series_id");
  if (!insert_series) return fail(insert_series);
  auto find_series = db.prepare(
      "SELECT series_id FROM series WHERE user_id = ?1 AND resource = ?2 AND provider = ?3 AND source_type = ?4");
  if (!find_series) return fail(find_series);
  auto set_source_id = db.prepare("UPDATE series SET source_id = ?2 WHERE series_id = ?1 AND source_id IS NOT ?2");
  if (!set_source_id) return fail(set_source_id);
  auto set_app_id = db.prepare("UPDATE series SET app_id = ?2 WHERE series_id = ?1 AND app_id IS NOT ?2");
  if (!set_app_id) return fail(set_app_id);
  auto stored_in_span = db.prepare(
      "SELECT t_ms FROM samples WHERE series_id = ?1 AND t_ms BETWEEN ?2 AND ?3 ORDER BY t_ms LIMIT ?4");
  if (!stored_in_span) return fail(stored_in_span);
  // latest_wins.h: insert, and only when the key exists, replace an older version.
  // A replacement replaces the whole sample: `plain` sets the columns it does not bind to NULL.
  auto full_insert = db.prepare(
      "INSERT INTO samples (series_id, t_ms, timezone_offset, value, unit, seq, type, start_ms, end_ms, systolic, "
      "diastolic, extra) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT DO NOTHING");
  if (!full_insert) return fail(full_insert);
  auto full_update = db.prepare(
      "UPDATE samples SET timezone_offset = ?3, value = ?4, unit = ?5, seq = ?6, type = ?7, start_ms = ?8, "
      "end_ms = ?9, systolic = ?10, diastolic = ?11, extra = ?12 WHERE series_id = ?1 AND t_ms = ?2 AND seq < ?6");
  if (!full_update) return fail(full_update);
  auto plain_insert = db.prepare(
      "INSERT INTO samples (series_id, t_ms, timezone_offset, value, unit, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
      "ON CONFLICT DO NOTHING");
  if (!plain_insert) return fail(plain_insert);
  auto plain_update = db.prepare(
      "UPDATE samples SET timezone_offset = ?3, value = ?4, unit = ?5, seq = ?6, type = NULL, start_ms = NULL, "
      "end_ms = NULL, systolic = NULL, diastolic = NULL, extra = NULL WHERE series_id = ?1 AND t_ms = ?2 AND seq < ?6");
  if (!plain_update) return fail(plain_update);
  using Statements = SqliteSampleWriterState::Statements;
  return SqliteSampleWriter(SqliteSampleWriterState{&db, std::move(*stored_in_span), {}, std::move(*insert_series),
                                                    std::move(*find_series), std::move(*set_source_id),
                                                    std::move(*set_app_id),
                                                    Statements{std::move(*full_insert), std::move(*full_update)},
                                                    Statements{std::move(*plain_insert), std::move(*plain_update)}});
}

namespace {

using Series = SeriesIds::Series;

// The series of `batch`, from `series_ids` or else found or inserted (and remembered).
Result<Series*> sqlite_series_of(SqliteSampleWriterState& s, SeriesIds& series_ids, const rows::SampleBatch& batch) {
  if (Series* found = series_ids.find(batch)) return found;

  auto bind_parts = [&](sqlite::Statement& statement) {
    statement.bind_static(1, batch.user_id).bind_static(2, batch.resource).bind_static(3, batch.provider)
        .bind_static(4, batch.source_type);
  };
  bind_parts(s.insert_series);
  auto inserted = s.insert_series.step();
  if (!inserted) return fail(inserted);
  int64_t id = 0;
  if (*inserted) {
    id = s.insert_series.column_int(0);
    // Run to completion so the insert is finished before the reset.
    if (auto rest = s.insert_series.run(); !rest) return fail(rest);
  } else {
    s.insert_series.reset();
    bind_parts(s.find_series);
    auto found = s.find_series.step();
    if (!found) return fail(found);
    if (!*found) {
      s.find_series.reset();
      return fail("series: neither inserted nor found");
    }
    id = s.find_series.column_int(0);
    s.find_series.reset();
  }
  return &series_ids.add(batch, id);
}

Result<void> sqlite_keep_source_id(sqlite::Statement& set_source_id, Series& series,
                                   const rows::SampleValue& source_id) {
  if (!SeriesIds::source_id_unknown(series, source_id)) return {};
  set_source_id.bind(1, series.id);
  switch (source_id.index()) {
    case 1: set_source_id.bind(2, std::get<int64_t>(source_id)); break;
    case 2: set_source_id.bind(2, std::get<double>(source_id)); break;
    case 3: set_source_id.bind_static(2, std::get<std::string_view>(source_id)); break;
    default: set_source_id.reset(); return {};
  }
  if (auto done = set_source_id.run(); !done) return fail(done);
  SeriesIds::wrote_source_id(series, source_id);
  return {};
}

Result<void> sqlite_keep_app_id(sqlite::Statement& set_app_id, Series& series, std::string_view app_id) {
  if (!SeriesIds::app_id_unknown(series, app_id)) return {};
  set_app_id.bind(1, series.id).bind_static(2, app_id);
  if (auto done = set_app_id.run(); !done) return fail(done);
  SeriesIds::wrote_app_id(series, app_id);
  return {};
}

// Raw binds: the hottest loop of a rebuild. Text is bound static (the parser's views stay
// live until the statement is reset) and every parameter is bound each time, so the
// bindings need no clearing.
void bind_int(sqlite3_stmt* s, int index, std::optional<int64_t> value) {
  if (value) {
    sqlite3_bind_int64(s, index, *value);
  } else {
    sqlite3_bind_null(s, index);
  }
}
void bind_real(sqlite3_stmt* s, int index, std::optional<double> value) {
  if (value) {
    sqlite3_bind_double(s, index, *value);
  } else {
    sqlite3_bind_null(s, index);
  }
}
void bind_text(sqlite3_stmt* s, int index, std::optional<std::string_view> value) {
  if (value) {
    sqlite3_bind_text64(s, index, value->data(), value->size(), SQLITE_STATIC, SQLITE_UTF8);
  } else {
    sqlite3_bind_null(s, index);
  }
}

// Binds and runs one statement; the number of rows it changed (0 or 1).
Result<int> run_sample(sqlite::Connection& db, sqlite3_stmt* s, bool plain, int64_t series_id,
                       const rows::SampleRow& sample, int64_t seq) {
  sqlite3_bind_int64(s, 1, series_id);
  sqlite3_bind_int64(s, 2, sample.t_ms);
  bind_int(s, 3, sample.timezone_offset);
  switch (sample.value.index()) {
    case 1: sqlite3_bind_int64(s, 4, std::get<int64_t>(sample.value)); break;
    case 2: sqlite3_bind_double(s, 4, std::get<double>(sample.value)); break;
    case 3: bind_text(s, 4, std::get<std::string_view>(sample.value)); break;
    default: sqlite3_bind_null(s, 4); break;
  }
  bind_text(s, 5, sample.unit);
  sqlite3_bind_int64(s, 6, seq);
  if (!plain) {
    bind_text(s, 7, sample.type);
    bind_int(s, 8, sample.start_ms);
    bind_int(s, 9, sample.end_ms);
    bind_real(s, 10, sample.systolic);
    bind_real(s, 11, sample.diastolic);
    bind_text(s, 12, sample.extra_json.empty() ? std::nullopt : std::optional<std::string_view>(sample.extra_json));
  }
  const int rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) {
    // Reading the message before the reset keeps the statement's own error, and the
    // connection's error code (DerivedWriter classifies it) is set by the reset.
    std::string error = sqlite3_errmsg(db.get());
    sqlite3_reset(s);
    return fail(error);
  }
  sqlite3_reset(s);
  return static_cast<int>(sqlite3_changes(db.get()));
}

// A batch this small reads nothing first: a failed insert costs about what the read does,
// and most batches bring new timestamps only.
constexpr size_t kSpanReadMinSamples = 8;

// Reads into `s.stored` the timestamps of `series_id` stored within the span of `samples`;
// false when the batch is small, or when more are stored there than the batch's count and
// a few (a sparse batch over a dense series: reading them would cost more than it saves):
// the caller then tries each sample as an insert first.
Result<bool> read_stored_in_span(SqliteSampleWriterState& s, int64_t series_id,
                                 const std::vector<rows::SampleRow>& samples) {
  if (samples.size() < kSpanReadMinSamples) return false;
  const auto [first, last] = std::minmax_element(samples.begin(), samples.end(),
                                                 [](const auto& a, const auto& b) { return a.t_ms < b.t_ms; });
  const size_t limit = samples.size() + 16;
  s.stored.clear();
  s.stored.reserve(limit + 1);  // nothing can throw between the first step and the reset
  sqlite3_stmt* statement = s.stored_in_span.get();
  int rc = SQLITE_OK;
  for (const auto& [index, value] : {std::pair{1, series_id}, std::pair{2, first->t_ms}, std::pair{3, last->t_ms},
                                     std::pair{4, static_cast<int64_t>(limit + 1)}}) {
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(statement, index, value);
  }
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) s.stored.push_back(sqlite3_column_int64(statement, 0));
  }
  if (rc != SQLITE_DONE) {
    std::string error = sqlite3_errmsg(s.db->get());
    sqlite3_reset(statement);
    return fail(error);
  }
  sqlite3_reset(statement);
  return s.stored.size() <= limit;
}

}  // namespace

template <>
Result<int64_t> SqliteSampleWriter::write(const rows::SampleBatch& batch, int64_t seq,
                                          std::vector<SeriesChange>& changes) {
  if (batch.samples.empty()) return int64_t{0};
  SqliteSampleWriterState& s = state_;
  auto series_entry = sqlite_series_of(s, series_ids_, batch);
  if (!series_entry) return fail(series_entry);
  Series& entry = **series_entry;
  if (batch.source_id.index() != 0) {
    if (auto kept = sqlite_keep_source_id(s.set_source_id, entry, batch.source_id); !kept) return fail(kept);
  }
  if (batch.app_id) {  // the latest delivery naming an App ID wins; one without leaves it
    if (auto kept = sqlite_keep_app_id(s.set_app_id, entry, *batch.app_id); !kept) return fail(kept);
  }

  SeriesChange& change = series_change_of(changes, entry.id, &entry.row_key, batch.user_id.size());
  auto stored_known = read_stored_in_span(s, entry.id, batch.samples);
  if (!stored_known) return fail(stored_known);
  int64_t written = 0;
  for (const rows::SampleRow& sample : batch.samples) {
    const bool plain = is_plain_sample(sample);
    SqliteSampleWriterState::Statements& statements = plain ? s.plain : s.full;
    // Known stored before this batch: straight to the update. Otherwise the insert, which
    // does nothing for a timestamp the batch itself already wrote (the first one stays).
    const bool stored = *stored_known && std::binary_search(s.stored.begin(), s.stored.end(), sample.t_ms);
    int inserted = 0;
    if (!stored) {
      auto run = run_sample(*s.db, statements.insert.get(), plain, entry.id, sample, seq);
      if (!run) return fail(run);
      inserted = *run;
      if (inserted == 0 && *stored_known) continue;  // a repeat within this batch
    }
    if (inserted == 0) {
      auto updated = run_sample(*s.db, statements.update.get(), plain, entry.id, sample, seq);
      if (!updated) return fail(updated);
      if (*updated == 0) continue;  // an equal or later version is stored
    }
    ++written;
    note_sample(change, sample.t_ms, inserted > 0);
  }
  return written;
}

}  // namespace hh::store
