#include "store/postgres/read/pg_sample_query.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>

namespace hh::store::pgread {
namespace {

constexpr int64_t kPgEarliestSample = std::numeric_limits<int64_t>::min();
constexpr int64_t kPgLatestSample = std::numeric_limits<int64_t>::max();
constexpr int kFirstBatchRows = 32;  // a page is short: most series give few of its rows

// A series and its identity (store/read_query_common.h's series columns 0-7, source_id at 5
// left NULL) with source_id as jsonb at 8 (its type) and 9 (its text).
constexpr std::string_view kPgSeriesColumns =
    "SELECT s.series_id, s.user_id, s.resource, s.provider, s.source_type, NULL, u.client_user_id, p.name, "
    "jsonb_typeof(s.source_id), s.source_id #>> '{}' ";
constexpr std::string_view kPgSeriesJoins =
    "FROM series AS s LEFT JOIN users AS u ON u.user_id = s.user_id LEFT JOIN providers AS p ON p.slug = s.provider ";

// A sample's columns (read_sample_columns: value at +2 is its text) and the value's type
// at +11.
constexpr std::string_view kPgSampleColumns =
    "x.t_ms, x.timezone_offset, x.value #>> '{}', x.unit, x.type, x.start_ms, x.end_ms, x.systolic, x.diastolic, "
    "x.extra, x.seq, jsonb_typeof(x.value) ";
constexpr int kPgExportSampleColumn = 10;

// Text keys sort bytewise, as SQLite's BINARY collation does, whatever the database's.
const std::string kPgSamplesBySeries = std::string(kPgSeriesColumns) + ", " + std::string(kPgSampleColumns) +
                                       std::string(kPgSeriesJoins) +
                                       "JOIN samples AS x ON x.series_id = s.series_id "
                                       "AND x.t_ms >= $5 AND x.t_ms < $6 "
                                       "WHERE ($1::text IS NULL OR s.user_id = $1) "
                                       "AND ($2::text IS NULL OR s.resource = $2) "
                                       "AND ($3::text IS NULL OR s.provider = $3) "
                                       "AND ($4::text IS NULL OR s.source_type = $4) "
                                       "ORDER BY s.user_id COLLATE \"C\", s.resource COLLATE \"C\", "
                                       "s.provider COLLATE \"C\", s.source_type COLLATE \"C\", x.t_ms";

// One user's series of one resource, at most one more than may be merged.
const std::string kPgUserSeries = std::string(kPgSeriesColumns) + std::string(kPgSeriesJoins) +
                                  "WHERE s.user_id = $1 AND s.resource = $2 "
                                  "AND ($3::text IS NULL OR s.provider = $3) "
                                  "AND ($4::text IS NULL OR s.source_type = $4) ORDER BY s.series_id LIMIT $5";

// A batch of one series' samples in [from, until), along the primary key.
const std::string kPgSeriesBatch = "SELECT " + std::string(kPgSampleColumns) +
                                   "FROM samples AS x WHERE x.series_id = $1 AND x.t_ms >= $2 AND x.t_ms < $3 "
                                   "ORDER BY x.t_ms LIMIT $4";

// A jsonb number's text: an integer unless it has a fraction or an exponent (or does not
// fit 64 bits), as the writer stored what it was sent.
void read_json_number(std::string_view text, std::optional<int64_t>& integer, double& real) {
  integer.reset();
  if (text.find_first_of(".eE") == std::string_view::npos) {
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) {
      integer = value;
      return;
    }
  }
  real = 0;
  std::from_chars(text.data(), text.data() + text.size(), real);
}

// series.source_id (jsonb, columns 8-9): an integer as the service sends it, else its text.
void read_pg_source_id(const ResultRow& s, std::optional<int64_t>& id, std::optional<std::string_view>& text) {
  id.reset();
  text = s.column_optional_text(9);
  if (!text || s.column_text(8) != "number") return;
  double unused = 0;
  read_json_number(*text, id, unused);
  if (id) text.reset();
}

}  // namespace

void read_json_value(std::optional<std::string_view> type, std::optional<std::string_view> text, StoredSample& row) {
  if (!type || !text || *type == "null") {
    row.value_type = ValueType::null;
    return;
  }
  if (*type == "number") {
    std::optional<int64_t> integer;
    read_json_number(*text, integer, row.value_real);
    row.value_type = integer ? ValueType::integer : ValueType::real;
    if (integer) row.value_integer = *integer;
    return;
  }
  row.value_type = ValueType::text;  // a string (or, never written, a boolean)
  row.value_text = *text;
}

void PgSampleQuery::release_hold() {
  if (held_ && hold_generation_ == session_->generation()) session_->release();
  held_ = false;
}

void PgSampleQuery::finish() {
  export_.close();
  release_hold();
  mode_ = SampleListing::idle;
  heads_.clear();
  to_step_.reset();
}

Result<void> PgSampleQuery::start_by_series(const SampleFilter& filter) {
  finish();
  pg::Params params;
  params.add(filter.user_id).add(filter.resource).add(filter.provider).add(filter.source_type);
  params.add(filter.since_ms.value_or(kPgEarliestSample)).add(filter.until_ms.value_or(kPgLatestSample));
  if (auto opened = export_.open(kPgSamplesBySeries, params); !opened) return opened;
  mode_ = SampleListing::by_series;
  return {};
}

