#include "store/sqlite/queries/chart_query.h"

#include "store/read_query_common.h"

namespace hh::store {
namespace {

constexpr std::string_view kSeries =
    "SELECT s.resource, s.provider, s.source_type, "
    "(SELECT min(t_ms) FROM samples WHERE series_id = s.series_id), "
    "(SELECT max(t_ms) FROM samples WHERE series_id = s.series_id) "
    "FROM series AS s WHERE s.user_id = ?1 ORDER BY s.resource, s.provider, s.source_type";

constexpr std::string_view kSummaryKinds =
    "SELECT resource, provider, source_type, count(*), min(start_ms), max(start_ms) FROM summaries "
    "WHERE user_id = ?1 GROUP BY resource, provider, source_type ORDER BY resource, provider, source_type";

// Each series' samples are read along its primary key (series_id, t_ms) within the range.
constexpr std::string_view kBuckets =
    "SELECT s.provider, s.source_type, (p.t_ms - ?3) / ?5 AS bucket, min(p.t_ms), max(p.t_ms), count(*), "
    "min(p.value), max(p.value), avg(p.value) "
    "FROM series AS s JOIN samples AS p ON p.series_id = s.series_id "
    "WHERE s.user_id = ?1 AND s.resource = ?2 AND (?6 IS NULL OR s.provider = ?6) "
    "AND (?7 IS NULL OR s.source_type = ?7) AND p.t_ms >= ?3 AND p.t_ms < ?4 "
    "AND (typeof(p.value) = 'integer' OR typeof(p.value) = 'real') "
    "GROUP BY s.series_id, bucket ORDER BY s.provider, s.source_type, bucket";

enum ChartStatement : size_t { chart_series, chart_summary_kinds, chart_buckets };

}  // namespace

SqliteChartQuery::SqliteChartQuery(sqlite::Connection& db) : statements_(db, {kSeries, kSummaryKinds, kBuckets}) {}

Result<void> SqliteChartQuery::start_series(std::string_view user_id) {
  auto statement = statements_.start(chart_series);
  if (!statement) return fail(statement.error());
  (*statement)->bind(1, user_id);
  return {};
}

Result<bool> SqliteChartQuery::next(StoredSeries& row) {
  return statements_.next_row([&row](const sqlite::Statement& s) { read_series(s, row); });
}

Result<void> SqliteChartQuery::start_summary_kinds(std::string_view user_id) {
  auto statement = statements_.start(chart_summary_kinds);
  if (!statement) return fail(statement.error());
  (*statement)->bind(1, user_id);
  return {};
}

Result<bool> SqliteChartQuery::next(StoredSummaryKind& row) {
  return statements_.next_row([&row](const sqlite::Statement& s) { read_summary_kind(s, row); });
}

Result<void> SqliteChartQuery::start_buckets(const SampleFilter& filter, int64_t bucket_ms) {
  if (!filter.user_id || !filter.resource || !filter.since_ms || !filter.until_ms || bucket_ms < 1) {
    return fail("a chart needs a user, a resource, a time range and a bucket width");
  }
  auto statement = statements_.start(chart_buckets);
  if (!statement) return fail(statement.error());
  (*statement)->bind(1, std::string_view(*filter.user_id)).bind(2, std::string_view(*filter.resource));
  (*statement)->bind(3, *filter.since_ms);
  (*statement)->bind(4, *filter.until_ms).bind(5, bucket_ms);
  (*statement)->bind(6, filter.provider).bind(7, filter.source_type);
  return {};
}

Result<bool> SqliteChartQuery::next(SampleBucket& row) {
  return statements_.next_row([&row](const sqlite::Statement& s) { read_sample_bucket(s, row); });
}

}  // namespace hh::store
