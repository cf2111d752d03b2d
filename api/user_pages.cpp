// GET /v1/users/{user_id} and GET /v1/users/{user_id}/orders (api_pages.h): who a user is,
// and their lab testing, each from one read snapshot.
#include "common/json_writer.h"
#include "api/api_pages.h"
#include "api/page_support.h"
#include "store/row_format.h"

namespace hh::api {
namespace {

// Starts `query` and appends its rows as a JSON array; the number of rows, or the error.
template <typename Row>
Result<size_t> append_array(store::RecordQuery<Row>& query, const store::RecordFilter& filter, std::string& body) {
  if (auto started = query.start(filter); !started) return fail(started);
  body.push_back('[');
  Row row;
  size_t count = 0;
  for (;;) {
    auto has_row = query.next(row);
    if (!has_row) return fail(has_row);
    if (!*has_row) break;
    if (count++ > 0) body.push_back(',');
    store::append_json(body, row);
  }
  body.push_back(']');
  return count;
}

// Starts `query` and appends its first row as a JSON object, or null; whether there was one.
template <typename Row>
Result<bool> append_first(store::RecordQuery<Row>& query, const store::RecordFilter& filter, std::string& body) {
  if (auto started = query.start(filter); !started) return fail(started);
  Row row;
  auto found = query.next(row);
  if (!found) return fail(found);
  if (*found) {
    store::append_json(body, row);
  } else {
    body.append("null");
  }
  query.finish();
  return *found;
}

// The items of a user answer (connections, then devices) within kMaxPageBytes, as
// page_items keeps a page: one is left out, with all after it, when it would take the answer
// past the budget; the first item of the answer is kept whatever its size (there is no next
// page to show it on). The user's own fields come before and are always there.
class BudgetedItems {
 public:
  explicit BudgetedItems(std::string& body) : body_(&body) {}

  // Starts `query` and appends its rows as a JSON array while they fit; the number of rows
  // written. Once the budget is reached the array is left empty and the query not started.
  template <typename Row>
  Result<size_t> append_array(store::RecordQuery<Row>& query, const store::RecordFilter& filter) {
    body_->push_back('[');
    size_t count = 0;
    if (!truncated_) {
      if (auto started = query.start(filter); !started) return fail(started);
      Row row;
      for (;;) {
        auto has_row = query.next(row);
        if (!has_row) return fail(has_row);
        if (!*has_row) break;
        const size_t before = body_->size();
        if (count > 0) body_->push_back(',');
        store::append_json(*body_, row);
        if (items_ > 0 && body_->size() > kMaxPageBytes) {  // this row would pass the budget
          body_->resize(before);
          query.finish();  // PostgreSQL: its cursor closed, no more rows fetched
          truncated_ = true;
          break;
        }
        ++count;
        ++items_;
      }
    }
    body_->push_back(']');
    return count;
  }

  bool truncated() const { return truncated_; }

 private:
  std::string* body_;
  size_t items_ = 0;
  bool truncated_ = false;
};

}  // namespace

Page user_page(Reader& reader, const std::string& user_id, const ApiTarget& target) {
  const Params params(target, {});
  if (!params.error().empty()) return bad_parameter(params.error());
  store::ReadSnapshot read(reader);
  if (!read.begun()) return database_error(read.begun());
  store::RecordFilter filter;
  filter.user_id = user_id;

  Page page;
  page.body = "{\"user\":";
  auto found = append_first(reader.users(), filter, page.body);
  if (!found) return database_error(found);
  // A user has a connection per provider and usually a few devices: no paging. But each
  // new device id adds a row, and a row can be as large as a delivery, so the answer stops
  // at the read API's budget and says so (decision 102): 12 devices of 1.8 MB made one
  // 43 MB answer, built whole in memory.
  BudgetedItems items(page.body);
  page.body.append(",\"connections\":");
  auto connections = items.append_array(reader.connections(), filter);
  if (!connections) return database_error(connections);
  page.body.append(",\"devices\":");
  auto devices = items.append_array(reader.devices(), filter);
  if (!devices) return database_error(devices);
  page.body.append(",\"truncated\":").append(items.truncated() ? "true" : "false").push_back('}');
  if (!*found && *connections == 0 && *devices == 0) return error_page(http::Status::not_found, "no such user");
  return page;
}

Page user_orders_page(Reader& reader, const std::string& user_id, const ApiTarget& target) {
  const Params params(target, {"limit", "cursor"});
  if (!params.error().empty()) return bad_parameter(params.error());
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  std::optional<std::string> after;
  const std::string kind = cursor_kind("o1", target);
  if (auto cursor = params.text("cursor")) {
    auto fields = cursor_fields(*cursor, kind, 1);
    if (!fields) return bad_parameter(kBadCursor);
    after = std::move((*fields)[0]);
  }

  store::ReadSnapshot read(reader);
  if (!read.begun()) return database_error(read.begun());
  store::UserOrderIdsQuery& order_ids = reader.user_order_ids();
  const auto after_id = after ? std::optional<std::string_view>(*after) : std::nullopt;
  if (auto started = order_ids.start(user_id, after_id, *limit + 1); !started) return database_error(started);
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
    if (auto order = append_first(reader.lab_orders(), filter, body); !order) return fail(order);
    body.append(",\"appointments\":");
    if (auto listed = append_array(reader.lab_appointments(), filter, body); !listed) return fail(listed);
    body.append(",\"result\":");
    if (auto result = append_first(reader.lab_results(), filter, body); !result) return fail(result);
    body.push_back('}');
    return {};
  };
  Result<void> written;
  auto next_cursor = page_items(
      order_id, *limit, page.body, [&](std::string_view& id) { return order_ids.next(id); },
      [&](std::string& body, std::string_view id) {
        if (written) written = write_order(body, id);
      },
      [&kind](std::string_view id) { return cursor_text(kind, {id}); });
  order_ids.finish();
  if (!next_cursor) return database_error(next_cursor);
  if (!written) return database_error(written);
  close_items(page.body, *next_cursor);
  return page;
}

}  // namespace hh::api