Result<void> PgSampleQuery::start_by_time(const SampleFilter& filter, std::optional<SamplePosition> after) {
  finish();
  if (!filter.user_id || !filter.resource) return fail(std::string(kSamplePageNeedsUserAndResource));
  if (auto held = session_->hold(); !held) return held;
  held_ = true;
  hold_generation_ = session_->generation();
  const int64_t since_ms = filter.since_ms.value_or(kPgEarliestSample);
  until_ms_ = filter.until_ms.value_or(kPgLatestSample);
  pg::Params params;
  params.add(filter.user_id).add(filter.resource).add(filter.provider).add(filter.source_type);
  params.add(static_cast<int64_t>(kMaxMergedSeries + 1));
  auto series = session_->query(kPgUserSeries, params);
  if (!series) {
    finish();
    return fail(series);
  }
  if (static_cast<size_t>(series->size()) > kMaxMergedSeries) {
    finish();
    return fail(too_many_series_error());
  }
  heads_.resize(static_cast<size_t>(series->size()));
  for (int i = 0; i < series->size(); ++i) {
    const ResultRow s{&*series, i, nullptr};
    Head& head = heads_[static_cast<size_t>(i)];
    read_series_names(s, head);
    std::optional<std::string_view> source_id_text;
    read_pg_source_id(s, head.source_id, source_id_text);
    if (source_id_text) head.source_id_text = std::string(*source_id_text);
    head.from_ms = sample_resume_ms(head.series_id, since_ms, after);
    head.batch_rows = kFirstBatchRows;
  }
  // Every series' first batch in one round trip.
  std::vector<pg::Params> firsts;
  std::vector<size_t> asked;
  firsts.reserve(heads_.size());
  for (size_t i = 0; i < heads_.size(); ++i) {
    if (!wants_batch(heads_[i])) continue;
    firsts.push_back(batch_params(heads_[i]));
    asked.push_back(i);
  }
  if (!firsts.empty()) {
    auto batches = session_->query_each(kPgSeriesBatch, firsts);
    if (!batches) {
      finish();
      return fail(batches);
    }
    for (size_t k = 0; k < asked.size(); ++k) take_batch(heads_[asked[k]], std::move((*batches)[k]));
  }
  mode_ = SampleListing::by_time;
  return {};
}

bool PgSampleQuery::wants_batch(Head& head) const {
  if (head.has_row() || head.done) return false;
  if (head.from_ms >= until_ms_) head.done = true;
  return !head.done;
}

pg::Params PgSampleQuery::batch_params(const Head& head) const {
  pg::Params params;
  params.add(head.series_id).add(head.from_ms).add(until_ms_).add(int64_t{head.batch_rows});
  return params;
}

Result<void> PgSampleQuery::fill(Head& head) {
  if (!wants_batch(head)) return {};
  auto batch = session_->query(kPgSeriesBatch, batch_params(head));
  if (!batch) return fail(batch);
  take_batch(head, std::move(*batch));
  return {};
}

void PgSampleQuery::take_batch(Head& head, pg::Rows batch) {
  head.batch = std::move(batch);
  head.index = 0;
  head.done = head.batch.size() < head.batch_rows;
  if (head.batch.size() > 0) {
    const int64_t last = head.batch.integer(head.batch.size() - 1, 0);
    head.done = head.done || last == kPgLatestSample;
    head.from_ms = last == kPgLatestSample ? last : last + 1;
  }
  head.batch_rows = std::min(head.batch_rows * 4, kFetchRows);
}

Result<bool> PgSampleQuery::next(StoredSample& row) {
  switch (mode_) {
    case SampleListing::idle: return false;
    case SampleListing::by_series: {
      ResultRow s;
      auto has_row = export_.next(s);
      if (!has_row || !*has_row) {
        if (has_row) mode_ = SampleListing::idle;
        return has_row;
      }
      read_series_row(s, row);
      read_pg_source_id(s, row.source_id, row.source_id_text);
      read_sample_columns(s, kPgExportSampleColumn, row);
      read_json_value(s.column_optional_text(kPgExportSampleColumn + 11),
                      s.column_optional_text(kPgExportSampleColumn + 2), row);
      return true;
    }
    case SampleListing::by_time: return next_by_time(row);
  }
  return false;
}

Result<bool> PgSampleQuery::next_by_time(StoredSample& row) {
  if (to_step_) {
    Head& head = heads_[*to_step_];
    ++head.index;
    // The row handed out last views this batch: it may be replaced now (the next call).
    if (auto filled = fill(head); !filled) {
      finish();
      return fail(filled);
    }
    to_step_.reset();
  }
  const std::optional<size_t> best = earliest_head(
      heads_, [](const Head& head) { return head.has_row(); },
      [](const Head& head) { return head.batch.integer(head.index, 0); });
  if (!best) {
    release_hold();
    mode_ = SampleListing::idle;  // the heads stay: the last row handed out views them
    return false;
  }
  const Head& head = heads_[*best];
  head.name(row);
  const ResultRow s{&head.batch, head.index, nullptr};
  read_sample_columns(s, 0, row);
  read_json_value(s.column_optional_text(11), s.column_optional_text(2), row);
  to_step_ = best;
  return true;
}

}  // namespace hh::store::pgread
