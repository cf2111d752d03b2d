#include "store/row_format.h"

#include <type_traits>

#include "common/base64.h"
#include "common/json_writer.h"
#include "store/schema/record_tables.h"

namespace hh::store {
namespace {

// `extra` with blood pressure's systolic/diastolic put first: {"systolic":…,"diastolic":…,…}.
std::optional<std::string_view> extra_with_pressure(const StoredSample& row, std::string& scratch) {
  if (!row.systolic && !row.diastolic) return row.extra;
  scratch.clear();
  scratch.push_back('{');
  bool first = true;
  const auto add = [&](std::string_view name, const std::optional<double>& value) {
    if (!value) return;
    if (!first) scratch.push_back(',');
    first = false;
    scratch.append("\"").append(name).append("\":");
    json::append_number(scratch, *value);
  };
  add("systolic", row.systolic);
  add("diastolic", row.diastolic);
  if (row.extra) {
    // The stored extra is a JSON object: splice its members in after ours.
    std::string_view members = *row.extra;
    const auto open = members.find('{');
    const auto close = members.rfind('}');
    if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
      members = members.substr(open + 1, close - open - 1);
      if (members.find_first_not_of(" \t\r\n") != std::string_view::npos) {
        scratch.push_back(',');
        scratch.append(members);
      }
    }
  }
  scratch.push_back('}');
  return scratch;
}

// A JSON column that is never NULL in the table; empty only in the header's prototype row.
std::optional<std::string_view> stored_json(std::string_view text) {
  return text.empty() ? std::nullopt : std::optional<std::string_view>(text);
}

// One read field of a record table, by its value's type and the description's marks.
template <typename Field>
void write_field(RowWriter& w, const Field& field, std::string_view value) {
  field.is_json ? w.json(field.output_name(), stored_json(value)) : w.text(field.output_name(), value);
}
template <typename Field>
void write_field(RowWriter& w, const Field& field, std::optional<std::string_view> value) {
  field.is_json ? w.json(field.output_name(), value) : w.text(field.output_name(), value);
}
template <typename Field>
void write_field(RowWriter& w, const Field& field, std::optional<int64_t> value) {
  field.is_time ? w.time_ms(field.output_name(), value) : w.integer(field.output_name(), value);
}
template <typename Field>
void write_field(RowWriter& w, const Field& field, int64_t value) {
  write_field(w, field, std::optional<int64_t>(value));
}
template <typename Field>
void write_field(RowWriter& w, const Field& field, std::optional<bool> value) {
  w.boolean(field.output_name(), value);
}
template <typename Field>
void write_field(RowWriter& w, const Field& field, std::optional<double> value) {
  w.real(field.output_name(), value);
}

template <typename D>
void write_record(RowWriter& w, const typename D::Stored& row) {
  schema::for_each_field(D::fields, [&](const auto& field) {
    if constexpr (std::decay_t<decltype(field)>::read_into) write_field(w, field, row.*(field.read));
  });
}

}  // namespace

void write_row(RowWriter& w, const StoredSample& row) {
  thread_local std::string scratch;  // reused: one row at a time per thread
  w.text("user_id", row.user_id)
      .text("resource", row.resource)
      .text("provider", row.provider)
      .text("source_type", row.source_type)
      .time_ms("timestamp", row.t_ms)
      .integer("timezone_offset", row.timezone_offset);
  switch (row.value_type) {
    case ValueType::null: w.null("value"); break;
    case ValueType::integer: w.integer("value", row.value_integer); break;
    case ValueType::real: w.real("value", row.value_real); break;
    case ValueType::text: w.text("value", row.value_text); break;
  }
  w.text("unit", row.unit)
      .text("type", row.type)
      .time_ms("start", row.start_ms)
      .time_ms("end", row.end_ms)
      .json("extra", extra_with_pressure(row, scratch))
      .integer("seq", row.seq);
  if (!row.with_identity) return;
  if (row.source_id) {
    w.integer("source_id", *row.source_id);
  } else {
    w.text("source_id", row.source_id_text);
  }
  w.text("client_user_id", row.client_user_id).text("provider_name", row.provider_name);
}

