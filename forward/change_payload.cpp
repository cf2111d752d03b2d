#include "forward/change_payload.h"

#include <vector>

#include "common/json_writer.h"
#include "common/timestamp.h"
#include "store/row_format.h"

namespace hh::forward {
namespace {

// The '/'-separated parts of a change key (store/sqlite/migrations/002-derived.sql).
std::vector<std::string> key_parts(std::string_view key) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t slash = key.find('/', start);
    parts.emplace_back(key.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

// Appends the first row of `query` for which `matches(row)` holds, as JSON; "null" when none.
template <typename Row, typename Query, typename Matches>
Result<void> append_first(std::string& out, Query& query, Matches&& matches) {
  Row row;
  for (;;) {
    auto next = query.next(row);
    if (!next) return fail(next);
    if (!*next) break;
    if (matches(row)) {
      store::append_json(out, row);
      query.finish();
      return {};
    }
  }
  out += "null";
  return {};
}

// The row a change names, by its key; "null" when it is gone.
template <typename Row, typename Query>
Result<void> append_by_key(std::string& out, Query& query, std::string_view key) {
  if (auto started = query.start_by_key(key); !started) return started;
  return append_first<Row>(out, query, [](Row&) { return true; });
}

// "row": the keyed table's row now.
Result<void> append_row(std::string& out, store::ReadStore& rows, const store::OutboxEntry& e) {
  const std::string_view table = e.table_name, key = e.row_key;
  if (table == "summaries") {
    if (auto started = rows.summaries().start_by_key(key); !started) return started;
    return append_first<store::StoredSummary>(out, rows.summaries(), [](store::StoredSummary& row) {
      row.with_identity = true;
      return true;
    });
  }
  if (table == "workout_streams") {
    store::StoredWorkoutStream stream;
    auto found = rows.streams().find_workout(key, stream);
    if (!found) return fail(found);
    if (*found) {
      store::append_json(out, stream);
    } else {
      out += "null";
    }
    return {};
  }
  if (table == "connections") return append_by_key<store::StoredConnection>(out, rows.connections(), key);
  if (table == "users") return append_by_key<store::StoredUser>(out, rows.users(), key);
  if (table == "providers") return append_by_key<store::StoredProvider>(out, rows.providers(), key);
  if (table == "devices") return append_by_key<store::StoredDevice>(out, rows.devices(), key);
  if (table == "lab_orders") return append_by_key<store::StoredLabOrder>(out, rows.lab_orders(), key);
  if (table == "lab_appointments") return append_by_key<store::StoredLabAppointment>(out, rows.lab_appointments(), key);
  if (table == "lab_results") return append_by_key<store::StoredLabResult>(out, rows.lab_results(), key);
  if (table == "lab_parsing_jobs") return append_by_key<store::StoredParsingJob>(out, rows.parsing_jobs(), key);
  if (table == "backfills") return append_by_key<store::StoredBackfill>(out, rows.backfills(), key);
  out += "null";  // stream points, samples (their `rows`), or a table this version does not know
  return {};
}

// "rows": the samples of the series the change wrote that are still the change's.
Result<void> append_samples(std::string& out, store::ReadStore& rows, const store::OutboxEntry& e) {
  const std::vector<std::string> key = key_parts(e.row_key);
  out += '[';
  if (key.size() >= 4 && e.from_ms && e.to_ms) {
    store::SampleFilter filter;
    filter.user_id = key[0];
    filter.resource = key[1];
    filter.provider = key[2];
    filter.source_type = e.row_key.substr(key[0].size() + key[1].size() + key[2].size() + 3);
    filter.since_ms = *e.from_ms;
    filter.until_ms = *e.to_ms + 1;
    if (auto started = rows.samples().start_by_series(filter); !started) return started;
    store::StoredSample sample;
    bool first = true;
    for (;;) {
      auto next = rows.samples().next(sample);
      if (!next) return fail(next);
      if (!*next) break;
      if (sample.seq != e.seq) continue;
      sample.with_identity = true;
      if (!first) out += ',';
      first = false;
      store::append_json(out, sample);
    }
  }
  out += ']';
  return {};
}

Result<std::optional<std::string>> client_user_id(store::ReadStore& rows, const std::optional<std::string>& user) {
  if (!user) return std::optional<std::string>{};
  if (auto started = rows.users().start_by_key(*user); !started) return fail(started);
  store::StoredUser row;
  std::optional<std::string> found;
  auto next = rows.users().next(row);
  if (!next) return fail(next);
  if (*next && row.client_user_id) found = std::string(*row.client_user_id);
  rows.users().finish();
  return found;
}

Result<void> append_change(std::string& out, store::ReadStore& rows, const store::OutboxEntry& e) {
  auto client = client_user_id(rows, e.user_id);
  if (!client) return fail(client);
  json::ObjectWriter change(out);
  change.string("id", message_id(e.outbox_id))
      .optional_string("event_type", e.event_type)
      .string("table", e.table_name)
      .string("key", e.row_key)
      .string("op", e.op)
      .integer("seq", e.seq)
      .optional_string("user_id", e.user_id)
      .optional_string("client_user_id", *client)
      .integer("row_count", e.row_count);
  std::string scratch;
  for (const auto& [name, ms] : {std::pair{"from", e.from_ms}, std::pair{"to", e.to_ms}}) {
    if (ms) {
      scratch.clear();
      append_rfc3339_ms(scratch, *ms);
      change.string(name, scratch);
    } else {
      change.null(name);
    }
  }
  scratch.clear();
  if (auto row = append_row(scratch, rows, e); !row) return row;
  change.raw("row", scratch);
  if (e.table_name == "samples") {
    scratch.clear();
    if (auto samples = append_samples(scratch, rows, e); !samples) return samples;
    change.raw("rows", scratch);
  }
  change.close();
  return {};
}

}  // namespace

std::string message_id(int64_t outbox_id) { return "hhf_" + std::to_string(outbox_id); }

std::string post_message_id(int64_t post_id) {
  return post_id < 0 ? message_id(-post_id) + ".1" : message_id(post_id);
}

Result<std::vector<std::string>> render_change_items(store::ReadStore& rows,
                                                    std::span<const store::OutboxEntry* const> entries) {
  store::ReadSnapshot snapshot(rows);
  if (!snapshot.begun()) return fail(snapshot.begun());
  std::vector<std::string> items;
  items.reserve(entries.size());
  for (const store::OutboxEntry* entry : entries) {
    std::string& item = items.emplace_back();
    if (auto appended = append_change(item, rows, *entry); !appended) {
      return fail(appended, "outbox entry " + std::to_string(entry->outbox_id));
    }
  }
  return items;
}

std::string changes_body(std::string_view destination, std::span<const std::string> items) {
  std::string body;
  json::ObjectWriter post(body);
  post.string("type", "healthhook.changes").string("destination", destination);
  std::string changes = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) changes += ',';
    changes += items[i];
  }
  changes += ']';
  post.raw("changes", changes);
  post.close();
  return body;
}

Result<std::string> render_changes(store::ReadStore& rows, std::string_view destination,
                                   std::span<const store::OutboxEntry* const> entries) {
  std::vector<const store::OutboxEntry*> unkept;
  for (const store::OutboxEntry* entry : entries) {
    if (!entry->content) unkept.push_back(entry);
  }
  std::vector<std::string> read;
  if (!unkept.empty()) {
    auto items = render_change_items(rows, unkept);
    if (!items) return fail(items);
    read = std::move(*items);
  }
  std::vector<std::string> items;
  items.reserve(entries.size());
  size_t next_read = 0;
  for (const store::OutboxEntry* entry : entries) {
    items.push_back(entry->content ? *entry->content : std::move(read[next_read++]));
  }
  return changes_body(destination, items);
}

}  // namespace hh::forward
