#include "store/sqlite/queries/summary_query.h"

#include <limits>

#include "store/read_query_common.h"

namespace hh::store {
namespace {

constexpr int64_t kNullStart = std::numeric_limits<int64_t>::min();  // sort key of "no start"

// The summary and its identity columns (the user's client_user_id, the provider's name):
// one primary-key lookup in users and providers per row.
constexpr std::string_view kSummaryColumns =
    "SELECT m.resource, m.id, m.user_id, m.provider, m.source_type, m.start_ms, m.seq, m.data, u.client_user_id, "
    "p.name FROM summaries AS m LEFT JOIN users AS u ON u.user_id = m.user_id "
    "LEFT JOIN providers AS p ON p.slug = m.provider ";

const std::string kSummaryExport = std::string(kSummaryColumns) +
                                   "WHERE (?1 IS NULL OR m.resource = ?1) AND (?2 IS NULL OR m.user_id = ?2) "
                                   "AND (?3 IS NULL OR m.provider = ?3) AND (?4 IS NULL OR m.source_type = ?4) "
                                   "AND (?5 IS NULL OR m.start_ms >= ?5) AND (?6 IS NULL OR m.start_ms < ?6) "
                                   "ORDER BY m.resource, m.id";

// The user's rows come from the (user_id, resource, …) index; the order needs a sort.
const std::string kSummaryPage = std::string(kSummaryColumns) +
                                 "WHERE m.user_id = ?1 AND m.resource = ?2 "
                                 "AND (?3 IS NULL OR m.provider = ?3) AND (?4 IS NULL OR m.source_type = ?4) "
                                 "AND (?5 IS NULL OR m.start_ms >= ?5) AND (?6 IS NULL OR m.start_ms < ?6) "
                                 "AND (?7 IS NULL OR (ifnull(m.start_ms, ?9), m.id) > (?7, ?8)) "
                                 "ORDER BY ifnull(m.start_ms, ?9), m.id LIMIT ?10";

const std::string kSummaryByKey = std::string(kSummaryColumns) + "WHERE m.resource = ?1 AND m.id = ?2";

enum SummaryStatement : size_t { summary_export, summary_page, summary_by_key };

}  // namespace

SqliteSummaryQuery::SqliteSummaryQuery(sqlite::Connection& db)
    : statements_(db, {kSummaryExport, kSummaryPage, kSummaryByKey}) {}

Result<void> SqliteSummaryQuery::start_by_key(std::string_view change_key) {
  const auto key = split_change_key(change_key, 2);
  if (!key) return fail(not_a_summary_key_error(change_key));
  auto s = statements_.start(summary_by_key);
  if (!s) return fail(s.error());
  (*s)->bind(1, (*key)[0]).bind(2, (*key)[1]);
  return {};
}

Result<void> SqliteSummaryQuery::start_export(const SummaryFilter& filter) {
  auto s = statements_.start(summary_export);
  if (!s) return fail(s.error());
  (*s)->bind(1, filter.resource).bind(2, filter.user_id).bind(3, filter.provider).bind(4, filter.source_type);
  (*s)->bind(5, filter.since_ms).bind(6, filter.until_ms);
  return {};
}

Result<void> SqliteSummaryQuery::start_page(const SummaryFilter& filter, const std::optional<SummaryPosition>& after,
                                            int64_t limit) {
  statements_.finish();
  if (!filter.user_id || !filter.resource) return fail(std::string(kSummaryPageNeedsUserAndResource));
  auto s = statements_.start(summary_page);
  if (!s) return fail(s.error());
  sqlite::Statement& page = **s;
  page.bind(1, filter.user_id).bind(2, filter.resource).bind(3, filter.provider).bind(4, filter.source_type);
  page.bind(5, filter.since_ms).bind(6, filter.until_ms);
  if (after) {
    page.bind(7, after->start_ms.value_or(kNullStart)).bind(8, std::string_view(after->id));
  } else {
    page.bind_null(7).bind_null(8);
  }
  page.bind(9, kNullStart).bind(10, limit);
  return {};
}

Result<bool> SqliteSummaryQuery::next(StoredSummary& row) {
  return statements_.next_row([&row](const sqlite::Statement& s) { read_summary(s, row); });
}

}  // namespace hh::store
