// The read-API pages of console_pages.h.
#include "api/console_pages.h"

#include <limits>
#include <set>

#include "api/page_support.h"
#include "common/glob_problem.h"
#include "common/json_writer.h"
#include "store/row_format.h"

namespace hh::api {
namespace {

using http::Status;

void append_delivery_item(std::string& body, const store::StoredDelivery& d) {
  json::ObjectWriter item(body);
  item.integer("seq", d.seq).string("message_id", d.message_id).string("origin", d.origin);
  item.integer("received_at_ms", d.received_at_ms);
  item.optional_string("event_type", d.event_type).optional_string("status", d.status);
  item.optional_string("family", d.family).optional_string("error", d.error);
  item.boolean("body_removed", d.body_removed_at_ms.has_value());
  item.close();
}

// The user ids a search names: user_id, or every user whose client_user_id it is.
Result<std::vector<std::string>> searched_users(Reader& reader, const Params& params) {
  std::vector<std::string> ids;
  if (auto id = params.text("user_id")) ids.emplace_back(*id);
  if (auto client = params.text("client_user_id")) {
    store::RecordFilter filter;
    filter.client_user_id = std::string(*client);
    auto& users = reader.users();
    if (auto started = users.start(filter); !started) return fail(started);
    store::StoredUser user;
    for (;;) {
      auto more = users.next(user);
      if (!more) return fail(more);
      if (!*more) break;
      ids.emplace_back(user.user_id);
    }
  }
  return ids;
}

}  // namespace

Page delivery_search_page(Reader& reader, const ApiTarget& target) {
  const Params params(target, {"user_id", "client_user_id", "event_type", "status", "origin", "start", "end", "limit",
                               "cursor"});
  if (!params.error().empty()) return bad_parameter(params.error());
  store::DeliveryFilter filter;
  if (auto v = params.text("event_type")) {
    // The shell's `[!…]` in SQLite's spelling, as the commands take it: SQLite reads `[!s]` as
    // "! or s", which listed exactly the family the operator meant to leave out.
    filter.event_type_glob = glob_with_shell_negation(*v);
    if (const std::string problem = glob_problem(*filter.event_type_glob); !problem.empty()) {
      return bad_parameter("event_type: " + problem);
    }
  }
  if (auto v = params.text("status")) {
    if (*v != "pending" && *v != "processed" && *v != "invalid" && *v != "ignored" && *v != "unknown") {
      return bad_parameter("status: expected pending, processed, invalid, ignored or unknown");
    }
    filter.status = std::string(*v);
  }
  if (auto v = params.text("origin")) {
    if (*v != "webhook" && *v != "any") return bad_parameter("origin: expected webhook or any");
    filter.webhooks_only = *v == "webhook";
  }
  auto window = params.window();
  if (!window) return bad_parameter(window.error());
  filter.since_ms = window->start_ms;
  filter.until_ms = window->end_ms;
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  std::optional<int64_t> before_seq;
  // A search: its filters are what it lists, each as read (times as UTC ms, as the
  // timeseries hash them), so "2024-05-16" and "2024-05-16T00:00:00Z" are one query.
  QueryFilters filters;
  for (const std::string_view name : {"user_id", "client_user_id", "event_type", "status", "origin"}) {
    if (auto v = params.text(name)) filters.emplace_back(name, std::string(*v));
  }
  if (window->start_ms) filters.emplace_back("start", std::to_string(*window->start_ms));
  if (window->end_ms) filters.emplace_back("end", std::to_string(*window->end_ms));
  const std::string kind = query_cursor_kind("d1", target, filters);
  if (auto cursor = params.text("cursor")) {
    auto fields = cursor_fields(*cursor, kind, 1);
    if (!fields) fields = combined_hash_cursor_fields(*cursor, "d1", 1);  // an earlier version's
    if (!fields) return bad_parameter(cursor_refusal(*cursor, kind));
    before_seq = parse_int((*fields)[0]);
    if (!before_seq) return bad_parameter(kBadCursor);
  }
  const bool by_user = params.text("user_id") || params.text("client_user_id");

  store::ReadSnapshot read(reader);
  if (!read.begun()) return database_error(read.begun());
  auto users = searched_users(reader, params);
  if (!users) return database_error(users);
  Page page;
  page.body = "{\"items\":[";
  if (by_user && users->empty()) {  // a client user id nobody has
    page.body.append("],\"next_cursor\":null,\"scanned\":0}");
    return page;
  }
  filter.user_ids = *users;  // each row read says whether it is theirs
  store::DeliveryQuery& deliveries = reader.deliveries();
  if (auto started = deliveries.start_newest_first(filter, before_seq); !started) {
    return database_error(started);
  }
  store::StoredDelivery row;
  int64_t count = 0, scanned = 0, last_seq = 0;
  std::optional<std::string> next_cursor;
  for (;;) {
    if (scanned == kMaxScannedPerPage) {  // more may follow: go on from here next time
      next_cursor = cursor_text(kind, {std::to_string(last_seq)});
      break;
    }
    auto more = deliveries.next(row);
    if (!more) return database_error(more);
    if (!*more) break;
    ++scanned;
    if (!row.of_searched_users) {
      last_seq = row.seq;
      continue;
    }
    // The row past the page (its limit, or its byte budget: page_support.h): read again by
    // the next one, counted there.
    if (count == *limit || (count > 0 && page.body.size() >= kMaxPageBytes)) {
      --scanned;
      next_cursor = cursor_text(kind, {std::to_string(last_seq)});
      break;
    }
    if (count++ > 0) page.body.push_back(',');
    append_delivery_item(page.body, row);
    last_seq = row.seq;
  }
  deliveries.finish();
  page.body.append("],\"next_cursor\":");
  if (next_cursor) {
    json::append_string(page.body, encode_cursor(*next_cursor));
  } else {
    page.body.append("null");
  }
  page.body.append(",\"scanned\":").append(std::to_string(scanned)).push_back('}');
  return page;
}

Page delivery_changes_page(Reader& reader, const std::string& message_id, const ApiTarget& target) {
  const Params params(target, {});
  if (!params.error().empty()) return bad_parameter(params.error());
  store::ReadSnapshot read(reader);
  if (!read.begun()) return database_error(read.begun());
  store::StoredDelivery delivery;
  auto found = reader.deliveries().find(message_id, delivery);
  if (!found) return database_error(found);
  if (!*found) return error_page(Status::not_found, "no delivery with this message id");
  const int64_t seq = delivery.seq;
  reader.deliveries().finish();
  // One delivery's changes are few (one per row key it touched): one page of the feed
  // from just before its seq holds them, up to the page limit.
  store::ChangeQuery& changes = reader.changes();
  if (auto started = changes.start_page(seq - 1, kMaxPageLimit); !started) return database_error(started);
  Page page;
  page.body = "{\"seq\":" + std::to_string(seq) + ",\"items\":[";
  store::StoredChange row;
  bool first = true, truncated = false;
  for (;;) {
    auto more = changes.next(row);
    if (!more) return database_error(more);
    if (!*more || row.seq != seq) break;
    if (!first && page.body.size() >= kMaxPageBytes) {  // the byte budget of every page (page_support.h)
      truncated = true;
      break;
    }
    if (!first) page.body.push_back(',');
    first = false;
    store::append_json(page.body, row);
  }
  changes.finish();
  page.body.append("],\"truncated\":").append(truncated ? "true" : "false").push_back('}');
  return page;
}

Page user_search_page(Reader& reader, const ApiTarget& target) {
  const Params params(target, {"user_id", "client_user_id"});
  if (!params.error().empty()) return bad_parameter(params.error());
  if (!params.text("user_id") && !params.text("client_user_id")) {
    return bad_parameter("give user_id or client_user_id");
  }
  store::RecordFilter filter;
  if (auto v = params.text("user_id")) filter.user_id = std::string(*v);
  if (auto v = params.text("client_user_id")) filter.client_user_id = std::string(*v);
  auto& users = reader.users();
  if (auto started = users.start(filter); !started) return database_error(started);
  Page page;
  page.body = "{\"items\":[";
  store::StoredUser user;
  for (bool first = true;; first = false) {
    auto more = users.next(user);
    if (!more) return database_error(more);
    if (!*more) break;
    if (!first) page.body.push_back(',');
    store::append_json(page.body, user);
  }
  page.body.append("]}");
  return page;
}

Page user_series_page(Reader& reader, const std::string& user_id, const ApiTarget& target) {
  const Params params(target, {});
  if (!params.error().empty()) return bad_parameter(params.error());
  store::ReadSnapshot read(reader);
  if (!read.begun()) return database_error(read.begun());
  store::ChartQuery& charts = reader.charts();
  Page page;
  page.body = "{\"series\":[";
  if (auto started = charts.start_series(user_id); !started) return database_error(started);
  store::StoredSeries series;
  for (bool first = true;; first = false) {
    auto more = charts.next(series);
    if (!more) return database_error(more);
    if (!*more) break;
    if (!first) page.body.push_back(',');
    json::ObjectWriter item(page.body);
    item.string("resource", series.resource).string("provider", series.provider).string("source_type", series.source_type);
    series.first_ms ? (void)item.integer("first_ms", *series.first_ms) : (void)item.null("first_ms");
    series.last_ms ? (void)item.integer("last_ms", *series.last_ms) : (void)item.null("last_ms");
    item.close();
  }
  page.body.append("],\"summaries\":[");
  if (auto started = charts.start_summary_kinds(user_id); !started) return database_error(started);
  store::StoredSummaryKind kind;
  for (bool first = true;; first = false) {
    auto more = charts.next(kind);
    if (!more) return database_error(more);
    if (!*more) break;
    if (!first) page.body.push_back(',');
    json::ObjectWriter item(page.body);
    item.string("resource", kind.resource).optional_string("provider", kind.provider);
    item.string("source_type", kind.source_type).integer("count", kind.count);
    kind.first_start_ms ? (void)item.integer("first_start_ms", *kind.first_start_ms) : (void)item.null("first_start_ms");
    kind.last_start_ms ? (void)item.integer("last_start_ms", *kind.last_start_ms) : (void)item.null("last_start_ms");
    item.close();
  }
  charts.finish();
  page.body.append("]}");
  return page;
}

Page user_backfills_page(Reader& reader, const std::string& user_id, const ApiTarget& target) {
  const Params params(target, {});
  if (!params.error().empty()) return bad_parameter(params.error());
  store::RecordFilter filter;
  filter.user_id = user_id;
  auto& backfills = reader.backfills();
  if (auto started = backfills.start(filter); !started) return database_error(started);
  Page page;
  page.body = "{\"items\":[";
  store::StoredBackfill row;
  for (bool first = true;; first = false) {
    auto more = backfills.next(row);
    if (!more) return database_error(more);
    if (!*more) break;
    if (!first) page.body.push_back(',');
    store::append_json(page.body, row);
  }
  page.body.append("]}");
  return page;
}

Page chart_page(Reader& reader, const std::string& user_id, const std::string& resource, const ApiTarget& target) {
  const Params params(target, {"start", "end", "buckets", "provider", "source_type"});
  if (!params.error().empty()) return bad_parameter(params.error());
  auto window = params.window();
  if (!window) return bad_parameter(window.error());
  if (!window->start_ms || !window->end_ms) return bad_parameter("start and end: a chart needs a range, start < end");
  const int64_t start = *window->start_ms, end = *window->end_ms;
  auto buckets = params.integer("buckets", 1, kMaxChartBuckets);
  if (!buckets) return bad_parameter(buckets.error());
  const int64_t count = buckets->value_or(kDefaultChartBuckets);
  const int64_t span = end - start;
  const int64_t bucket_ms = std::max<int64_t>(1, span / count + (span % count ? 1 : 0));
  store::SampleFilter filter;
  filter.user_id = user_id;
  filter.resource = resource;
  filter.since_ms = start;
  filter.until_ms = end;
  if (auto v = params.text("provider")) filter.provider = std::string(*v);
  if (auto v = params.text("source_type")) filter.source_type = std::string(*v);

  store::ChartQuery& charts = reader.charts();
  if (auto started = charts.start_buckets(filter, bucket_ms); !started) return database_error(started);
  Page page;
  page.body = "{\"start\":" + std::to_string(start) + ",\"end\":" + std::to_string(end) +
              ",\"bucket_ms\":" + std::to_string(bucket_ms) + ",\"series\":[";
  store::SampleBucket row;
  std::string current;  // provider/source_type of the series being written
  bool any = false, first_point = true;
  for (;;) {
    auto more = charts.next(row);
    if (!more) return database_error(more);
    if (!*more) break;
    const std::string source = std::string(row.provider) + "/" + std::string(row.source_type);
    if (!any || source != current) {
      if (any) page.body.append("]},");
      any = true;
      current = source;
      first_point = true;
      page.body.append("{\"provider\":");
      json::append_string(page.body, row.provider);
      page.body.append(",\"source_type\":");
      json::append_string(page.body, row.source_type);
      page.body.append(",\"points\":[");
    }
    if (!first_point) page.body.push_back(',');
    first_point = false;
    page.body.push_back('[');
    page.body.append(std::to_string(row.first_ms)).push_back(',');
    page.body.append(std::to_string(row.count)).push_back(',');
    json::append_number(page.body, row.min);
    page.body.push_back(',');
    json::append_number(page.body, row.max);
    page.body.push_back(',');
    json::append_number(page.body, row.mean);
    page.body.push_back(',');
    page.body.append(std::to_string(row.last_ms)).push_back(']');
  }
  charts.finish();
  if (any) page.body.append("]}");
  page.body.append("]}");
  return page;
}

}  // namespace hh::api
