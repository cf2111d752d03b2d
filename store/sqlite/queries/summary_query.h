#pragma once
// Reads summaries (`healthhook query summaries`, the read API's summary pages).
//
//  - export: every matching summary in primary-key order (resource, id); no sort,
//    constant memory.
//  - page: ONE user's summaries of one resource in time order (start of the period,
//    summaries without a start first, ties by id), at most `limit`, after a
//    SummaryPosition. Sorts that user's rows of that resource (thousands, not millions).
//
// The time range applies to the start of the period (summaries.start_ms: bedtime_start,
// time_start, calendar_date…); with a range, summaries without a start are left out.
//
// Lifetime: the connection must outlive the query; one thread at a time. Views in a
// StoredSummary are valid until the next next()/start call.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct SummaryFilter {
  std::optional<std::string> resource;
  std::optional<std::string> user_id;
  std::optional<std::string> provider;
  std::optional<std::string> source_type;
  std::optional<int64_t> since_ms;  // inclusive, on start_ms
  std::optional<int64_t> until_ms;  // exclusive
};

// A page ends after this summary: (start_ms, NULL sorting first, then id).
struct SummaryPosition {
  std::optional<int64_t> start_ms;
  std::string id;
};

struct StoredSummary {
  std::string_view resource, id;
  std::optional<std::string_view> user_id, provider;
  std::string_view source_type;
  std::optional<int64_t> start_ms;
  int64_t seq = 0;
  std::string_view data;  // the summary object as received (JSON)
  // Identity columns (005-identity.sql), NULL when unknown: users.client_user_id,
  // providers.name.
  std::optional<std::string_view> client_user_id, provider_name;
  bool with_identity = false;  // set by the caller: output adds client_user_id, provider_name
};

class SummaryQuery {
 public:
  static Result<SummaryQuery> create(sqlite::Connection& db);

  void start_export(const SummaryFilter& filter);
  // Requires filter.user_id and filter.resource.
  Result<void> start_page(const SummaryFilter& filter, const std::optional<SummaryPosition>& after, int64_t limit);
  // Resets the statements of a query stopped early (ends its read snapshot).
  void finish();
  Result<bool> next(StoredSummary& row);

 private:
  SummaryQuery(sqlite::Statement all, sqlite::Statement page) : all_(std::move(all)), page_(std::move(page)) {}
  sqlite::Statement all_;
  sqlite::Statement page_;
  sqlite::Statement* active_ = nullptr;
};

}  // namespace hh::store
