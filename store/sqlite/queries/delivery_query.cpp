#include "store/sqlite/queries/delivery_query.h"

#include <limits>

#include "store/read_query_common.h"

namespace hh::store {
namespace {

constexpr int64_t kEarliestReceived = std::numeric_limits<int64_t>::min();
constexpr int64_t kLatestReceived = std::numeric_limits<int64_t>::max();

constexpr std::string_view kDeliveryColumns =
    "seq, message_id, origin, received_at, webhook_timestamp, event_type, status, family, error, headers, body, "
    "body_removed_at, body_sha256";

const std::string kDeliveryById = "SELECT " + std::string(kDeliveryColumns) + " FROM deliveries WHERE message_id = ?1";

// Index-only (deliveries_received_at carries the rowid).
constexpr std::string_view kDeliveryBounds =
    "SELECT min(seq), max(seq) FROM inbox WHERE received_at >= ?1 AND received_at < ?2";

// The unary + keeps SQLite from choosing the received_at index here, which would read the
// window in time order and then sort whole rows (bodies included) by seq.
const std::string kDeliveryWindow = "SELECT " + std::string(kDeliveryColumns) +
                                    " FROM deliveries WHERE seq >= ?1 AND seq <= ?2 "
                                    "AND +received_at >= ?3 AND +received_at < ?4 "
                                    "AND (?6 = 0 OR origin = 'webhook') AND (?5 IS NULL OR event_type GLOB ?5) "
                                    "AND (?7 IS NULL OR status = ?7) ORDER BY seq";

// The same rows newest first (the search): a walk down the rowid, never a sort.
const std::string kDeliveryWindowNewestFirst = "SELECT " + std::string(kDeliveryColumns) +
                                               " FROM deliveries WHERE seq >= ?1 AND seq <= ?2 "
                                               "AND +received_at >= ?3 AND +received_at < ?4 "
                                               "AND (?6 = 0 OR origin = 'webhook') AND (?5 IS NULL OR event_type GLOB ?5) "
                                               "AND (?7 IS NULL OR status = ?7) ORDER BY seq DESC";

enum DeliveryStatement : size_t { delivery_by_id, delivery_bounds, delivery_window, delivery_window_newest_first };

}  // namespace

SqliteDeliveryQuery::SqliteDeliveryQuery(sqlite::Connection& db)
    : statements_(db, {kDeliveryById, kDeliveryBounds, kDeliveryWindow, kDeliveryWindowNewestFirst}) {}

Result<bool> SqliteDeliveryQuery::find(std::string_view message_id, StoredDelivery& row) {
  auto s = statements_.get(delivery_by_id);
  if (!s) return fail(s.error());
  sqlite::Statement& by_id = **s;
  by_id.reset();
  by_id.bind(1, message_id);
  auto has_row = by_id.step();  // the row's views stay valid until the next call: no reset
  if (!has_row) return fail(has_row.error());
  if (!*has_row) {
    by_id.reset();
    return false;
  }
  read_delivery(by_id, row);
  return true;
}

Result<void> SqliteDeliveryQuery::start_export(const DeliveryFilter& filter, int64_t& first_seq, int64_t& last_seq) {
  return start_window(filter, delivery_window, std::nullopt, first_seq, last_seq);
}

Result<void> SqliteDeliveryQuery::start_newest_first(const DeliveryFilter& filter, std::optional<int64_t> before_seq) {
  int64_t first_seq = 0, last_seq = 0;
  return start_window(filter, delivery_window_newest_first, before_seq, first_seq, last_seq);
}

Result<void> SqliteDeliveryQuery::start_window(const DeliveryFilter& filter, size_t statement,
                                               std::optional<int64_t> before_seq, int64_t& first_seq,
                                               int64_t& last_seq) {
  statements_.finish();
  auto bounds = statements_.get(delivery_bounds);
  if (!bounds) return fail(bounds.error());
  const int64_t since = filter.since_ms.value_or(kEarliestReceived);
  const int64_t until = filter.until_ms.value_or(kLatestReceived);
  (*bounds)->bind(1, since).bind(2, until);
  first_seq = 0;
  last_seq = 0;
  auto read = (*bounds)->first_row([&](const sqlite::Statement& b) {
    first_seq = b.column_optional_int(0).value_or(0);
    last_seq = b.column_optional_int(1).value_or(0);
  });
  if (!read) return fail(read.error());
  auto window = statements_.start(statement);
  if (!window) return fail(window.error());
  const int64_t last = before_seq ? std::min(last_seq, *before_seq - 1) : last_seq;
  (*window)->bind(1, first_seq).bind(2, last).bind(3, since).bind(4, until);
  (*window)->bind(5, filter.event_type_glob);
  (*window)->bind(6, int64_t{filter.webhooks_only ? 1 : 0});
  (*window)->bind(7, filter.status);
  return {};
}

Result<bool> SqliteDeliveryQuery::next(StoredDelivery& row) {
  return statements_.next_row([&row](const sqlite::Statement& s) { read_delivery(s, row); });
}

}  // namespace hh::store
