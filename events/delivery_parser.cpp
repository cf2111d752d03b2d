// DeliveryParser: loads one inbox row into a padded buffer, walks the envelope (webhooks)
// or reads the fetch context (fetched rows), and hands $.data / the page to the family
// readers (family_parsers.h). Every value of the document is read exactly once, so a row
// that comes back `processed` was valid JSON throughout.
//
// Webhook envelope (reference notes §2.1), members in any order:
//   {"event_type": "…", "data": {…} | […], "user_id": "…", "client_user_id": "…", "team_id": "…"}
#include "events/delivery_parser.h"

#include <simdjson.h>

#include <string>
#include <vector>

#include "events/classify.h"
#include "events/family_parsers.h"
#include "events/json_reader.h"
#include "events/known_resources.h"
#include "rows/stream_points.h"
#include "common/json_scan.h"
#include "common/parsing_job_answer.h"
#include "common/timestamp.h"

namespace hh::events {

struct DeliveryParser::Impl {
  explicit Impl(const ParseLimits& parse_limits)
      : limits(parse_limits), parser(limits.max_document_bytes), json(limits) {}

  ParseResult parse(const InboxRow& row, DeliveryRows& out);

  bool parse_webhook(const InboxRow& row, DeliveryRows& out, Status& status);
  bool parse_fetched(const InboxRow& row, DeliveryRows& out);

  // Copies `text` into the padded buffer and starts a document on it; `what` names it in
  // errors ("body", "fetch context"). open() also requires the root to be an object.
  bool open_document(std::string_view text, std::string_view what, od::document& doc);
  bool open(std::string_view text, std::string_view what, od::document& doc, od::object& root);
  // True when nothing but whitespace follows the top-level object.
  bool at_end(od::document& doc, std::string_view what);
  bool find_event_type(od::document& doc, od::object& root);
  bool read_fetch_context(std::string_view headers_json, FetchContext& context);
  bool apply_envelope_user(std::optional<std::string_view> envelope_user_id, DeliveryRows& out);
  // An envelope id (client_user_id, team_id): a string or a number as text; any other
  // value (a boolean too: it was kept as the id "true") is validated and left out:
  // identity is never a reason to reject a delivery.
  bool read_envelope_text(od::value v, std::string_view key, std::optional<std::string_view>& out);

