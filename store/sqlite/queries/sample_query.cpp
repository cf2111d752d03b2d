#include "store/sqlite/queries/sample_query.h"

#include <limits>

#include "store/read_query_common.h"

namespace hh::store {
namespace {

constexpr int64_t kEarliestSample = std::numeric_limits<int64_t>::min();
constexpr int64_t kLatestSample = std::numeric_limits<int64_t>::max();
// A series and its identity columns: columns 0-4 name it, 5 source_id, 6 client_user_id,
// 7 provider name. One primary-key lookup in users and providers per series.
constexpr std::string_view kSeriesColumns =
    "SELECT s.series_id, s.user_id, s.resource, s.provider, s.source_type, s.source_id, u.client_user_id, p.name "
    "FROM series AS s LEFT JOIN users AS u ON u.user_id = s.user_id LEFT JOIN providers AS p ON p.slug = s.provider ";

// Every series matching the optional filters, in name order (the unique index's order).
const std::string kAllSeries = std::string(kSeriesColumns) +
    "WHERE (?1 IS NULL OR s.user_id = ?1) AND (?2 IS NULL OR s.resource = ?2) "
    "AND (?3 IS NULL OR s.provider = ?3) AND (?4 IS NULL OR s.source_type = ?4) "
    "ORDER BY s.user_id, s.resource, s.provider, s.source_type";

// One user's series of one resource (an index lookup).
const std::string kUserSeries = std::string(kSeriesColumns) +
    "WHERE s.user_id = ?1 AND s.resource = ?2 "
    "AND (?3 IS NULL OR s.provider = ?3) AND (?4 IS NULL OR s.source_type = ?4) "
    "ORDER BY s.series_id";

// Export of one user's resource: the series come from the unique (user_id, resource, …)
// index, in the same order as kAllSeries (whose IS NULL tests read every series).
const std::string kUserResourceSeries = std::string(kSeriesColumns) +
    "WHERE s.user_id = ?1 AND s.resource = ?2 "
    "AND (?3 IS NULL OR s.provider = ?3) AND (?4 IS NULL OR s.source_type = ?4) "
    "ORDER BY s.user_id, s.resource, s.provider, s.source_type";

enum SeriesStatement : size_t { all_series, user_series, user_resource_series };

// One series' samples in [from, until), along the primary key (series_id, t_ms).
constexpr std::string_view kSeriesSamples =
    "SELECT t_ms, timezone_offset, value, unit, type, start_ms, end_ms, systolic, diastolic, extra, seq "
    "FROM samples WHERE series_id = ?1 AND t_ms >= ?2 AND t_ms < ?3 ORDER BY t_ms";

// source_id (series column 5) as SQLite keeps it: an integer as the service sends it, else
// its text.
void read_source_id(const sqlite::Statement& s, std::optional<int64_t>& id, std::optional<std::string_view>& text) {
  id.reset();
  text.reset();
  if (s.column_type(5) == SQLITE_INTEGER) {
    id = s.column_int(5);
  } else {
    text = s.column_optional_text(5);
  }
}

// Columns of kSeriesSamples into `row` (the series fields are set by the caller).
void read_sample(const sqlite::Statement& s, StoredSample& row) {
  read_sample_columns(s, 0, row);
  switch (s.column_type(2)) {
    case SQLITE_NULL: row.value_type = ValueType::null; break;
    case SQLITE_INTEGER:
      row.value_type = ValueType::integer;
      row.value_integer = s.column_int(2);
      break;
    case SQLITE_FLOAT:
      row.value_type = ValueType::real;
      row.value_real = s.column_double(2);
      break;
    default:  // text (a blob would be read as its bytes)
      row.value_type = ValueType::text;
      row.value_text = s.column_text(2);
  }
}

}  // namespace

SqliteSampleQuery::SqliteSampleQuery(sqlite::Connection& db) : db_(&db), series_(db, std::array<std::string_view, 3>{kAllSeries, kUserSeries, kUserResourceSeries}) {}

Result<sqlite::Statement*> SqliteSampleQuery::samples_statement(size_t index) {
  while (samples_.size() <= index) {
    auto prepared = db_->prepare(kSeriesSamples);
    if (!prepared) return fail(prepared);
    samples_.push_back(std::move(*prepared));
  }
  return &samples_[index];
}

void SqliteSampleQuery::finish() {
  series_.finish();
  for (auto& s : samples_) s.reset();
  mode_ = SampleListing::idle;
  series_listing_ = nullptr;
  in_series_ = false;
  heads_.clear();
  to_step_.reset();
}

Result<void> SqliteSampleQuery::start_by_series(const SampleFilter& filter) {
  finish();
  auto series = series_.get(filter.user_id && filter.resource ? user_resource_series : all_series);
  if (!series) return fail(series);
  if (auto samples = samples_statement(0); !samples) return fail(samples);
  since_ms_ = filter.since_ms.value_or(kEarliestSample);
  until_ms_ = filter.until_ms.value_or(kLatestSample);
  (*series)->bind(1, filter.user_id).bind(2, filter.resource).bind(3, filter.provider).bind(4, filter.source_type);
  series_listing_ = *series;
  mode_ = SampleListing::by_series;
  return {};
}

Result<void> SqliteSampleQuery::start_by_time(const SampleFilter& filter, std::optional<SamplePosition> after) {
  finish();
  if (!filter.user_id || !filter.resource) return fail(std::string(kSamplePageNeedsUserAndResource));
  auto series = series_.get(user_series);
  if (!series) return fail(series);
  since_ms_ = filter.since_ms.value_or(kEarliestSample);
  until_ms_ = filter.until_ms.value_or(kLatestSample);
  (*series)->bind(1, filter.user_id).bind(2, filter.resource).bind(3, filter.provider).bind(4, filter.source_type);
  auto listed = (*series)->for_each_row([this](const sqlite::Statement& s) -> Result<void> {
    if (heads_.size() == kMaxMergedSeries) {
      return fail(too_many_series_error());
    }
    Head head;
    read_series_names(s, head);
    std::optional<std::string_view> source_id_text;
    read_source_id(s, head.source_id, source_id_text);
    if (source_id_text) head.source_id_text = std::string(*source_id_text);
    head.statement = heads_.size();
    heads_.push_back(std::move(head));
    return {};
  });
  if (!listed) {
    heads_.clear();
    return fail(listed);
  }
  for (auto& head : heads_) {
    auto statement = samples_statement(head.statement);
    if (!statement) return fail(statement);
    const int64_t from = sample_resume_ms(head.series_id, since_ms_, after);
    (*statement)->bind(1, head.series_id).bind(2, from).bind(3, until_ms_);
    auto has_row = (*statement)->step();
    if (!has_row) return fail(has_row);
    head.has_row = *has_row;
  }
  mode_ = SampleListing::by_time;
  return {};
}

Result<bool> SqliteSampleQuery::next(StoredSample& row) {
  switch (mode_) {
    case SampleListing::idle: return false;
    case SampleListing::by_series: return next_by_series(row);
    case SampleListing::by_time: return next_by_time(row);
  }
  return false;
}

Result<bool> SqliteSampleQuery::next_by_series(StoredSample& row) {
  sqlite::Statement& series = *series_listing_;
  sqlite::Statement& samples_of = samples_[0];
  for (;;) {
    if (!in_series_) {
      auto has_series = series.step();
      if (!has_series) return fail(has_series);
      if (!*has_series) {
        finish();
        return false;
      }
      samples_of.bind(1, series.column_int(0)).bind(2, since_ms_).bind(3, until_ms_);
      in_series_ = true;
    }
    auto has_row = samples_of.step();
    if (!has_row) return fail(has_row);
    if (*has_row) {
      // The series row stays current while its samples are read: its views stay valid.
      read_series_row(series, row);
      read_source_id(series, row.source_id, row.source_id_text);
      read_sample(samples_of, row);
      return true;
    }
    samples_of.reset();
    in_series_ = false;
  }
}

Result<bool> SqliteSampleQuery::next_by_time(StoredSample& row) {
  if (to_step_) {
    Head& head = heads_[*to_step_];
    auto has_row = samples_[head.statement].step();
    if (!has_row) return fail(has_row);
    head.has_row = *has_row;
    to_step_.reset();
  }
  const std::optional<size_t> best = earliest_head(
      heads_, [](const Head& head) { return head.has_row; },
      [this](const Head& head) { return samples_[head.statement].column_int(0); });
  if (!best) {
    for (auto& s : samples_) s.reset();
    mode_ = SampleListing::idle;  // the heads stay: the last row handed out views them
    return false;
  }
  const Head& head = heads_[*best];
  head.name(row);
  read_sample(samples_[head.statement], row);
  to_step_ = best;
  return true;
}

}  // namespace hh::store
