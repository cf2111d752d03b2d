#include "store/postgres/read/pg_queries.h"

#include <limits>

#include "store/postgres/read/glob_regex.h"
#include "store/read_query_common.h"

namespace hh::store::pgread {
namespace {

// ---- Summaries (store/read_query_common.h: read_summary's columns).

constexpr std::string_view kPgSummaryColumns =
    "SELECT m.resource, m.id, m.user_id, m.provider, m.source_type, m.start_ms, m.seq, m.data, u.client_user_id, "
    "p.name FROM summaries AS m LEFT JOIN users AS u ON u.user_id = m.user_id "
    "LEFT JOIN providers AS p ON p.slug = m.provider ";

const std::string kPgSummaryExport = std::string(kPgSummaryColumns) +
                                     "WHERE ($1::text IS NULL OR m.resource = $1) "
                                     "AND ($2::text IS NULL OR m.user_id = $2) "
                                     "AND ($3::text IS NULL OR m.provider = $3) "
                                     "AND ($4::text IS NULL OR m.source_type = $4) "
                                     "AND ($5::bigint IS NULL OR m.start_ms >= $5) "
                                     "AND ($6::bigint IS NULL OR m.start_ms < $6) "
                                     "ORDER BY m.resource COLLATE \"C\", m.id COLLATE \"C\"";

// After ($7, $8) in (start, none first, then id) order; $9 is the sort key of "no start".
const std::string kPgSummaryPage = std::string(kPgSummaryColumns) +
                                   "WHERE m.user_id = $1 AND m.resource = $2 "
                                   "AND ($3::text IS NULL OR m.provider = $3) "
                                   "AND ($4::text IS NULL OR m.source_type = $4) "
                                   "AND ($5::bigint IS NULL OR m.start_ms >= $5) "
                                   "AND ($6::bigint IS NULL OR m.start_ms < $6) "
                                   "AND ($7::bigint IS NULL OR coalesce(m.start_ms, $9::bigint) > $7 "
                                   "     OR (coalesce(m.start_ms, $9::bigint) = $7 AND m.id COLLATE \"C\" > $8::text)) "
                                   "ORDER BY coalesce(m.start_ms, $9::bigint), m.id COLLATE \"C\" LIMIT $10";

const std::string kPgSummaryByKey = std::string(kPgSummaryColumns) + "WHERE m.resource = $1 AND m.id = $2";

constexpr int64_t kPgNullStart = std::numeric_limits<int64_t>::min();  // sort key of "no start"

// ---- Stream points (read_stream_point's columns) and streams (read_workout_stream's).

constexpr std::string_view kPgStreamExport =
    "SELECT workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, "
    "resistance, temperature FROM stream_points "
    "WHERE ($1::text IS NULL OR workout_id = $1) "
    "AND (($2::text IS NULL AND $3::text IS NULL) OR workout_id IN (SELECT workout_id FROM workout_streams "
    "     WHERE ($2::text IS NULL OR user_id = $2) AND ($3::text IS NULL OR provider = $3))) "
    "AND ($4::bigint IS NULL OR time * 1000 >= $4) AND ($5::bigint IS NULL OR time * 1000 < $5) "
    "ORDER BY workout_id COLLATE \"C\", idx";

constexpr std::string_view kPgStreamPage =
    "SELECT workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, cadence, power, "
    "resistance, temperature FROM stream_points "
    "WHERE workout_id = $1 AND idx > $2 ORDER BY idx LIMIT $3";

constexpr std::string_view kPgWorkoutStream =
    "SELECT workout_id, user_id, provider, provider_id, sport, point_count, seq FROM workout_streams "
    "WHERE workout_id = $1";

// ---- The change feed (read_change's columns). "After ($1, $2)" in (seq, change_id) order.

constexpr std::string_view kPgChangeBounds =
    "SELECT (SELECT seq FROM changes WHERE seq >= $1 AND (seq > $1 OR change_id > $2) "
    "        ORDER BY seq, change_id LIMIT 1), "
    "       (SELECT seq FROM changes WHERE seq >= $1 AND (seq > $1 OR change_id > $2) "
    "        ORDER BY seq, change_id LIMIT 1 OFFSET $3)";

constexpr std::string_view kPgChangePage =
    "SELECT change_id, seq, table_name, row_key, op, row_count, from_ms, to_ms FROM changes "
    "WHERE seq >= $1 AND (seq > $1 OR change_id > $2) AND seq <= $3 ORDER BY seq, change_id LIMIT $4";

// ---- Inbox rows (read_delivery's columns).

constexpr int64_t kPgEarliestReceived = std::numeric_limits<int64_t>::min();
constexpr int64_t kPgLatestReceived = std::numeric_limits<int64_t>::max();

constexpr std::string_view kPgDeliveryColumns =
    "SELECT seq, message_id, origin, received_at, webhook_timestamp, event_type, status, family, error, headers, "
    "body, body_removed_at, body_sha256 FROM deliveries ";

const std::string kPgDeliveryById = std::string(kPgDeliveryColumns) + "WHERE message_id = $1";

constexpr std::string_view kPgDeliveryBounds =
    "SELECT min(seq), max(seq) FROM inbox WHERE received_at >= $1 AND received_at < $2";

// The event-type glob as a regular expression (glob_regex.h).
const std::string kPgDeliveryWindow = std::string(kPgDeliveryColumns) +
                                      "WHERE seq >= $1 AND seq <= $2 AND received_at >= $3 AND received_at < $4 "
                                      "AND ($6::bigint = 0 OR origin = 'webhook') "
                                      "AND ($5::text IS NULL OR event_type ~ $5) "
                                      "AND ($7::text IS NULL OR status = $7) ORDER BY seq";

// The same rows newest first (the search).
const std::string kPgDeliveryNewestFirst = std::string(kPgDeliveryColumns) +
                                           "WHERE seq >= $1 AND seq <= $2 AND received_at >= $3 AND received_at < $4 "
                                           "AND ($6::bigint = 0 OR origin = 'webhook') "
                                           "AND ($5::text IS NULL OR event_type ~ $5) "
                                           "AND ($7::text IS NULL OR status = $7) ORDER BY seq DESC";

// ---- A user's lab order ids; UNION removes the duplicates.

constexpr std::string_view kPgUserOrderIds =
    "SELECT order_id FROM ("
    "SELECT id AS order_id FROM lab_orders WHERE user_id = $1 "
    "UNION SELECT order_id FROM lab_appointments WHERE user_id = $1 AND order_id IS NOT NULL "
    "UNION SELECT order_id FROM lab_results WHERE user_id = $1) AS ids "
    "WHERE $2::text IS NULL OR order_id COLLATE \"C\" > $2::text ORDER BY order_id COLLATE \"C\" LIMIT $3";

}  // namespace

// ---- TwoWayListing

Result<void> TwoWayListing::open_cursor(std::string_view sql, const pg::Params& params) {
  close();
  from_cursor_ = true;
  return cursor_.open(sql, params);
}

Result<void> TwoWayListing::open_listing(std::string_view sql, const pg::Params& params) {
  close();
  from_cursor_ = false;
  return listing_.open(sql, params);
}

Result<bool> TwoWayListing::next(ResultRow& row) {
  if (from_cursor_) return cursor_.next(row);
  return listing_.next(row);
}

void TwoWayListing::close() {
  cursor_.close();
  listing_.close();
}

// ---- Summaries

Result<void> PgSummaryQuery::start_export(const SummaryFilter& filter) {
  pg::Params params;
  params.add(filter.resource).add(filter.user_id).add(filter.provider).add(filter.source_type);
  params.add(filter.since_ms).add(filter.until_ms);
  return rows_.open_cursor(kPgSummaryExport, params);
}

Result<void> PgSummaryQuery::start_page(const SummaryFilter& filter, const std::optional<SummaryPosition>& after,
                                        int64_t limit) {
  rows_.close();
  if (!filter.user_id || !filter.resource) return fail(std::string(kSummaryPageNeedsUserAndResource));
  pg::Params params;
  params.add(filter.user_id).add(filter.resource).add(filter.provider).add(filter.source_type);
  params.add(filter.since_ms).add(filter.until_ms);
  if (after) {
    params.add(after->start_ms.value_or(kPgNullStart)).add(after->id);
  } else {
    params.add_null().add_null();
  }
  params.add(kPgNullStart).add(limit);
  return rows_.open_listing(kPgSummaryPage, params);
}

Result<void> PgSummaryQuery::start_by_key(std::string_view change_key) {
  rows_.close();
  const auto key = split_change_key(change_key, 2);
  if (!key) return fail(not_a_summary_key_error(change_key));
  return rows_.open_listing(kPgSummaryByKey, pg::Params().add((*key)[0]).add((*key)[1]));
}

Result<bool> PgSummaryQuery::next(StoredSummary& row) {
  ResultRow s;
  auto has_row = rows_.next(s);
  if (has_row && *has_row) read_summary(s, row);
  return has_row;
}

// ---- Stream points

Result<void> PgStreamQuery::start_export(const StreamFilter& filter) {
  pg::Params params;
  params.add(filter.workout_id).add(filter.user_id).add(filter.provider).add(filter.since_ms).add(filter.until_ms);
  return rows_.open_cursor(kPgStreamExport, params);
}

Result<void> PgStreamQuery::start_page(std::string_view workout_id, std::optional<int64_t> after_idx, int64_t limit) {
  return rows_.open_listing(kPgStreamPage, pg::Params().add(workout_id).add(after_idx.value_or(-1)).add(limit));
}

Result<bool> PgStreamQuery::next(StoredStreamPoint& row) {
  ResultRow s;
  auto has_row = rows_.next(s);
  if (has_row && *has_row) read_stream_point(s, row);
  return has_row;
}

Result<bool> PgStreamQuery::find_workout(std::string_view workout_id, StoredWorkoutStream& row) {
  if (auto found = lookup_.open(kPgWorkoutStream, pg::Params().add(workout_id)); !found) {
    return fail(found.error_kind(), found.error());
  }
  ResultRow s;
  if (!lookup_.next(s)) return false;
  read_workout_stream(s, row);
  lookup_.close();  // the row is a copy
  return true;
}

// ---- The change feed

Result<void> PgChangeQuery::start_page(const ChangePosition& from, int64_t limit) {
  page_.close();
  ends_inside_seq_ = false;
  const int64_t after_change = from.after_change_id.value_or(kAfterWholeSeq);
  auto bounds = session_->query(kPgChangeBounds, pg::Params().add(from.after_seq).add(after_change).add(limit));
  if (!bounds) return fail(bounds.error_kind(), bounds.error());
  const ChangePageEnd end =
      change_page_end(from.after_seq, bounds->optional_integer(0, 0), bounds->optional_integer(0, 1));
  ends_inside_seq_ = end.ends_inside_seq;
  return page_.open(kPgChangePage, pg::Params().add(from.after_seq).add(after_change).add(end.last_seq).add(limit));
}

Result<bool> PgChangeQuery::next(StoredChange& row) {
  ResultRow s;
  if (!page_.next(s)) return false;
  read_change(s, row);
  return true;
}

// ---- Inbox rows

Result<bool> PgDeliveryQuery::find(std::string_view message_id, StoredDelivery& row) {
  if (auto found = lookup_.open(kPgDeliveryById, pg::Params().add(message_id)); !found) {
    return fail(found.error_kind(), found.error());
  }
  ResultRow s;
  if (!lookup_.next(s)) return false;
  read_delivery(s, row);
  return true;
}

Result<void> PgDeliveryQuery::start_export(const DeliveryFilter& filter, int64_t& first_seq, int64_t& last_seq) {
  return start_window(filter, kPgDeliveryWindow, std::nullopt, first_seq, last_seq);
}

Result<void> PgDeliveryQuery::start_newest_first(const DeliveryFilter& filter, std::optional<int64_t> before_seq) {
  int64_t first_seq = 0, last_seq = 0;
  return start_window(filter, kPgDeliveryNewestFirst, before_seq, first_seq, last_seq);
}

Result<void> PgDeliveryQuery::start_window(const DeliveryFilter& filter, std::string_view sql,
                                           std::optional<int64_t> before_seq, int64_t& first_seq, int64_t& last_seq) {
  window_.close();
  const int64_t since = filter.since_ms.value_or(kPgEarliestReceived);
  const int64_t until = filter.until_ms.value_or(kPgLatestReceived);
  first_seq = 0;
  last_seq = 0;
  auto bounds = session_->query(kPgDeliveryBounds, pg::Params().add(since).add(until));
  if (!bounds) return fail(bounds.error_kind(), bounds.error());
  first_seq = bounds->optional_integer(0, 0).value_or(0);
  last_seq = bounds->optional_integer(0, 1).value_or(0);
  const int64_t last = before_seq ? std::min(last_seq, *before_seq - 1) : last_seq;
  std::optional<std::string> event_regex;
  if (filter.event_type_glob) event_regex = glob_to_regex(*filter.event_type_glob);
  pg::Params params;
  params.add(first_seq).add(last).add(since).add(until).add(event_regex);
  params.add(int64_t{filter.webhooks_only ? 1 : 0}).add(filter.status);
  return window_.open(sql, params);
}

Result<bool> PgDeliveryQuery::next(StoredDelivery& row) {
  ResultRow s;
  auto has_row = window_.next(s);
  if (has_row && *has_row) read_delivery(s, row);
  return has_row;
}

// ---- A user's lab order ids

Result<void> PgUserOrderIdsQuery::start(std::string_view user_id, std::optional<std::string_view> after_order_id,
                                        int64_t limit) {
  return ids_.open(kPgUserOrderIds, pg::Params().add(user_id).add(after_order_id).add(limit));
}

Result<bool> PgUserOrderIdsQuery::next(std::string_view& order_id) {
  ResultRow s;
  if (!ids_.next(s)) return false;
  order_id = s.column_text(0);
  return true;
}

}  // namespace hh::store::pgread
