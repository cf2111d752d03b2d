// The read-API pages of outbox_pages.h.
#include "api/outbox_pages.h"

#include <algorithm>
#include <limits>
#include <map>

#include "api/page_support.h"
#include "common/json_scan.h"
#include "common/json_writer.h"
#include "store/open_store.h"

namespace hh::api {
namespace {

std::optional<std::string_view> view(const std::optional<std::string>& text) {
  return text ? std::optional<std::string_view>(*text) : std::nullopt;
}

void append_entry(std::string& body, const store::OutboxEntry& e) {
  json::ObjectWriter item(body);
  item.integer("outbox_id", e.outbox_id).string("destination", e.destination).string("kind", e.kind);
  item.integer("seq", e.seq).optional_string("event_type", view(e.event_type));
  item.string("table", e.table_name).string("key", e.row_key).string("op", e.op).integer("row_count", e.row_count);
  item.optional_string("user_id", view(e.user_id)).string("state", e.state).integer("attempts", e.attempts);
  item.integer("created_at_ms", e.created_at_ms).integer("next_attempt_at_ms", e.next_attempt_at_ms);
  e.last_status ? (void)item.integer("last_status", *e.last_status) : (void)item.null("last_status");
  item.optional_string("last_error", view(e.last_error));
  item.close();
}

void append_job(std::string& body, const store::JobRow& job) {
  json::ObjectWriter item(body);
  item.integer("job_id", job.job_id).string("kind", job.kind).string("job_key", job.job_key).string("state", job.state);
  item.integer("attempts", job.attempts).integer("next_attempt_at_ms", job.next_attempt_at);
  item.optional_string("last_error", view(job.last_error)).integer("trigger_seq", job.trigger_seq);
  if (json::check_json(job.payload)) {
    item.raw("payload", job.payload);
  } else {
    item.string("payload", job.payload);
  }
  item.integer("created_at_ms", job.created_at).integer("updated_at_ms", job.updated_at);
  item.close();
}

}  // namespace

Page forwarding_page(const store::Database& database, const std::vector<std::string>& destinations,
                     const ApiTarget& target) {
  const Params params(target, {});
  if (!params.error().empty()) return bad_parameter(params.error());
  auto outbox = store::open_outbox(database);
  if (!outbox) return database_error(outbox);
  auto figures = (*outbox)->figures();
  if (!figures) return database_error(figures);
  auto paused = (*outbox)->paused();
  if (!paused) return database_error(paused);
  std::map<std::string, store::OutboxFigures> by_name;
  for (auto& f : *figures) by_name[f.destination] = f;
  // Configured destinations first (in settings order), then any the outbox still holds.
  std::vector<std::string> names = destinations;
  for (const auto& [name, f] : by_name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  Page page;
  page.body = "{\"destinations\":[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) page.body.push_back(',');
    const auto found = by_name.find(names[i]);
    store::OutboxFigures none;  // a destination with nothing in the outbox
    none.destination = names[i];
    const store::OutboxFigures& f = found == by_name.end() ? none : found->second;
    json::ObjectWriter item(page.body);
    item.string("destination", f.destination).integer("pending", f.pending).integer("dead", f.dead);
    item.integer("dropped", f.dropped);
    item.boolean("paused", std::find(paused->begin(), paused->end(), f.destination) != paused->end());
    f.oldest_pending_created_at_ms ? (void)item.integer("oldest_pending_created_at_ms", *f.oldest_pending_created_at_ms)
                                   : (void)item.null("oldest_pending_created_at_ms");
    item.boolean("configured", std::find(destinations.begin(), destinations.end(), f.destination) != destinations.end());
    item.close();
  }
  page.body.append("]}");
  return page;
}

Page forwarding_entries_page(const store::Database& database, const std::vector<std::string>& destinations,
                             const std::string& destination, const ApiTarget& target) {
  const Params params(target, {"state", "seq", "limit", "cursor"});
  if (!params.error().empty()) return bad_parameter(params.error());
  store::OutboxSelection selection;
  selection.destination = destination;
  // One delivery's entries, asked of the store: the console's delivery page read a state's
  // first 1,000 and kept those of its seq, and a delivery beyond them showed none.
  auto seq = params.integer("seq", 1, std::numeric_limits<int64_t>::max());
  if (!seq) return bad_parameter(seq.error());
  selection.seq = *seq;
  if (auto state = params.text("state")) {
    if (*state != "pending" && *state != "dead" && *state != "dropped") {
      return bad_parameter("state: expected pending, dead or dropped");
    }
    selection.state = std::string(*state);
  }
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  selection.limit = *limit + 1;
  // Its state and seq, as read ("seq=07" and "seq=7" are one query).
  QueryFilters filters;
  if (selection.seq) filters.emplace_back("seq", std::to_string(*selection.seq));
  if (selection.state) filters.emplace_back("state", *selection.state);
  const std::string kind = query_cursor_kind("f1", target, filters);
  if (auto cursor = params.text("cursor")) {
    auto fields = cursor_fields(*cursor, kind, 1);
    if (!fields) return bad_parameter(cursor_refusal(*cursor, kind));
    const std::optional<int64_t> after = parse_int((*fields)[0]);
    if (!after) return bad_parameter(kBadCursor);
    selection.after_id = *after;
  }
  auto outbox = store::open_outbox(database);
  if (!outbox) return database_error(outbox);
  if (std::find(destinations.begin(), destinations.end(), destination) == destinations.end()) {
    // Not configured: listed while the outbox still holds something of it, as /v1/forwarding
    // lists it (a [[forward]] block removed keeps its entries). Any other name is a 404, as
    // any unknown path (it was an empty page, as if the destination had nothing waiting).
    // One entry or one dropped range of it is enough to tell (not every destination's figures).
    store::OutboxSelection any;
    any.destination = destination;
    any.limit = 1;
    auto entry = (*outbox)->list(any);
    if (!entry) return database_error(entry);
    if (entry->empty()) {
      auto ranges = (*outbox)->dropped(destination);
      if (!ranges) return database_error(ranges);
      if (ranges->empty()) return error_page(http::Status::not_found, "no [[forward]] destination by that name");
    }
  }
  auto entries = (*outbox)->list(selection);
  if (!entries) return database_error(entries);
  Page page;
  page.body = "{\"items\":[";
  // The entries are in memory already (limit + 1 of them); the page still keeps to the
  // byte budget of every listing (an entry's last_error can be long).
  size_t next_index = 0;
  const store::OutboxEntry* entry = nullptr;
  auto next_cursor = page_items(
      entry, *limit, page.body,
      [&](const store::OutboxEntry*& e) -> Result<bool> {
        if (next_index == entries->size()) return false;
        e = &(*entries)[next_index++];
        return true;
      },
      [](std::string& body, const store::OutboxEntry* e) { append_entry(body, *e); },
      [&kind](const store::OutboxEntry* e) { return cursor_text(kind, {std::to_string(e->outbox_id)}); });
  if (!next_cursor) return database_error(next_cursor);
  close_items(page.body, *next_cursor);
  return page;
}

Page jobs_page(const store::Database& database, const ApiTarget& target) {
  const Params params(target, {"state", "limit"});
  if (!params.error().empty()) return bad_parameter(params.error());
  std::optional<std::string> state;
  if (auto v = params.text("state")) {
    if (*v != "queued" && *v != "running" && *v != "done" && *v != "dead") {
      return bad_parameter("state: expected queued, running, done or dead");
    }
    state = std::string(*v);
  }
  auto limit = page_limit(params);
  if (!limit) return bad_parameter(limit.error());
  auto admin = store::open_job_admin(database);
  if (!admin) return database_error(admin);
  auto jobs = (*admin)->list(state, *limit + 1);  // one more: whether the page is truncated
  if (!jobs) return database_error(jobs);
  Page page;
  page.body = "{\"items\":[";
  size_t shown = std::min(jobs->size(), static_cast<size_t>(*limit));
  for (size_t i = 0; i < shown; ++i) {
    if (i && page.body.size() >= kMaxPageBytes) {  // the byte budget of every page (page_support.h)
      shown = i;
      break;
    }
    if (i) page.body.push_back(',');
    append_job(page.body, (*jobs)[i]);
  }
  page.body.append("],\"truncated\":").append(shown < jobs->size() ? "true" : "false").push_back('}');
  return page;
}

}  // namespace hh::api
