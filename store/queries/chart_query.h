#pragma once
// store::ChartQuery for every backend: the console's charts of one user. Their series with
// the instants of their first and last sample, their summaries by kind, and one resource's
// numeric samples downsampled on the server into buckets of a given width.
//
// The engines differ in one place: how a sample's value (a scalar kept with its type,
// store/schema/column.h) is tested for a number and read as one.
//
// Lifetime: the session must outlive the query; one thread at a time.
#include <array>
#include <string>

#include "store/queries/listings.h"
#include "store/queries/query_args.h"
#include "store/read_query_common.h"
#include "store/read_store.h"
#include "store/schema/dialect.h"

namespace hh::store {

template <typename Reads>
class ChartQueryOf final : public ChartQuery {
 public:
  explicit ChartQueryOf(typename Reads::Session& session) : statements_(session, sql()) {}

  Result<void> start_series(std::string_view user_id) override {
    return statements_.start(chart_series, QueryArgs().add(user_id), Fetch::whole);
  }
  Result<bool> next(StoredSeries& row) override {
    return statements_.next([&row](const auto& s) { read_series(s, row); });
  }

  Result<void> start_summary_kinds(std::string_view user_id) override {
    return statements_.start(chart_summary_kinds, QueryArgs().add(user_id), Fetch::whole);
  }
  Result<bool> next(StoredSummaryKind& row) override {
    return statements_.next([&row](const auto& s) { read_summary_kind(s, row); });
  }

  Result<void> start_buckets(const SampleFilter& filter, int64_t bucket_ms) override {
    if (!filter.user_id || !filter.resource || !filter.since_ms || !filter.until_ms || bucket_ms < 1) {
      return fail("a chart needs a user, a resource, a time range and a bucket width");
    }
    QueryArgs args;
    args.add(std::string_view(*filter.user_id)).add(std::string_view(*filter.resource));
    args.add(*filter.since_ms).add(*filter.until_ms).add(bucket_ms);
    args.add(filter.provider).add(filter.source_type);
    return statements_.start(chart_buckets, args, Fetch::cursor);
  }
  Result<bool> next(SampleBucket& row) override {
    return statements_.next([&row](const auto& s) { read_sample_bucket(s, row); });
  }

  void finish() override { statements_.finish(); }

 private:
  enum Statement : size_t { chart_series, chart_summary_kinds, chart_buckets };

  static const std::array<std::string, 3>& sql() {
    static const std::array<std::string, 3> built = [] {
      constexpr bool postgres = Reads::dialect == schema::Dialect::postgres;
      // A number (SQLite: an integer or real value; PostgreSQL: a jsonb number), read as one.
      const std::string is_number =
          postgres ? "jsonb_typeof(p.value) = 'number'" : "(typeof(p.value) = 'integer' OR typeof(p.value) = 'real')";
      const std::string number = postgres ? "(p.value #>> '{}')::double precision" : "p.value";
      return std::array<std::string, 3>{
          schema::spell("SELECT s.resource, s.provider, s.source_type, "
                        "(SELECT min(t_ms) FROM samples WHERE series_id = s.series_id), "
                        "(SELECT max(t_ms) FROM samples WHERE series_id = s.series_id) "
                        "FROM series AS s WHERE s.user_id = ?1 "
                        "ORDER BY s.resource COLLATE \"C\", s.provider COLLATE \"C\", s.source_type COLLATE \"C\"",
                        Reads::dialect),
          schema::spell("SELECT resource, provider, source_type, count(*), min(start_ms), max(start_ms) "
                        "FROM summaries WHERE user_id = ?1 GROUP BY resource, provider, source_type "
                        "ORDER BY resource COLLATE \"C\", provider COLLATE \"C\" NULLS FIRST, source_type COLLATE \"C\"",
                        Reads::dialect),
          // Each series' samples are read along its primary key (series_id, t_ms) within the range.
          schema::spell("SELECT s.provider, s.source_type, (p.t_ms - ?3) / ?5 AS bucket, min(p.t_ms), max(p.t_ms), "
                        "count(*), min(" + number + "), max(" + number + "), avg(" + number + ") "
                        "FROM series AS s JOIN samples AS p ON p.series_id = s.series_id "
                        "WHERE s.user_id = ?1 AND s.resource = ?2 AND (?6::text IS NULL OR s.provider = ?6) "
                        "AND (?7::text IS NULL OR s.source_type = ?7) AND p.t_ms >= ?3 AND p.t_ms < ?4 AND " +
                            is_number + " GROUP BY s.series_id, s.provider, s.source_type, bucket "
                        "ORDER BY s.provider COLLATE \"C\", s.source_type COLLATE \"C\", bucket",
                        Reads::dialect)};
    }();
    return built;
  }

  typename Reads::template Listings<3> statements_;
};

}  // namespace hh::store
