#include "api/api_pages.h"

#include <limits>

#include "api/page_support.h"
#include "api/signature_masking.h"
#include "common/json_writer.h"
#include "store/row_format.h"

namespace hh::api {
namespace {

using http::Status;

// The filters timeseries and summary pages share: provider, source_type and the
// start/end window (SampleFilter and SummaryFilter have the same members for them).
template <typename Filter>
Result<void> read_source_and_window(const Params& params, Filter& filter) {
  if (auto v = params.text("provider")) filter.provider = std::string(*v);
  if (auto v = params.text("source_type")) filter.source_type = std::string(*v);
  auto window = params.window();
  if (!window) return fail(window);
  filter.since_ms = window->start_ms;
  filter.until_ms = window->end_ms;
  return {};
}

// The filters a timeseries or summary cursor is bound to (page_support.h): the same ones,
// read the same way, on every page of a walk.
template <typename Filter>
QueryFilters source_and_window_filters(const Filter& filter) {
  QueryFilters filters;
  if (filter.provider) filters.emplace_back("provider", *filter.provider);
  if (filter.source_type) filters.emplace_back("source_type", *filter.source_type);
  if (filter.since_ms) filters.emplace_back("start", std::to_string(*filter.since_ms));
  if (filter.until_ms) filters.emplace_back("end", std::to_string(*filter.until_ms));
  return filters;
}

// A stream page's cursor kind: the workout's path, then the fetch its points are from
// ("0" before the first fetch; a fetch is an inbox seq, 1 or more). Built as a listing
// with filters is (query_cursor_kind), so that cursor_refusal tells a cursor of another
// fetch of this workout from one of another listing.
std::string stream_cursor_kind(const ApiTarget& target, std::optional<int64_t> fetched_seq) {
  return cursor_kind("p1", target) + "." + std::to_string(fetched_seq.value_or(0));
}

// Appends one row as a JSON item.
constexpr auto kJsonItem = [](std::string& body, const auto& row) { store::append_json(body, row); };

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
  const std::string kind = query_cursor_kind("s1", target, source_and_window_filters(filter));
  if (auto cursor = params.text("cursor")) {
    auto fields = cursor_fields(*cursor, kind, 2);
    if (!fields) return bad_parameter(cursor_refusal(*cursor, kind));
    const std::optional<int64_t> t = parse_int((*fields)[0]), series = parse_int((*fields)[1]);
    if (!t || !series) return bad_parameter(kBadCursor);
    after = store::SamplePosition{*t, *series};
  }

  store::ReadSnapshot read(reader);
  if (!read.begun()) return database_error(read.begun());
  store::SampleQuery& samples = reader.samples();
  if (auto started = samples.start_by_time(filter, after); !started) return database_error(started);
  Page page;
  page.body = "{\"items\":[";
  store::StoredSample row;
  row.with_identity = true;
  auto next_cursor = page_items(
      row, *limit, page.body, [&](store::StoredSample& r) { return samples.next(r); }, kJsonItem,
      [&kind](const store::StoredSample& r) {
        return cursor_text(kind, {std::to_string(r.t_ms), std::to_string(r.series_id)});
      });
  samples.finish();
  if (!next_cursor) return database_error(next_cursor);
  close_items(page.body, *next_cursor);
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
  const std::string kind = query_cursor_kind("m1", target, source_and_window_filters(filter));
  if (auto cursor = params.text("cursor")) {
    // "m1.<path>.<filters>:<start_ms or empty>:<id>"
    auto fields = cursor_fields(*cursor, kind, 2);
    if (!fields) return bad_parameter(cursor_refusal(*cursor, kind));
    store::SummaryPosition position;
    if (!(*fields)[0].empty()) {
      position.start_ms = parse_int((*fields)[0]);
      if (!position.start_ms) return bad_parameter(kBadCursor);
    }
    position.id = (*fields)[1];
    after = std::move(position);
  }

