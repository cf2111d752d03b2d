#include "store/queries/record_queries.h"

namespace hh::store {
namespace {

constexpr std::string_view kConnections =
    "SELECT user_id, provider, status, external_user_id, error_type, error_message, resource_availability, "
    "event_type, seq, data FROM connections "
    "WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR provider = ?2) ORDER BY user_id, provider";

constexpr std::string_view kLabOrders =
    "SELECT id, user_id, team_id, status, last_event_status, status_detail, interpretation, seq, data "
    "FROM lab_orders WHERE (?1 IS NULL OR user_id = ?1) ORDER BY id";

std::optional<std::string_view> view(const std::optional<std::string>& text) {
  return text ? std::optional<std::string_view>(*text) : std::nullopt;
}

// Steps `s`; resets it when done.
Result<bool> step(sqlite::Statement& s) {
  auto has_row = s.step();
  if (!has_row) return fail(has_row.error());
  if (!*has_row) s.reset();
  return *has_row;
}

}  // namespace

Result<ConnectionQuery> ConnectionQuery::create(sqlite::Connection& db) {
  auto all = db.prepare(kConnections);
  if (!all) return fail(all.error());
  return ConnectionQuery(std::move(*all));
}

void ConnectionQuery::start(const ConnectionFilter& filter) {
  all_.reset();
  all_.bind(1, view(filter.user_id)).bind(2, view(filter.provider));
}

Result<bool> ConnectionQuery::next(StoredConnection& row) {
  auto has_row = step(all_);
  if (!has_row || !*has_row) return has_row;
  row.user_id = all_.column_text(0);
  row.provider = all_.column_text(1);
  row.status = all_.column_text(2);
  row.external_user_id = all_.column_optional_text(3);
  row.error_type = all_.column_optional_text(4);
  row.error_message = all_.column_optional_text(5);
  row.resource_availability = all_.column_optional_text(6);
  row.event_type = all_.column_text(7);
  row.seq = all_.column_int(8);
  row.data = all_.column_text(9);
  return true;
}

Result<LabOrderQuery> LabOrderQuery::create(sqlite::Connection& db) {
  auto all = db.prepare(kLabOrders);
  if (!all) return fail(all.error());
  return LabOrderQuery(std::move(*all));
}

void LabOrderQuery::start(const LabOrderFilter& filter) {
  all_.reset();
  all_.bind(1, view(filter.user_id));
}

Result<bool> LabOrderQuery::next(StoredLabOrder& row) {
  auto has_row = step(all_);
  if (!has_row || !*has_row) return has_row;
  row.id = all_.column_text(0);
  row.user_id = all_.column_optional_text(1);
  row.team_id = all_.column_optional_text(2);
  row.status = all_.column_optional_text(3);
  row.last_event_status = all_.column_optional_text(4);
  row.status_detail = all_.column_optional_text(5);
  row.interpretation = all_.column_optional_text(6);
  row.seq = all_.column_int(7);
  row.data = all_.column_text(8);
  return true;
}

}  // namespace hh::store