void write_row(RowWriter& w, const StoredSummary& row) {
  w.text("resource", row.resource)
      .text("id", row.id)
      .text("user_id", row.user_id)
      .text("provider", row.provider)
      .text("source_type", row.source_type)
      .integer("seq", row.seq)
      .json("data", stored_json(row.data));
  if (row.with_identity) w.text("client_user_id", row.client_user_id).text("provider_name", row.provider_name);
}

void write_row(RowWriter& w, const StoredStreamPoint& row) {
  w.text("workout_id", row.workout_id)
      .integer("time", row.time)
      .real("distance", row.distance)
      .real("heartrate", row.heartrate)
      .real("velocity_smooth", row.velocity_smooth)
      .real("lat", row.lat)
      .real("lng", row.lng)
      .real("altitude", row.altitude)
      .real("cadence", row.cadence)
      .real("power", row.power)
      .real("resistance", row.resistance)
      .real("temperature", row.temperature);
}

// The record tables' rows: their read fields in description order
// (store/schema/record_fields.h says how a field is printed).
void write_row(RowWriter& w, const StoredConnection& row) { write_record<schema::Connections>(w, row); }
void write_row(RowWriter& w, const StoredLabOrder& row) { write_record<schema::LabOrders>(w, row); }
void write_row(RowWriter& w, const StoredDevice& row) { write_record<schema::Devices>(w, row); }
void write_row(RowWriter& w, const StoredLabAppointment& row) { write_record<schema::LabAppointments>(w, row); }
void write_row(RowWriter& w, const StoredLabResult& row) { write_record<schema::LabResults>(w, row); }
void write_row(RowWriter& w, const StoredParsingJob& row) { write_record<schema::LabParsingJobs>(w, row); }
void write_row(RowWriter& w, const StoredBackfill& row) { write_record<schema::Backfills>(w, row); }
void write_row(RowWriter& w, const StoredUser& row) { write_record<schema::Users>(w, row); }
void write_row(RowWriter& w, const StoredProvider& row) { write_record<schema::Providers>(w, row); }

void write_row(RowWriter& w, const StoredChange& row) {
  w.integer("change_id", row.change_id)
      .integer("seq", row.seq)
      .text("table_name", row.table_name)
      .text("row_key", row.row_key)
      .text("op", row.op)
      .integer("row_count", row.row_count)
      .time_ms("from", row.from_ms)
      .time_ms("to", row.to_ms)
      .text("user_id", row.user_id);
}

void write_row(RowWriter& w, const StoredWorkoutStream& row) {
  const auto view = [](const std::optional<std::string>& s) {
    return s ? std::optional<std::string_view>(*s) : std::nullopt;
  };
  w.text("workout_id", std::string_view(row.workout_id))
      .text("user_id", view(row.user_id))
      .text("provider", view(row.provider))
      .text("provider_id", view(row.provider_id))
      .text("sport", view(row.sport))
      .integer("point_count", row.point_count)
      .integer("seq", row.seq);
}

void write_row(RowWriter& w, const StoredDelivery& row) {
  w.integer("seq", row.seq)
      .text("message_id", row.message_id)
      .text("origin", row.origin)
      .time_ms("received_at", row.received_at_ms)
      .integer("webhook_timestamp", row.webhook_timestamp)
      .text("event_type", row.event_type)
      .text("status", row.status)
      .text("family", row.family)
      .text("error", row.error)
      .json("headers", row.headers.empty() ? std::nullopt : std::optional<std::string_view>(row.headers));
  if (row.body_removed_at_ms) {
    w.null("body").null("body_base64");  // retention removed it: body_removed_at says when
  } else if (json::is_valid_utf8(row.body)) {
    w.text("body", row.body).null("body_base64");
  } else {
    w.null("body").text("body_base64", std::string_view(base64_encode(row.body)));
  }
  w.time_ms("body_removed_at", row.body_removed_at_ms)
      .text("body_sha256", row.body_removed_at_ms ? std::optional<std::string_view>(row.body_sha256) : std::nullopt);
}

}  // namespace hh::store
