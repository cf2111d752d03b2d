// Lab events (reference notes §2.8). Each is one latest-wins row keyed by its id; the
// whole $.data is kept as data_json, and a few columns are lifted out:
//   labtest.order.*            {id, user_id, team_id, status (deprecated), interpretation,
//                               last_event {status, status_detail}, events [{…}], …}
//   labtest.appointment.*      {id, order_id, user_id, status, event_status, start_at, end_at, …}
//   labtest.result.critical    {order_id, sample_id, status, interpretation, user_id, …}
//   lab_report.parsing_job.*   {id, status, failure_reason, needs_human_review, is_reviewed,
//                               data: {metadata, results[]} | null}
#include "events/family_parsers.h"

namespace hh::events {
namespace {

struct OrderEventStatus {
  bool present = false;
  std::optional<std::string_view> status, status_detail;
};

// An enum that may one day become an object: a string is kept as text, anything else as
// its JSON text.
bool read_text_or_json(JsonReader& json, od::value v, size_t depth, std::optional<std::string_view>& out) {
  od::json_type type{};
  if (auto code = v.type().get(type)) return json.json_problem(code);
  if (type != od::json_type::object && type != od::json_type::array) return json.text(v, out);
  std::string_view raw;
  if (!json.raw(v, depth, raw)) return false;
  out = raw;
  return true;
}

// One ClientFacingOrderEvent {id, created_at, status, status_detail}; null leaves `out` absent.
bool read_order_event(JsonReader& json, od::value v, size_t depth, std::string_view where, OrderEventStatus& out) {
  od::json_type type{};
  if (auto code = v.type().get(type)) return json.json_problem(code);
  if (type == od::json_type::null) return json.skip(v, depth);
  out = OrderEventStatus{};
  out.present = true;
  return json.members(v, depth, JsonPath{where}, [&](std::string_view key, od::value value) {
    if (key == "status") return json.text(value, out.status);
    if (key == "status_detail") return read_text_or_json(json, value, depth + 1, out.status_detail);
    return json.skip(value, depth + 1);
  });
}

}  // namespace

bool parse_lab_order(JsonReader& json, od::value v, size_t depth, DeliveryRows& out) {
  const JsonPath path{"data"};
  const size_t child_depth = depth + 1;
  LabOrderRow& row = out.lab_order.emplace();
  std::optional<std::string_view> id;
  OrderEventStatus last_event, last_of_events;
  const bool read = json.members(v, depth, path, [&](std::string_view key, od::value value) {
    if (key == "id") return json.id(value, id);
    if (key == "user_id") return json.id(value, row.user_id);
    if (key == "team_id") return json.id(value, row.team_id);
    if (key == "status") return json.text(value, row.status);
    if (key == "interpretation") return json.text(value, row.interpretation);
    if (key == "last_event") return read_order_event(json, value, child_depth, "data.last_event", last_event);
    if (key == "events") {
      od::json_type type{};
      if (auto code = value.type().get(type)) return json.json_problem(code);
      if (type == od::json_type::null) return json.skip(value, child_depth);
      od::array events;
      if (!json.array(value, child_depth, events)) return false;
      for (auto element : events) {
        od::value event;
        if (auto code = element.get(event)) return json.json_problem(code);
        if (!read_order_event(json, event, child_depth + 1, "data.events[]", last_of_events)) return false;
      }
      return true;
    }
    return json.skip(value, child_depth);
  }, &row.data_json);
  if (!read) return false;
  if (!id || id->empty()) return json.fail(path, "id", "missing");
  row.id = *id;
  // last_event (added Mar 2026) is the last item of events[]; older orders only have events[].
  const OrderEventStatus& latest = last_event.present ? last_event : last_of_events;
  row.last_event_status = latest.status;
  row.status_detail = latest.status_detail;
  out.family = Family::lab_order;
  return true;
}

bool parse_lab_appointment(JsonReader& json, od::value v, size_t depth, DeliveryRows& out) {
  const JsonPath path{"data"};
  LabAppointmentRow& row = out.lab_appointment.emplace();
  std::optional<std::string_view> id;
  const bool read = json.members(v, depth, path, [&](std::string_view key, od::value value) {
    if (key == "id") return json.id(value, id);
    if (key == "order_id") return json.id(value, row.order_id);
    if (key == "user_id") return json.id(value, row.user_id);
    if (key == "status") return json.text(value, row.status);
    if (key == "event_status") return json.text(value, row.event_status);
    if (key == "start_at") return json.text(value, row.start_at);
    if (key == "end_at") return json.text(value, row.end_at);
    return json.skip(value, depth + 1);
  }, &row.data_json);
  if (!read) return false;
  if (!id || id->empty()) return json.fail(path, "id", "missing");
  row.id = *id;
  out.family = Family::lab_appointment;
  return true;
}

bool parse_lab_result(JsonReader& json, od::value v, size_t depth, DeliveryRows& out) {
  const JsonPath path{"data"};
  LabResultRow& row = out.lab_result.emplace();
  std::optional<std::string_view> order_id;
  const bool read = json.members(v, depth, path, [&](std::string_view key, od::value value) {
    if (key == "order_id") return json.id(value, order_id);
    if (key == "user_id") return json.id(value, row.user_id);
    if (key == "sample_id") return json.id(value, row.sample_id);
    if (key == "status") return json.text(value, row.status);
    if (key == "interpretation") return json.text(value, row.interpretation);
    return json.skip(value, depth + 1);
  }, &row.data_json);
  if (!read) return false;
  if (!order_id || order_id->empty()) return json.fail(path, "order_id", "missing");
  row.order_id = *order_id;
  out.family = Family::lab_result;
  return true;
}

bool parse_lab_parsing_job(JsonReader& json, od::value v, size_t depth, DeliveryRows& out) {
  const JsonPath path{"data"};
  LabParsingJobRow& row = out.lab_parsing_job.emplace();
  std::optional<std::string_view> id;
  const bool read = json.members(v, depth, path, [&](std::string_view key, od::value value) {
    if (key == "id") return json.id(value, id);
    if (key == "status") return json.text(value, row.status);
    if (key == "failure_reason") return json.text(value, row.failure_reason);
    if (key == "needs_human_review") return json.boolean(value, row.needs_human_review);
    if (key == "is_reviewed") return json.boolean(value, row.is_reviewed);
    if (key == "data") {
      // Null until the job is completed.
      std::string_view raw;
      if (!json.raw(value, depth + 1, raw)) return false;
      if (raw != "null") row.results_json = raw;
      return true;
    }
    return json.skip(value, depth + 1);
  }, &row.data_json);
  if (!read) return false;
  if (!id || id->empty()) return json.fail(path, "id", "missing");
  row.id = *id;
  out.family = Family::lab_parsing_job;
  return true;
}

}  // namespace hh::events
