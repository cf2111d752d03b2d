// GET /v1/users/{user_id} and GET /v1/users/{user_id}/orders (api_pages.h): who a user is,
// and their lab testing, each from one read transaction.
#include "common/json_writer.h"
#include "api/api_pages.h"
#include "api/page_support.h"
#include "store/sqlite/queries/row_format.h"

namespace hh::api {
namespace {

// Appends every row of `query` (started) as a JSON array; false with the error on failure.
template <typename Row, typename Query>
Result<size_t> append_array(Query& query, std::string& body) {
  body.push_back('[');
  Row row;
  size_t count = 0;
  for (;;) {
    auto has_row = query.next(row);
    if (!has_row) return fail(has_row.error());
    if (!*has_row) break;
    if (count++ > 0) body.push_back(',');
    store::append_json(body, row);
  }
  body.push_back(']');
  return count;
}

}  // namespace

Page user_page(Reader& reader, const std::string& user_id, const ApiTarget& target) {
  const Params params(target, {});
  if (!params.error().empty()) return bad_parameter(params.error());
  ReadTransaction read(*reader.db);
  if (!read.begun()) return database_error(read.begun().error());
  store::RecordFilter filter;
  filter.user_id = user_id;

  Page page;
  page.body = "{\"user\":";
  reader.users.start(filter);
  store::StoredUser user;
  auto found = reader.users.next(user);
  if (!found) return database_error(found.error());
  if (*found) {
    store::append_json(page.body, user);
  } else {
    page.body.append("null");
  }
  reader.users.finish();
  // A user's connections (one per provider) and devices are few: no paging.
  page.body.append(",\"connections\":");
  reader.connections.start(filter);
  auto connections = append_array<store::StoredConnection>(reader.connections, page.body);
  if (!connections) return database_error(connections.error());
  page.body.append(",\"devices\":");
  reader.devices.start(filter);
  auto devices = append_array<store::StoredDevice>(reader.devices, page.body);
  if (!devices) return database_error(devices.error());
  page.body.push_back('}');
  if (!*found && *connections == 0 && *devices == 0) return error_page(http::Status::not_found, "no such user");
  return page;
}

Page user_orders_page(Reader& reader, const std::string& user_id, const ApiTarget& target) {
  const Params params(target, {"limit", "cursor"});
  if (!params.error().empty()) return bad_parameter(params.error());
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  std::optional<std::string> after;
  if (auto cursor = params.text("cursor")) {
    auto fields = cursor_fields(*cursor, "o1", 1);
    if (!fields) return bad_parameter(kBadCursor);
    after = std::move((*fields)[0]);
  }

  ReadTransaction read(*reader.db);
  if (!read.begun()) return database_error(read.begun().error());
  reader.order_ids.start(user_id, after ? std::optional<std::string_view>(*after) : std::nullopt, *limit + 1);
  Page page;
  page.body = "{\"items\":[";
  std::string_view order_id;
  // One item per order id: the order (null when only its appointment or result arrived),
  // its appointments and its critical result.
  const auto write_order = [&](std::string& body, std::string_view id) -> Result<void> {
    store::RecordFilter filter;
    filter.user_id = user_id;
    filter.order_id = std::string(id);
    body.append("{\"order_id\":");
    json::append_string(body, id);
    body.append(",\"order\":");
    reader.orders.start(filter);
    store::StoredLabOrder order;
    auto has_order = reader.orders.next(order);
    if (!has_order) return fail(has_order.error());
    if (*has_order) {
      store::append_json(body, order);
    } else {
      body.append("null");
    }
    reader.orders.finish();
    body.append(",\"appointments\":");
    reader.appointments.start(filter);
    if (auto listed = append_array<store::StoredLabAppointment>(reader.appointments, body); !listed) {
      return fail(listed.error());
    }
    body.append(",\"result\":");
    reader.results.start(filter);
    store::StoredLabResult result;
    auto has_result = reader.results.next(result);
    if (!has_result) return fail(has_result.error());
    if (*has_result) {
      store::append_json(body, result);
    } else {
      body.append("null");
    }
    reader.results.finish();
    body.push_back('}');
    return {};
  };
  Result<void> written;
  auto next_cursor = page_items(
      order_id, *limit, page.body, [&](std::string_view& id) { return reader.order_ids.next(id); },
      [&](std::string& body, std::string_view id) {
        if (written) written = write_order(body, id);
      },
      [](std::string_view id) { return "o1:" + std::string(id); });
  reader.order_ids.finish();
  if (!next_cursor) return database_error(next_cursor.error());
  if (!written) return database_error(written.error());
  close_items(page.body, *next_cursor);
  return page;
}

}  // namespace hh::api