  ParseLimits limits;
  od::parser parser;
  JsonReader json;
  std::string padded;          // the document being parsed, with simdjson's padding after it
  size_t padded_size = 0;
  std::string event_type;      // owned, so views of it outlive the caller's InboxRow
  std::string context_kind, context_resource, context_user_id, context_provider, context_workout_id, context_items_key,
      context_job_id, context_deregistered_at;
  std::vector<SampleRow> spare_samples;  // capacity handed from one row's batch to the next
};

DeliveryParser::DeliveryParser() : DeliveryParser(ParseLimits{}) {}
DeliveryParser::DeliveryParser(const ParseLimits& limits) : impl_(std::make_unique<Impl>(limits)) {}
DeliveryParser::~DeliveryParser() = default;

ParseResult DeliveryParser::parse(const InboxRow& row, DeliveryRows& out) { return impl_->parse(row, out); }

namespace {

// Whether a JSON text spells U+0000 in a string (`\u0000` after an even run of
// backslashes). PostgreSQL's text and jsonb cannot hold it, so both backends refuse such a
// document alike instead of one keeping the character and the other cutting the string
// there or failing the statement. (Raw control bytes are not valid JSON: simdjson refuses
// them.)
bool holds_nul_escape(std::string_view text) {
  for (size_t at = text.find("\\u0000"); at != std::string_view::npos; at = text.find("\\u0000", at + 1)) {
    size_t backslashes = 1;
    while (at >= backslashes && text[at - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 1) return true;
  }
  return false;
}

}  // namespace

ParseResult DeliveryParser::Impl::parse(const InboxRow& row, DeliveryRows& out) {
  // Keep the largest sample vector's capacity for the next timeseries row.
  if (!out.sample_batches.empty() && out.sample_batches.front().samples.capacity() > spare_samples.capacity()) {
    spare_samples = std::move(out.sample_batches.front().samples);
  }
  spare_samples.clear();
  out.clear();
  json.clear();

  ParseResult result;
  Status status = Status::processed;
  const bool ok = row.origin == "fetch" ? parse_fetched(row, out) : parse_webhook(row, out, status);
  result.family = out.family;
  if (!ok) {
    // A delivery is applied whole or not at all: drop whatever was read before the error.
    const Family family = out.family;
    out.clear();
    out.family = family;
    result.status = Status::invalid;
    result.error = json.error().empty() ? std::string("body: not valid") : json.error();
    return result;
  }
  result.status = status;
  return result;
}

bool DeliveryParser::Impl::open_document(std::string_view text, std::string_view what, od::document& doc) {
  const JsonPath here{};
  if (text.size() > limits.max_document_bytes) {
    return json.fail(here, what,
                     std::to_string(text.size()) + " bytes, over the parser's limit of " +
                         std::to_string(limits.max_document_bytes));
  }
  // One large fetched page must not pin its buffers for good.
  if (text.size() <= limits.retained_bytes) {
    if (parser.capacity() > limits.retained_bytes) parser = od::parser(limits.max_document_bytes);
    if (padded.capacity() > limits.retained_bytes + simdjson::SIMDJSON_PADDING) std::string().swap(padded);
  }
  // simdjson 3.0.1 reads up to SIMDJSON_PADDING bytes past the end and does not pad for
  // us (style.md), so the text is copied into a buffer with room after it.
  padded.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  padded.assign(text);
  padded_size = text.size();

  if (auto code = parser.iterate(padded.data(), padded.size(), padded.capacity()).get(doc)) {
    if (code == simdjson::EMPTY) return json.fail(here, what, "empty");
    if (code == simdjson::UTF8_ERROR) return json.fail(here, what, "not valid UTF-8");
    if (code == simdjson::CAPACITY) return json.fail(here, what, "over the parser's capacity");
    return json.fail(code, here, what);
  }
  // Stage 1 (run by iterate() over the whole input) has validated UTF-8 everywhere, so
  // every stored string and raw_json() text is valid UTF-8.
  if (holds_nul_escape(text)) {
    return json.fail(here, what, "a string holds \\u0000 (U+0000), which the store does not keep");
  }
  return true;
}

bool DeliveryParser::Impl::open(std::string_view text, std::string_view what, od::document& doc,
                                od::object& root) {
  const JsonPath here{};
  if (!open_document(text, what, doc)) return false;
  if (auto code = doc.get_object().get(root)) {
    if (code == simdjson::INCORRECT_TYPE) {
      // JSON has no byte order mark (RFC 8259 §8.1): named, as it is invisible in most tools.
      if (text.starts_with("\xEF\xBB\xBF")) return json.fail(here, what, "starts with a UTF-8 byte order mark");
      // simdjson judged the first byte only: text that is no JSON at all ("not json at
      // all", a form's a=b) is told from JSON of another kind (an array, a string).
      // A value nested past the scanner's depth was JSON as far as it read (an array 1,500
      // deep is JSON of another kind, not text): only a problem before that depth is "not JSON".
      json::Scanner scanner(text);
      if (!scanner.document(json::kSimdjsonMaxDepth) && scanner.problem() != "nested too deeply") {
        return json.fail(here, what,
                         "not JSON (" + std::string(scanner.problem()) + " at byte " +
                             std::to_string(scanner.problem_offset()) + ")");
      }
      return json.fail(here, what, "not a JSON object");
    }
    // simdjson says "ended early" for a root that does not end the input too ("{…} trailing").
    if (code == simdjson::INCOMPLETE_ARRAY_OR_OBJECT && json::text_after_value(text, json::kSimdjsonMaxDepth)) {
      return json.fail(here, what, "content after the top-level object");
    }
    return json.fail(code, here, what);
  }
  return true;
}

bool DeliveryParser::Impl::at_end(od::document& doc, std::string_view what) {
  // raw_json() of the fully read root spans up to the next token: the end of the input,
  // or whatever follows the object ("{…} {…}").
  std::string_view whole;
  if (auto code = doc.raw_json().get(whole)) return json.fail(code, JsonPath{}, what);
  const char* end_of_root = whole.data() + whole.size();
  const char* end_of_input = padded.data() + padded_size;
  if (end_of_root >= end_of_input) return true;
  if (!trim_json_space(std::string_view(end_of_root, static_cast<size_t>(end_of_input - end_of_root))).empty()) {
    return json.fail(JsonPath{}, what, "content after the top-level object");
  }
  return true;
}

bool DeliveryParser::Impl::find_event_type(od::document& doc, od::object& root) {
  // The inbox had no event_type column value: read it from the body first, because the
  // family decides how `data` is read and `data` may come first (the docs' examples put
  // it first). Values before it are skipped unread here and validated by the real pass.
  bool found = false;
  for (auto field : root) {
    std::string_view key;
    if (!json.key(field, key)) return json.fail(JsonPath{}, "body");
    if (key != "event_type") continue;
    od::value value;
    if (auto code = field.value().get(value)) return json.fail(code, JsonPath{}, key);
    std::string_view text;
    if (!json.string(value, text)) return json.fail(JsonPath{}, key);
    event_type.assign(text);
    found = true;
    break;
  }
  if (!found) return json.fail(JsonPath{}, "event_type", "missing");
  if (event_type.empty()) return json.fail(JsonPath{}, "event_type", "empty");
  doc.rewind();
  if (auto code = doc.get_object().get(root)) return json.fail(code, JsonPath{}, "body");
  return true;
}

bool DeliveryParser::Impl::parse_webhook(const InboxRow& row, DeliveryRows& out, Status& status) {
  od::document doc;
  od::object root;
  if (!open(row.body, "body", doc, root)) return false;
  if (!row.event_type.empty()) {
    event_type.assign(row.event_type);
  } else if (!find_event_type(doc, root)) {
    return false;
  }

  const EventClass event = classify_event_type(event_type);
  // A summary's shape is its resource's, not its members' (schemas/README): its family is
  // summary whatever its data holds, an invalid one's too (a sleep without data.id was
  // `other`). Other resources' data is decided by shape.
  const bool summary_event =
      event.kind == EventKind::resource_data && !event.historical && is_summary_resource(event.resource);
  switch (event.kind) {
    case EventKind::resource_data:
      if (summary_event) out.family = Family::summary;
      break;
    case EventKind::connection_created:
    case EventKind::connection_error: out.family = Family::connection; break;
    case EventKind::device: out.family = Family::device; break;
    case EventKind::lab_order: out.family = Family::lab_order; break;
    case EventKind::lab_appointment: out.family = Family::lab_appointment; break;
    case EventKind::lab_result: out.family = Family::lab_result; break;
    case EventKind::lab_parsing_job: out.family = Family::lab_parsing_job; break;
    case EventKind::hypnogram: out.family = Family::hypnogram; break;
    case EventKind::unshown_resource: out.family = unshown_resource_family(event.resource).value_or(Family::other); break;
    case EventKind::other: out.family = Family::other; break;
  }

  std::optional<std::string_view> envelope_user_id;
  bool saw_data = false;
  // A member of the envelope given twice has two meanings: the event type was read from
  // the first, the user from the last, so one body was stored as a body event and read as
  // sleep by a backend whose JSON library keeps the last. Invalid, kept as received.
  std::vector<std::string_view> envelope_members_seen;
  for (auto field : root) {
    std::string_view key;
    if (!json.key(field, key)) return json.fail(JsonPath{}, "body");
    od::value value;
    if (auto code = field.value().get(value)) return json.fail(code, JsonPath{}, key);
    if (key == "event_type" || key == "user_id" || key == "client_user_id" || key == "team_id" || key == "data") {
      if (std::find(envelope_members_seen.begin(), envelope_members_seen.end(), key) != envelope_members_seen.end()) {
        return json.fail(JsonPath{}, key, "given twice");
      }
      envelope_members_seen.push_back(key);
    }
    if (key == "event_type") {
      std::string_view text;
      if (!json.string(value, text)) return json.fail(JsonPath{}, key);
      continue;
    }
    if (key == "user_id") {
      if (!json.id(value, envelope_user_id)) return json.fail(JsonPath{}, key);
      continue;
    }
    if (key == "client_user_id") {
      if (!read_envelope_text(value, key, out.identity.client_user_id)) return false;
      continue;
    }
    if (key == "team_id") {
      if (!read_envelope_text(value, key, out.identity.team_id)) return false;
      continue;
    }
    if (key != "data") {
      if (!json.skip(value, 2)) return json.fail(JsonPath{}, key);
      continue;
    }
    saw_data = true;
    bool ok = true;
    switch (event.kind) {
      case EventKind::resource_data: {
        ResourceDataRequest request;
        request.resource = event.resource;
        request.historical = event.historical;
        // A meal whose `data` member is an array was read as samples (and `[]` stored nothing).
        request.summary_only = summary_event;
        request.path.base = "data";
        ok = parse_resource_data(json, value, 2, request, spare_samples, out);
        break;
      }
      case EventKind::connection_created:
      case EventKind::connection_error:
        ok = parse_connection(json, value, 2, event.kind == EventKind::connection_error, event_type, out);
        break;
      case EventKind::device: ok = parse_device(json, value, 2, out); break;
      case EventKind::lab_order: ok = parse_lab_order(json, value, 2, out); break;
      case EventKind::lab_appointment: ok = parse_lab_appointment(json, value, 2, out); break;
      case EventKind::lab_result: ok = parse_lab_result(json, value, 2, out); break;
      case EventKind::lab_parsing_job: ok = parse_lab_parsing_job(json, value, 2, out); break;
      case EventKind::hypnogram:
      case EventKind::unshown_resource:
      case EventKind::other:
        // Not parsed further, but still read through: invalid JSON is invalid everywhere.
        if (!json.skip(value, 2)) return json.fail(JsonPath{}, "data");
        break;
    }
    if (!ok) return false;
  }
  if (!at_end(doc, "body")) return false;
  if (envelope_user_id && !envelope_user_id->empty()) out.delivery_user = envelope_user_id;

  if (event.kind == EventKind::hypnogram) {
    status = Status::ignored;
    return true;
  }
  // A resource outside the catalog whose data was neither a summary nor samples.
  const bool unknown_resource = event.kind == EventKind::resource_data && saw_data && out.family == Family::other;
  if (event.kind == EventKind::other || event.kind == EventKind::unshown_resource || unknown_resource) {
    out.identity = Identity{};  // only applied deliveries say who a user is
    status = Status::unknown;
    return true;
  }
  if (!saw_data) return json.fail(JsonPath{}, "data", "missing");
  return apply_envelope_user(envelope_user_id, out);
}

bool DeliveryParser::Impl::read_envelope_text(od::value v, std::string_view key,
                                              std::optional<std::string_view>& out) {
  od::json_type type{};
  if (auto code = v.type().get(type)) return json.fail(code, JsonPath{}, key);
  const bool not_an_id =
      type == od::json_type::object || type == od::json_type::array || type == od::json_type::boolean;
  const bool ok = not_an_id ? json.skip(v, 2) : json.text(v, out);
  if (!ok) return json.fail(JsonPath{}, key);
  if (out && out->empty()) out.reset();
  return true;
}

bool DeliveryParser::Impl::apply_envelope_user(std::optional<std::string_view> envelope_user_id,
                                               DeliveryRows& out) {
  // Wearable events repeat user_id inside data; where they do not (blood pressure's
  // Grouped schema, old payloads), the envelope's user_id is the same user.
  const JsonPath data{"data"};
  if (envelope_user_id && envelope_user_id->empty()) envelope_user_id.reset();
  const std::string_view fallback = envelope_user_id.value_or(std::string_view{});
  auto fill = [&](std::optional<std::string_view>& user_id) {
    if ((!user_id || user_id->empty()) && envelope_user_id) user_id = envelope_user_id;
  };
  for (SummaryRow& row : out.summaries) fill(row.user_id);
  for (SampleBatch& batch : out.sample_batches) {
    if (batch.user_id.empty()) batch.user_id = fallback;
    if (batch.user_id.empty()) return json.fail(data, "user_id", "missing");
  }
  if (out.workout_stream) {
    fill(out.workout_stream->user_id);
    if (!out.workout_stream->user_id) return json.fail(data, "user_id", "missing");
  }
  if (out.backfill) {
    if (out.backfill->user_id.empty()) out.backfill->user_id = fallback;
    if (out.backfill->user_id.empty()) return json.fail(data, "user_id", "missing");
  }
  if (out.connection) {
    if (out.connection->user_id.empty()) out.connection->user_id = fallback;
    if (out.connection->user_id.empty()) return json.fail(data, "user_id", "missing");
  }
  if (out.device) fill(out.device->user_id);
  if (out.lab_order) fill(out.lab_order->user_id);
  if (out.lab_appointment) fill(out.lab_appointment->user_id);
  if (out.lab_result) fill(out.lab_result->user_id);
  if (out.lab_parsing_job) fill(out.lab_parsing_job->user_id);

  // Who this is about: the envelope's user, else (envelopes before Mar 2024) the user the
  // rows name, all of them the same user in practice.
  Identity& who = out.identity;
  who.user_id = envelope_user_id;
  const auto offer = [&](std::optional<std::string_view> user_id) {
    if (!who.user_id && user_id && !user_id->empty()) who.user_id = user_id;
  };
  if (!out.summaries.empty()) offer(out.summaries.front().user_id);
  if (!out.sample_batches.empty()) offer(out.sample_batches.front().user_id);
  if (out.workout_stream) offer(out.workout_stream->user_id);
  if (out.backfill) offer(out.backfill->user_id);
  if (out.connection) offer(out.connection->user_id);
  if (out.device) offer(out.device->user_id);
  if (out.lab_order) offer(out.lab_order->user_id);
  if (out.lab_appointment) offer(out.lab_appointment->user_id);
  if (out.lab_result) offer(out.lab_result->user_id);
  if (out.lab_parsing_job) offer(out.lab_parsing_job->user_id);
  out.delivery_user = who.user_id;
  if (!who.team_id && out.lab_order && out.lab_order->team_id && !out.lab_order->team_id->empty()) {
    who.team_id = out.lab_order->team_id;
  }
  if (!who.user_id) who = Identity{};  // a team id alone names nobody
  return true;
}

bool DeliveryParser::Impl::read_fetch_context(std::string_view headers_json, FetchContext& context) {
  od::document doc;
  od::object root;
  if (!open(headers_json, "fetch context", doc, root)) return false;
  std::optional<std::string_view> kind, resource, user_id, provider, workout_id, items_key, job_id, deregistered_at;
  for (auto field : root) {
    std::string_view key;
    if (!json.key(field, key)) return json.fail(JsonPath{}, "fetch context");
    od::value value;
    if (auto code = field.value().get(value)) return json.fail(code, JsonPath{"fetch context"}, key);
    bool ok;
    if (key == "kind") ok = json.text(value, kind);
    else if (key == "resource") ok = json.text(value, resource);
    else if (key == "user_id") ok = json.id(value, user_id);
    else if (key == "provider") ok = json.text(value, provider);
    else if (key == "workout_id") ok = json.id(value, workout_id);
    else if (key == "items_key") ok = json.text(value, items_key);
    else if (key == "job_id") ok = json.id(value, job_id);
    else if (key == "deregistered_at") ok = json.text(value, deregistered_at);
    else ok = json.skip(value, 2);  // url, …
    if (!ok) return json.fail(JsonPath{"fetch context"}, key);
  }
  if (!at_end(doc, "fetch context")) return false;
  // Copied: the body's parse reuses the parser's string buffer.
  context_kind.assign(kind.value_or(""));
  context_resource.assign(resource.value_or(""));
  context_user_id.assign(user_id.value_or(""));
  context_provider.assign(provider.value_or(""));
  context_workout_id.assign(workout_id.value_or(""));
  context_items_key.assign(items_key.value_or(""));
  context_job_id.assign(job_id.value_or(""));
  context_deregistered_at.assign(deregistered_at.value_or(""));
  context = FetchContext{context_kind,       context_resource,  context_user_id, context_provider,
                         context_workout_id, context_items_key, context_job_id,  context_deregistered_at};
  return true;
}

bool DeliveryParser::Impl::parse_fetched(const InboxRow& row, DeliveryRows& out) {
  const JsonPath here{"fetch context"};
  FetchContext context;
  if (!read_fetch_context(row.headers_json, context)) return false;
  if (context.resource.empty()) {
    // event_type "fetch.<kind>.<resource>" names the resource too.
    const size_t second_dot = row.event_type.find('.', row.event_type.find('.') + 1);
    if (row.event_type.substr(0, 6) == "fetch." && second_dot != std::string_view::npos) {
      context_resource.assign(row.event_type.substr(second_dot + 1));
      context.resource = context_resource;
    }
  }

  if (!context.user_id.empty()) out.delivery_user = context.user_id;

  if (context.kind == "workout_stream") {
    out.family = Family::fetched_stream;
    if (context.workout_id.empty()) return json.fail(here, "workout_id", "missing");
    // Read without simdjson (stream_points.h says why); counting validates every point.
    StreamPointReader reader(row.body);
    StreamPoint point;
    size_t count = 0;
    while (reader.next(point)) ++count;
    if (!reader.error().empty()) return json.fail(JsonPath{}, "stream", reader.error());
    out.fetched_stream = FetchedStream{context.workout_id, row.body, count, out.delivery_user};
    return true;
  }

  if (context.kind == "providers") {
    out.family = Family::fetched_providers;
    od::document doc;
    if (!open_document(row.body, "body", doc)) return false;
    od::array list;
    if (auto code = doc.get_array().get(list)) {
      if (code == simdjson::INCORRECT_TYPE) return json.fail(JsonPath{}, "body", "not a JSON array");
      return json.fail(code, JsonPath{}, "body");
    }
    return parse_providers_page(json, list, out) && at_end(doc, "body");
  }
  if (context.kind == "parsing_job") {  // GET /lab_report/v1/parser/job/{job_id}: one ParsingJob object
    out.family = Family::fetched_parsing_job;
    if (context.job_id.empty()) return json.fail(here, "job_id", "missing");
    od::document doc;
    if (!open_document(row.body, "body", doc)) return false;
    od::value root;
    if (auto code = doc.get_value().get(root)) return json.fail(code, JsonPath{}, "body");
    if (!parse_lab_parsing_job(json, root, 1, out) || !at_end(doc, "body")) return false;
    out.family = Family::fetched_parsing_job;
    if (auto problem = other_parsing_job_problem(out.lab_parsing_job->id, context.job_id); !problem.empty()) {
      return json.fail(JsonPath{}, "id", problem);
    }
    // The service's ParsingJob names no user: the row stays the user's whose webhook
    // queued the fetch (purge-user finds it by that column: spec §11).
    if (!out.lab_parsing_job->user_id && !context.user_id.empty()) out.lab_parsing_job->user_id = context.user_id;
    return true;
  }
  if (context.kind == "deregistration") {  // `healthhook user deregister`: the service said success
    out.family = Family::fetched_deregistration;
    if (context.user_id.empty()) return json.fail(here, "user_id", "missing");
    if (context.provider.empty()) return json.fail(here, "provider", "missing");
    const auto at_ms = parse_iso8601_ms(context.deregistered_at);
    if (!at_ms) return json.fail(here, "deregistered_at", "missing or not an ISO 8601 time");
    od::document doc;
    if (!open_document(row.body, "body", doc)) return false;
    od::value root;
    if (auto code = doc.get_value().get(root)) return json.fail(code, JsonPath{}, "body");
    std::optional<bool> success;
    const bool read = json.members(root, 1, JsonPath{}, [&](std::string_view key, od::value value) {
      if (key == "success") return json.boolean(value, success);
      return json.skip(value, 2);
    });
    if (!read || !at_end(doc, "body")) return false;
    if (success != true) return json.fail(JsonPath{}, "success", "not true: nothing was deregistered");
    out.deregistration = DeregistrationRow{context.user_id, context.provider, *at_ms, "fetch.deregistration", row.body};
    return true;
  }
  if (context.kind == "summary") {  // one summary object: GET /v2/summary/profile/{user_id}
    out.family = Family::fetched_summaries;
    if (context.resource.empty()) return json.fail(here, "resource", "missing");
    od::document doc;
    if (!open_document(row.body, "body", doc)) return false;
    od::value root;
    if (auto code = doc.get_value().get(root)) return json.fail(code, JsonPath{}, "body");
    return parse_summary_object(json, root, context, spare_samples, out) && at_end(doc, "body");
  }

  const bool summaries = context.kind == "summaries";
  const bool workouts = context.kind == "workouts_for_streams";
  const bool timeseries = context.kind == "timeseries";
  if (!summaries && !workouts && !timeseries) {
    std::string what("unknown kind ");
    append_quoted_excerpt(what, context.kind);
    return json.fail(here, "kind", what);
  }
  out.family = timeseries ? Family::fetched_timeseries : Family::fetched_summaries;
  if ((summaries || timeseries) && context.resource.empty()) return json.fail(here, "resource", "missing");
  if (timeseries && context.user_id.empty()) return json.fail(here, "user_id", "missing");

  od::document doc;
  od::object root;
  if (!open(row.body, "body", doc, root)) return false;
  bool ok;
  if (timeseries) {
    ok = parse_timeseries_page(json, root, context, spare_samples, out);
  } else {
    const std::string_view resource = workouts ? std::string_view("workouts") : context.resource;
    ok = parse_summaries_page(json, root, resource, context.items_key, workouts, context, spare_samples, out);
  }
  return ok && at_end(doc, "body");
}

std::string_view without_excerpt(std::string_view error) {
  // An excerpt (json_reader.h, append_quoted_excerpt) is the only quoted text in an error:
  // paths and reasons are ours.
  error = error.substr(0, error.find('"'));
  while (!error.empty() && error.back() == ' ') error.remove_suffix(1);
  return error;
}

}  // namespace hh::events