  store::ReadSnapshot read(reader);
  if (!read.begun()) return database_error(read.begun());
  store::SummaryQuery& summaries = reader.summaries();
  if (auto started = summaries.start_page(filter, after, *limit + 1); !started) {
    return database_error(started);
  }
  Page page;
  page.body = "{\"items\":[";
  store::StoredSummary row;
  row.with_identity = true;
  auto next_cursor = page_items(
      row, *limit, page.body, [&](store::StoredSummary& r) { return summaries.next(r); }, kJsonItem,
      [&kind](const store::StoredSummary& r) {
        return cursor_text(kind, {r.start_ms ? std::to_string(*r.start_ms) : std::string(), r.id});
      });
  summaries.finish();
  if (!next_cursor) return database_error(next_cursor);
  close_items(page.body, *next_cursor);
  return page;
}

Page stream_page(Reader& reader, const std::string& workout_id, const ApiTarget& target) {
  const Params params(target, {"limit", "cursor"});
  if (!params.error().empty()) return bad_parameter(params.error());
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());

  store::ReadSnapshot read(reader);
  if (!read.begun()) return database_error(read.begun());
  store::StreamQuery& streams = reader.streams();
  store::StoredWorkoutStream workout;
  auto found = streams.find_workout(workout_id, workout);
  if (!found) return database_error(found);
  // "p1.<path>.<fetched_seq>:<idx>": an index is a place in one fetch's points only. A
  // later fetch replaces them all (another length, other points at each index), so a
  // cursor of an earlier fetch would go on in the new one from its index, after the old
  // one's first points: it is refused (kStreamFetchedAgain), as a cursor of other filters
  // is. An earlier version's cursor ("p1.<path>:<idx>") names no fetch and still pages.
  const std::string kind = stream_cursor_kind(target, *found ? workout.fetched_seq : std::nullopt);
  std::optional<int64_t> after_idx;
  if (auto cursor = params.text("cursor")) {
    auto fields = cursor_fields(*cursor, kind, 1);
    if (!fields) {
      const std::string_view why = cursor_refusal(*cursor, kind);
      return bad_parameter(why == kOtherQueryCursor ? kStreamFetchedAgain : why);
    }
    after_idx = parse_int((*fields)[0]);
    if (!after_idx) return bad_parameter(kBadCursor);
  }

  Page page;
  page.body = "{\"workout\":";
  if (*found) {
    store::append_json(page.body, workout);
  } else {
    page.body.append("null");
  }
  page.body.append(",\"items\":[");
  if (auto started = streams.start_page(workout_id, after_idx, *limit + 1); !started) {
    return database_error(started);
  }
  store::StoredStreamPoint row;
  bool any = false;
  auto next_cursor = page_items(
      row, *limit, page.body, [&](store::StoredStreamPoint& r) { return streams.next(r); },
      [&](std::string& body, const store::StoredStreamPoint& r) {
        any = true;
        store::append_json(body, r);
      },
      [&kind](const store::StoredStreamPoint& r) { return cursor_text(kind, {std::to_string(r.idx)}); });
  streams.finish();
  if (!next_cursor) return database_error(next_cursor);
  if (!*found && !any && !after_idx) return error_page(Status::not_found, "no such workout");
  close_items(page.body, *next_cursor);
  return page;
}

