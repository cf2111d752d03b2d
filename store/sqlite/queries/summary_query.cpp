#include "store/sqlite/queries/summary_query.h"

#include <limits>

namespace hh::store {
namespace {

constexpr int64_t kNullStart = std::numeric_limits<int64_t>::min();  // sort key of "no start"

// The summary and its identity columns (the user's client_user_id, the provider's name):
// one primary-key lookup in users and providers per row.
constexpr std::string_view kColumns =
    "SELECT m.resource, m.id, m.user_id, m.provider, m.source_type, m.start_ms, m.seq, m.data, u.client_user_id, "
    "p.name FROM summaries AS m LEFT JOIN users AS u ON u.user_id = m.user_id "
    "LEFT JOIN providers AS p ON p.slug = m.provider ";

const std::string kAll = std::string(kColumns) +
                         "WHERE (?1 IS NULL OR m.resource = ?1) AND (?2 IS NULL OR m.user_id = ?2) "
                         "AND (?3 IS NULL OR m.provider = ?3) AND (?4 IS NULL OR m.source_type = ?4) "
                         "AND (?5 IS NULL OR m.start_ms >= ?5) AND (?6 IS NULL OR m.start_ms < ?6) "
                         "ORDER BY m.resource, m.id";

// The user's rows come from the (user_id, resource, …) index; the order needs a sort.
const std::string kPage = std::string(kColumns) +
                          "WHERE m.user_id = ?1 AND m.resource = ?2 "
                          "AND (?3 IS NULL OR m.provider = ?3) AND (?4 IS NULL OR m.source_type = ?4) "
                          "AND (?5 IS NULL OR m.start_ms >= ?5) AND (?6 IS NULL OR m.start_ms < ?6) "
                          "AND (?7 IS NULL OR (ifnull(m.start_ms, ?9), m.id) > (?7, ?8)) "
                          "ORDER BY ifnull(m.start_ms, ?9), m.id LIMIT ?10";

void bind_filter(sqlite::Statement& s, const SummaryFilter& f, int first) {
  const auto text = [&](int index, const std::optional<std::string>& v) {
    if (v) {
      s.bind(index, std::string_view(*v));
    } else {
      s.bind_null(index);
    }
  };
  text(first, f.resource);
  text(first + 1, f.user_id);
  text(first + 2, f.provider);
  text(first + 3, f.source_type);
  s.bind(first + 4, f.since_ms);
  s.bind(first + 5, f.until_ms);
}

}  // namespace

Result<SummaryQuery> SummaryQuery::create(sqlite::Connection& db) {
  auto all = db.prepare(kAll);
  if (!all) return fail(all.error());
  auto page = db.prepare(kPage);
  if (!page) return fail(page.error());
  return SummaryQuery(std::move(*all), std::move(*page));
}

void SummaryQuery::start_export(const SummaryFilter& filter) {
  all_.reset();
  page_.reset();
  bind_filter(all_, filter, 1);
  active_ = &all_;
}

Result<void> SummaryQuery::start_page(const SummaryFilter& filter, const std::optional<SummaryPosition>& after,
                                      int64_t limit) {
  all_.reset();
  page_.reset();
  active_ = nullptr;
  if (!filter.user_id || !filter.resource) return fail("a summary page needs a user and a resource");
  page_.bind(1, std::string_view(*filter.user_id)).bind(2, std::string_view(*filter.resource));
  page_.bind(3, filter.provider ? std::optional<std::string_view>(*filter.provider) : std::nullopt);
  page_.bind(4, filter.source_type ? std::optional<std::string_view>(*filter.source_type) : std::nullopt);
  page_.bind(5, filter.since_ms).bind(6, filter.until_ms);
  if (after) {
    page_.bind(7, after->start_ms.value_or(kNullStart)).bind(8, std::string_view(after->id));
  } else {
    page_.bind_null(7).bind_null(8);
  }
  page_.bind(9, kNullStart).bind(10, limit);
  active_ = &page_;
  return {};
}

void SummaryQuery::finish() {
  all_.reset();
  page_.reset();
  active_ = nullptr;
}

Result<bool> SummaryQuery::next(StoredSummary& row) {
  if (!active_) return false;
  sqlite::Statement& s = *active_;
  auto has_row = s.step();
  if (!has_row) return fail(has_row.error());
  if (!*has_row) {
    s.reset();
    active_ = nullptr;
    return false;
  }
  row.resource = s.column_text(0);
  row.id = s.column_text(1);
  row.user_id = s.column_optional_text(2);
  row.provider = s.column_optional_text(3);
  row.source_type = s.column_text(4);
  row.start_ms = s.column_optional_int(5);
  row.seq = s.column_int(6);
  row.data = s.column_text(7);
  row.client_user_id = s.column_optional_text(8);
  row.provider_name = s.column_optional_text(9);
  return true;
}

}  // namespace hh::store
