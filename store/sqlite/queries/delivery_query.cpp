#include "store/sqlite/queries/delivery_query.h"

#include <limits>

namespace hh::store {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

constexpr std::string_view kColumns =
    "seq, message_id, origin, received_at, webhook_timestamp, event_type, status, family, error, headers, body";

const std::string kById = "SELECT " + std::string(kColumns) + " FROM deliveries WHERE message_id = ?1";

// Index-only (deliveries_received_at carries the rowid).
constexpr std::string_view kBounds =
    "SELECT min(seq), max(seq) FROM inbox WHERE received_at >= ?1 AND received_at < ?2";

// The unary + keeps SQLite from choosing the received_at index here, which would read the
// window in time order and then sort whole rows (bodies included) by seq.
const std::string kWindow = "SELECT " + std::string(kColumns) +
                            " FROM deliveries WHERE seq >= ?1 AND seq <= ?2 "
                            "AND +received_at >= ?3 AND +received_at < ?4 "
                            "AND (?6 = 0 OR origin = 'webhook') AND (?5 IS NULL OR event_type GLOB ?5) "
                            "AND (?7 IS NULL OR status = ?7) ORDER BY seq";

void read_row(const sqlite::Statement& s, StoredDelivery& row) {
  row.seq = s.column_int(0);
  row.message_id = s.column_text(1);
  row.origin = s.column_text(2);
  row.received_at_ms = s.column_int(3);
  row.webhook_timestamp = s.column_optional_int(4);
  row.event_type = s.column_optional_text(5);
  row.status = s.column_optional_text(6);
  row.family = s.column_optional_text(7);
  row.error = s.column_optional_text(8);
  row.headers = s.column_text(9);
  row.body = s.column_blob(10);
}

}  // namespace

Result<DeliveryQuery> DeliveryQuery::create(sqlite::Connection& db) {
  auto by_id = db.prepare(kById);
  if (!by_id) return fail(by_id.error());
  auto bounds = db.prepare(kBounds);
  if (!bounds) return fail(bounds.error());
  auto window = db.prepare(kWindow);
  if (!window) return fail(window.error());
  return DeliveryQuery(std::move(*by_id), std::move(*bounds), std::move(*window));
}

Result<bool> DeliveryQuery::find(std::string_view message_id, StoredDelivery& row) {
  by_id_.reset();
  by_id_.bind(1, message_id);
  auto has_row = by_id_.step();
  if (!has_row) return fail(has_row.error());
  if (!*has_row) {
    by_id_.reset();
    return false;
  }
  read_row(by_id_, row);
  return true;
}

Result<void> DeliveryQuery::start_export(const DeliveryFilter& filter, int64_t& first_seq, int64_t& last_seq) {
  window_.reset();
  const int64_t since = filter.since_ms.value_or(kMin);
  const int64_t until = filter.until_ms.value_or(kMax);
  bounds_.bind(1, since).bind(2, until);
  auto has_row = bounds_.step();
  if (!has_row) return fail(has_row.error());
  first_seq = *has_row ? bounds_.column_optional_int(0).value_or(0) : 0;
  last_seq = *has_row ? bounds_.column_optional_int(1).value_or(0) : 0;
  bounds_.reset();
  window_.bind(1, first_seq).bind(2, last_seq).bind(3, since).bind(4, until);
  if (filter.event_type_glob) {
    window_.bind(5, std::string_view(*filter.event_type_glob));
  } else {
    window_.bind_null(5);
  }
  window_.bind(6, int64_t{filter.webhooks_only ? 1 : 0});
  window_.bind(7, filter.status ? std::optional<std::string_view>(*filter.status) : std::nullopt);
  return {};
}

Result<bool> DeliveryQuery::next(StoredDelivery& row) {
  auto has_row = window_.step();
  if (!has_row) return fail(has_row.error());
  if (!*has_row) {
    window_.reset();
    return false;
  }
  read_row(window_, row);
  return true;
}

void DeliveryQuery::finish() {
  by_id_.reset();
  window_.reset();
}

}  // namespace hh::store
