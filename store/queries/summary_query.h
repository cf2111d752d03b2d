#pragma once
// store::SummaryQuery for every backend (`healthhook query summaries`, the read API's
// summary pages), its columns and reader from the summaries description
// (store/schema/record_tables.h), with each summary's identity (the user's client_user_id,
// the provider's name).
//
//  - export: every matching summary in primary-key order (resource, id): no sort.
//  - page: one user's summaries of one resource (the (user_id, resource, …) index), sorted
//    by start of the period, none first, then id: that user's rows of that resource are
//    thousands, not millions. Read as an export is (a cursor on PostgreSQL, a few rows
//    per fetch), since the caller stops at its byte budget long before `limit` when the
//    summaries are large.
//
// Lifetime: the session must outlive the query; one thread at a time.
#include <array>
#include <limits>
#include <string>

#include "store/queries/listings.h"
#include "store/queries/query_args.h"
#include "store/read_query_common.h"
#include "store/read_store.h"
#include "store/schema/record_rows.h"
#include "store/schema/record_sql.h"
#include "store/schema/record_tables.h"

namespace hh::store {

template <typename Reads>
class SummaryQueryOf final : public SummaryQuery {
 public:
  // A summary's JSON is as large as the delivery that carried it allows (max_body_bytes):
  // PostgreSQL fetches few at a time, and a page through a cursor too (a page of 10,000
  // summaries of a few MiB each, fetched whole, took tens of GB before the read API's byte
  // budget could stop it: api/page_support.h).
  explicit SummaryQueryOf(typename Reads::Session& session) : statements_(session, sql(), RowSize::with_bodies) {}

  Result<void> start_export(const SummaryFilter& filter) override {
    QueryArgs args;
    args.add(filter.resource).add(filter.user_id).add(filter.provider).add(filter.source_type);
    args.add(filter.since_ms).add(filter.until_ms);
    return statements_.start(summary_export, args, Fetch::cursor);
  }

  Result<void> start_page(const SummaryFilter& filter, const std::optional<SummaryPosition>& after,
                          int64_t limit) override {
    statements_.finish();
    if (!filter.user_id || !filter.resource) return fail(std::string(kSummaryPageNeedsUserAndResource));
    QueryArgs args;
    args.add(filter.user_id).add(filter.resource).add(filter.provider).add(filter.source_type);
    args.add(filter.since_ms).add(filter.until_ms);
    if (after) {
      args.add(after->start_ms.value_or(kNullStart)).add(after->id);
    } else {
      args.add_null().add_null();
    }
    args.add(kNullStart).add(limit);
    return statements_.start(summary_page, args, Fetch::cursor);
  }

  Result<void> start_by_key(std::string_view change_key) override {
    statements_.finish();
    const auto key = split_change_key(change_key, 2);
    if (!key) return fail(not_a_summary_key_error(change_key));
    return statements_.start(summary_by_key, QueryArgs().add((*key)[0]).add((*key)[1]), Fetch::whole);
  }

  Result<bool> next(StoredSummary& row) override {
    return statements_.next([&row](const auto& s) { schema::read_record<schema::Summaries>(s, row); });
  }
  void finish() override { statements_.finish(); }

 private:
  static constexpr int64_t kNullStart = std::numeric_limits<int64_t>::min();  // sort key of "no start"
  enum Statement : size_t { summary_export, summary_page, summary_by_key };

  static const std::array<std::string, 3>& sql() {
    static const std::array<std::string, 3> built = [] {
      const std::string select = schema::record_select<schema::Summaries>();
      const std::string filters =
          "AND (?3::text IS NULL OR t.provider = ?3) AND (?4::text IS NULL OR t.source_type = ?4) "
          "AND (?5::bigint IS NULL OR t.start_ms >= ?5) AND (?6::bigint IS NULL OR t.start_ms < ?6) ";
      return std::array<std::string, 3>{
          schema::spell(select + "WHERE (?1::text IS NULL OR t.resource = ?1) AND (?2::text IS NULL OR t.user_id = ?2) " +
                            filters + "ORDER BY t.resource COLLATE \"C\", t.id COLLATE \"C\"",
                        Reads::dialect),
          // After (?7, ?8) in (start, none first, then id) order; ?9 is the sort key of "no start".
          schema::spell(select + "WHERE t.user_id = ?1 AND t.resource = ?2 " + filters +
                            "AND (?7::bigint IS NULL OR coalesce(t.start_ms, ?9::bigint) > ?7 "
                            "OR (coalesce(t.start_ms, ?9::bigint) = ?7 AND t.id COLLATE \"C\" > ?8::text)) "
                            "ORDER BY coalesce(t.start_ms, ?9::bigint), t.id COLLATE \"C\" LIMIT ?10",
                        Reads::dialect),
          schema::record_by_key_sql<schema::Summaries>(Reads::dialect)};
    }();
    return built;
  }

  typename Reads::template Listings<3> statements_;
};

}  // namespace hh::store
