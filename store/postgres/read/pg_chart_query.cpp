#include "store/postgres/read/pg_chart_query.h"

#include "store/read_query_common.h"

namespace hh::store::pgread {
namespace {

constexpr std::string_view kPgSeries =
    "SELECT s.resource, s.provider, s.source_type, "
    "(SELECT min(t_ms) FROM samples WHERE series_id = s.series_id), "
    "(SELECT max(t_ms) FROM samples WHERE series_id = s.series_id) "
    "FROM series AS s WHERE s.user_id = $1 "
    "ORDER BY s.resource COLLATE \"C\", s.provider COLLATE \"C\", s.source_type COLLATE \"C\"";

constexpr std::string_view kPgSummaryKinds =
    "SELECT resource, provider, source_type, count(*), min(start_ms), max(start_ms) FROM summaries "
    "WHERE user_id = $1 GROUP BY resource, provider, source_type "
    "ORDER BY resource COLLATE \"C\", provider COLLATE \"C\" NULLS FIRST, source_type COLLATE \"C\"";

// samples.value is a jsonb scalar: numbers only, as SQLite's typeof() check.
constexpr std::string_view kPgBuckets =
    "SELECT s.provider, s.source_type, (p.t_ms - $3) / $5 AS bucket, min(p.t_ms), max(p.t_ms), count(*), "
    "min((p.value #>> '{}')::double precision), max((p.value #>> '{}')::double precision), "
    "avg((p.value #>> '{}')::double precision) "
    "FROM series AS s JOIN samples AS p ON p.series_id = s.series_id "
    "WHERE s.user_id = $1 AND s.resource = $2 AND ($6::text IS NULL OR s.provider = $6) "
    "AND ($7::text IS NULL OR s.source_type = $7) AND p.t_ms >= $3 AND p.t_ms < $4 "
    "AND jsonb_typeof(p.value) = 'number' "
    "GROUP BY s.series_id, s.provider, s.source_type, bucket "
    "ORDER BY s.provider COLLATE \"C\", s.source_type COLLATE \"C\", bucket";

}  // namespace

Result<void> PgChartQuery::start_series(std::string_view user_id) {
  return rows_.open(kPgSeries, pg::Params().add(user_id));
}

Result<bool> PgChartQuery::next(StoredSeries& row) {
  ResultRow s;
  if (!rows_.next(s)) return false;
  read_series(s, row);
  return true;
}

Result<void> PgChartQuery::start_summary_kinds(std::string_view user_id) {
  return rows_.open(kPgSummaryKinds, pg::Params().add(user_id));
}

Result<bool> PgChartQuery::next(StoredSummaryKind& row) {
  ResultRow s;
  if (!rows_.next(s)) return false;
  read_summary_kind(s, row);
  return true;
}

Result<void> PgChartQuery::start_buckets(const SampleFilter& filter, int64_t bucket_ms) {
  if (!filter.user_id || !filter.resource || !filter.since_ms || !filter.until_ms || bucket_ms < 1) {
    return fail("a chart needs a user, a resource, a time range and a bucket width");
  }
  pg::Params params;
  params.add(*filter.user_id).add(*filter.resource).add(*filter.since_ms).add(*filter.until_ms).add(bucket_ms);
  params.add(filter.provider).add(filter.source_type);
  return rows_.open(kPgBuckets, params);
}

Result<bool> PgChartQuery::next(SampleBucket& row) {
  ResultRow s;
  if (!rows_.next(s)) return false;
  read_sample_bucket(s, row);
  return true;
}

}  // namespace hh::store::pgread
