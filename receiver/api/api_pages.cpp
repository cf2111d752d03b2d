#include "receiver/api/api_pages.h"

#include <charconv>
#include <limits>

#include "common/json_writer.h"
#include "common/log.h"
#include "store/queries/row_format.h"

namespace hh::api {
namespace {

using http::Status;

Page error_page(Status status, std::string_view message) {
  Page page{status, {}};
  json::ObjectWriter(page.body).string("error", message).close();
  return page;
}

Page bad_parameter(std::string_view message) { return error_page(Status::bad_request, message); }

Page database_error(std::string_view error) {
  log::error("read_api_failed").str("error", error);
  return error_page(Status::internal_server_error, "database error");
}

// A read transaction around one page: the page's statements see one snapshot.
class ReadTransaction {
 public:
  explicit ReadTransaction(sqlite::Connection& db) : db_(db), begun_(db.exec("BEGIN")) {}
  ~ReadTransaction() {
    if (begun_) (void)db_.exec("COMMIT");  // nothing was written: ending it cannot lose data
  }
  const Result<void>& begun() const { return begun_; }

 private:
  sqlite::Connection& db_;
  Result<void> begun_;
};

std::optional<int64_t> parse_int(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The plain text behind a cursor of `kind` ("s1:…"), split at the first `fields` colons.
std::optional<std::vector<std::string>> cursor_fields(std::string_view cursor, std::string_view kind, size_t fields) {
  auto plain = decode_cursor(cursor);
  if (!plain || !plain->starts_with(std::string(kind) + ":")) return std::nullopt;
  std::vector<std::string> parts;
  std::string_view rest = std::string_view(*plain).substr(kind.size() + 1);
  for (size_t i = 0; i + 1 < fields; ++i) {
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    parts.emplace_back(rest.substr(0, colon));
    rest.remove_prefix(colon + 1);
  }
  parts.emplace_back(rest);
  return parts;
}

constexpr std::string_view kBadCursor = "cursor: not a cursor of this listing";

// Reads limit (default/max above).
Result<int64_t> page_limit(const Params& params) {
  auto limit = params.integer("limit", 1, kMaxPageLimit);
  if (!limit) return fail(limit.error());
  return limit->value_or(kDefaultPageLimit);
}

// The filters timeseries and summary pages share: provider, source_type and the
// start/end window (SampleFilter and SummaryFilter have the same members for them).
template <typename Filter>
Result<void> read_source_and_window(const Params& params, Filter& filter) {
  if (auto v = params.text("provider")) filter.provider = std::string(*v);
  if (auto v = params.text("source_type")) filter.source_type = std::string(*v);
  auto start = params.time_ms("start");
  if (!start) return fail(start.error());
  auto end = params.time_ms("end");
  if (!end) return fail(end.error());
  filter.since_ms = *start;
  filter.until_ms = *end;
  return {};
}

void close_items(std::string& body, const std::optional<std::string>& next_cursor) {
  body.append("],\"next_cursor\":");
  if (next_cursor) {
    json::append_string(body, encode_cursor(*next_cursor));
  } else {
    body.append("null");
  }
  body.push_back('}');
}

}  // namespace

Page timeseries_page(Reader& reader, const std::string& user_id, const std::string& resource, const ApiTarget& target) {
  const Params params(target, {"start", "end", "provider", "source_type", "limit", "cursor"});
  if (!params.error().empty()) return bad_parameter(params.error());
  store::SampleFilter filter;
  filter.user_id = user_id;
  filter.resource = resource;
  if (auto read = read_source_and_window(params, filter); !read) return bad_parameter(read.error());
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  std::optional<store::SamplePosition> after;
  if (auto cursor = params.text("cursor")) {
    auto fields = cursor_fields(*cursor, "s1", 2);
    std::optional<int64_t> t, series;
    if (fields) {
      t = parse_int((*fields)[0]);
      series = parse_int((*fields)[1]);
    }
    if (!t || !series) return bad_parameter(kBadCursor);
    after = store::SamplePosition{*t, *series};
  }

  ReadTransaction read(*reader.db);
  if (!read.begun()) return database_error(read.begun().error());
  if (auto started = reader.samples.start_by_time(filter, after); !started) return database_error(started.error());
  Page page;
  page.body = "{\"items\":[";
  store::StoredSample row;
  int64_t count = 0;
  bool more = false;
  std::string next_cursor;
  for (;;) {
    auto has_row = reader.samples.next(row);
    if (!has_row) {
      reader.samples.finish();
      return database_error(has_row.error());
    }
    if (!*has_row) break;
    if (count == *limit) {  // a row past the limit: there is a next page
      more = true;
      break;
    }
    if (count++ > 0) page.body.push_back(',');
    store::append_json(page.body, row);
    next_cursor = "s1:" + std::to_string(row.t_ms) + ":" + std::to_string(row.series_id);
  }
  reader.samples.finish();
  close_items(page.body, more ? std::optional<std::string>(next_cursor) : std::nullopt);
  return page;
}

Page summaries_page(Reader& reader, const std::string& user_id, const std::string& resource, const ApiTarget& target) {
  const Params params(target, {"start", "end", "provider", "source_type", "limit", "cursor"});
  if (!params.error().empty()) return bad_parameter(params.error());
  store::SummaryFilter filter;
  filter.user_id = user_id;
  filter.resource = resource;
  if (auto read = read_source_and_window(params, filter); !read) return bad_parameter(read.error());
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  std::optional<store::SummaryPosition> after;
  if (auto cursor = params.text("cursor")) {
    // "m1:<start_ms or empty>:<id>"
    auto fields = cursor_fields(*cursor, "m1", 2);
    if (!fields) return bad_parameter(kBadCursor);
    store::SummaryPosition position;
    if (!(*fields)[0].empty()) {
      position.start_ms = parse_int((*fields)[0]);
      if (!position.start_ms) return bad_parameter(kBadCursor);
    }
    position.id = (*fields)[1];
    after = std::move(position);
  }

  ReadTransaction read(*reader.db);
  if (!read.begun()) return database_error(read.begun().error());
  if (auto started = reader.summaries.start_page(filter, after, *limit + 1); !started) {
    return database_error(started.error());
  }
  Page page;
  page.body = "{\"items\":[";
  store::StoredSummary row;
  int64_t count = 0;
  bool more = false;
  std::string next_cursor;
  for (;;) {
    auto has_row = reader.summaries.next(row);
    if (!has_row) {
      reader.summaries.finish();
      return database_error(has_row.error());
    }
    if (!*has_row) break;
    if (count == *limit) {
      more = true;
      break;
    }
    if (count++ > 0) page.body.push_back(',');
    store::append_json(page.body, row);
    next_cursor = "m1:" + (row.start_ms ? std::to_string(*row.start_ms) : std::string()) + ":" + std::string(row.id);
  }
  reader.summaries.finish();
  close_items(page.body, more ? std::optional<std::string>(next_cursor) : std::nullopt);
  return page;
}

Page stream_page(Reader& reader, const std::string& workout_id, const ApiTarget& target) {
  const Params params(target, {"limit", "cursor"});
  if (!params.error().empty()) return bad_parameter(params.error());
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  std::optional<int64_t> after_idx;
  if (auto cursor = params.text("cursor")) {
    auto fields = cursor_fields(*cursor, "p1", 1);
    if (fields) after_idx = parse_int((*fields)[0]);
    if (!after_idx) return bad_parameter(kBadCursor);
  }

  ReadTransaction read(*reader.db);
  if (!read.begun()) return database_error(read.begun().error());
  store::StoredWorkoutStream workout;
  auto found = reader.streams.find_workout(workout_id, workout);
  if (!found) return database_error(found.error());
  Page page;
  page.body = "{\"workout\":";
  if (*found) {
    store::append_json(page.body, workout);
  } else {
    page.body.append("null");
  }
  page.body.append(",\"items\":[");
  reader.streams.start_page(workout_id, after_idx, *limit + 1);
  store::StoredStreamPoint row;
  int64_t count = 0;
  bool more = false;
  std::string next_cursor;
  for (;;) {
    auto has_row = reader.streams.next(row);
    if (!has_row) {
      reader.streams.finish();
      return database_error(has_row.error());
    }
    if (!*has_row) break;
    if (count == *limit) {
      more = true;
      break;
    }
    if (count++ > 0) page.body.push_back(',');
    store::append_json(page.body, row);
    next_cursor = "p1:" + std::to_string(row.idx);
  }
  reader.streams.finish();
  if (!*found && count == 0 && !after_idx) return error_page(Status::not_found, "no such workout");
  close_items(page.body, more ? std::optional<std::string>(next_cursor) : std::nullopt);
  return page;
}

Page changes_page(Reader& reader, const ApiTarget& target) {
  const Params params(target, {"after", "limit"});
  if (!params.error().empty()) return bad_parameter(params.error());
  auto after = params.integer("after", 0, std::numeric_limits<int64_t>::max());
  if (!after) return bad_parameter(after.error());
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  const int64_t after_seq = after->value_or(0);

  ReadTransaction read(*reader.db);
  if (!read.begun()) return database_error(read.begun().error());
  if (auto started = reader.changes.start_page(after_seq, *limit); !started) return database_error(started.error());
  Page page;
  page.body = "{\"items\":[";
  store::StoredChange row;
  int64_t next_after = after_seq;
  bool first = true;
  for (;;) {
    auto has_row = reader.changes.next(row);
    if (!has_row) {
      reader.changes.finish();
      return database_error(has_row.error());
    }
    if (!*has_row) break;
    if (!first) page.body.push_back(',');
    first = false;
    store::append_json(page.body, row);
    next_after = row.seq;
  }
  page.body.append("],\"next_after\":").append(std::to_string(next_after)).push_back('}');
  return page;
}

Page delivery_page(Reader& reader, const std::string& message_id, const ApiTarget& target) {
  const Params params(target, {});
  if (!params.error().empty()) return bad_parameter(params.error());
  store::StoredDelivery row;
  auto found = reader.deliveries.find(message_id, row);
  if (!found) return database_error(found.error());
  if (!*found) return error_page(Status::not_found, "no delivery with this message id");
  Page page;
  store::append_json(page.body, row);
  reader.deliveries.finish();
  return page;
}

}  // namespace hh::api