Page changes_page(Reader& reader, const ApiTarget& target) {
  const Params params(target, {"after", "limit", "cursor"});
  if (!params.error().empty()) return bad_parameter(params.error());
  auto after = params.integer("after", 0, std::numeric_limits<int64_t>::max());
  if (!after) return bad_parameter(after.error());
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  store::ChangePosition from{after->value_or(0), std::nullopt};
  const std::string kind = cursor_kind("c1", target);
  if (auto cursor = params.text("cursor")) {
    // "c1.<path>:<seq>:<change_id>": inside seq, after that change (a page that ended inside a seq).
    if (*after) return bad_parameter("cursor: give either after or cursor");
    auto fields = cursor_fields(*cursor, kind, 2);
    std::optional<int64_t> seq, change_id;
    if (fields) {
      seq = parse_int((*fields)[0]);
      change_id = parse_int((*fields)[1]);
    }
    if (!seq || !change_id || *seq < 1) return bad_parameter(kBadCursor);
    from = store::ChangePosition{*seq, *change_id};
  }

  store::ReadSnapshot read(reader);
  if (!read.begun()) return database_error(read.begun());
  store::ChangeQuery& changes = reader.changes();
  if (auto started = changes.start_page(from, *limit); !started) return database_error(started);
  Page page;
  page.body = "{\"items\":[";
  store::StoredChange row;
  int64_t count = 0;
  std::optional<int64_t> first_seq, last_seq, last_change_id;
  // Where the seq being written began in the body, and the seq before it: a page cut by
  // bytes (kMaxPageBytes) inside a seq other than its first ends before that seq instead,
  // at a seq boundary, as the store's pages do whenever they can.
  size_t seq_begins_at = 0;
  std::optional<int64_t> seq_before;
  std::optional<bool> cut_inside;  // set when the page was cut by bytes: inside a seq or at a boundary
  for (;;) {
    auto more = changes.next(row);
    if (!more) return database_error(more);
    if (!*more) break;
    const bool new_seq = row.seq != last_seq;
    if (count > 0 && page.body.size() >= kMaxPageBytes) {
      cut_inside = !new_seq;
      break;
    }
    const size_t before = page.body.size();
    if (count > 0) page.body.push_back(',');
    store::append_json(page.body, row);
    if (count > 0 && page.body.size() > kMaxPageBytes) {  // this change starts the next page
      page.body.resize(before);
      cut_inside = !new_seq;
      break;
    }
    if (new_seq) {
      seq_begins_at = before;
      seq_before = last_seq;
    }
    if (!first_seq) first_seq = row.seq;
    ++count;
    last_seq = row.seq;
    last_change_id = row.change_id;
  }
  changes.finish();
  if (cut_inside && *cut_inside && *last_seq != *first_seq) {  // back to the end of the seq before
    page.body.resize(seq_begins_at);
    last_seq = seq_before;
    cut_inside = false;
  }
  // next_after: the last seq all of whose changes have been handed out. A page that ends
  // inside a seq has handed out all of the seqs before it (seq - 1 then means "from that
  // seq on"), and next_cursor goes on inside it.
  int64_t next_after = from.after_seq;
  std::optional<std::string> next_cursor;
  if (last_seq) {
    const bool inside = cut_inside ? *cut_inside : changes.ends_inside_seq();
    next_after = inside ? *last_seq - 1 : *last_seq;
    if (inside) next_cursor = cursor_text(kind, {std::to_string(*last_seq), std::to_string(*last_change_id)});
  }
  page.body.append("],\"next_after\":").append(std::to_string(next_after)).append(",\"next_cursor\":");
  if (next_cursor) {
    json::append_string(page.body, encode_cursor(*next_cursor));
  } else {
    page.body.append("null");
  }
  page.body.push_back('}');
  return page;
}

Page erasures_page(Reader& reader, const ApiTarget& target) {
  const Params params(target, {"after", "limit"});
  if (!params.error().empty()) return bad_parameter(params.error());
  auto after = params.integer("after", 0, std::numeric_limits<int64_t>::max());
  if (!after) return bad_parameter(after.error());
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  const int64_t after_id = after->value_or(0);

  store::ReadSnapshot read(reader);
  if (!read.begun()) return database_error(read.begun());
  store::ErasureQuery& erasures = reader.erasures();
  if (auto started = erasures.start_page(after_id, *limit); !started) return database_error(started);
  Page page;
  page.body = "{\"items\":[";
  store::StoredErasure row;
  int64_t next_after = after_id;
  for (bool first = true;; first = false) {  // at most `limit` small rows: within any byte budget
    auto more = erasures.next(row);
    if (!more) return database_error(more);
    if (!*more) break;
    if (!first) page.body.push_back(',');
    json::ObjectWriter(page.body)
        .integer("erasure_id", row.erasure_id)
        .string("user_id", row.user_id)
        .integer("erased_at_ms", row.erased_at_ms)
        .close();
    next_after = row.erasure_id;
  }
  erasures.finish();
  page.body.append("],\"next_after\":").append(std::to_string(next_after)).push_back('}');
  return page;
}

Page delivery_page(Reader& reader, const std::string& message_id, const ApiTarget& target, bool mask_signatures) {
  const Params params(target, {});
  if (!params.error().empty()) return bad_parameter(params.error());
  store::StoredDelivery row;
  store::DeliveryQuery& deliveries = reader.deliveries();
  auto found = deliveries.find(message_id, row);
  if (!found) return database_error(found);
  if (!*found) return error_page(Status::not_found, "no delivery with this message id");
  Page page;
  std::string masked;
  if (mask_signatures && !row.headers.empty()) {
    masked = mask_signature_headers(row.headers);
    row.headers = masked;
  }
  store::append_json(page.body, row);
  deliveries.finish();
  return page;
}

}  // namespace hh::api
