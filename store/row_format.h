#pragma once
// The output fields of every row type, in order: what `healthhook query` prints (CSV or
// JSON Lines) and what the read API returns. Field names follow spec §6:
//
//   samples:       user_id, resource, provider, source_type, timestamp, timezone_offset,
//                  value, unit, type, start, end, extra, seq
//                  [, source_id, client_user_id, provider_name   with_identity]
//   summaries:     resource, id, user_id, provider, source_type, seq, data
//                  [, client_user_id, provider_name   with_identity]
//   stream points: workout_id, time, distance, heartrate, velocity_smooth, lat, lng,
//                  altitude, cadence, power, resistance, temperature
// The other tables' fields are their columns (store/sqlite/migrations/), in the order of the
// write_row() below: times (*_ms) become RFC 3339 fields without the suffix, 0/1 flags
// become booleans, stored JSON is embedded.
//
// Conventions: instants (timestamp, start, end, received_at, from, to) are RFC 3339 UTC
// with milliseconds and "Z"; a stream point's `time` is Unix seconds as the service sends
// it; `value` keeps its stored type (integer, float or text); blood pressure's systolic
// and diastolic are reported inside `extra` (the spec's field list has no columns for
// them); stored JSON (extra, data, headers) is embedded as JSON, minified (one object per
// JSON Lines line, one line per CSV cell), null when absent.
#include <string>

#include "store/read_rows.h"
#include "store/row_writer.h"

namespace hh::store {

void write_row(RowWriter& w, const StoredSample& row);
void write_row(RowWriter& w, const StoredSummary& row);
void write_row(RowWriter& w, const StoredStreamPoint& row);
void write_row(RowWriter& w, const StoredConnection& row);
void write_row(RowWriter& w, const StoredLabOrder& row);
void write_row(RowWriter& w, const StoredDevice& row);
void write_row(RowWriter& w, const StoredLabAppointment& row);
void write_row(RowWriter& w, const StoredLabResult& row);
void write_row(RowWriter& w, const StoredParsingJob& row);
void write_row(RowWriter& w, const StoredBackfill& row);
void write_row(RowWriter& w, const StoredUser& row);
void write_row(RowWriter& w, const StoredProvider& row);
void write_row(RowWriter& w, const StoredChange& row);
void write_row(RowWriter& w, const StoredWorkoutStream& row);
// The body is `body` (text) when it is valid UTF-8, else `body_base64`; the other is null.
void write_row(RowWriter& w, const StoredDelivery& row);

// One JSON object (no newline).
template <typename Row>
void append_json(std::string& out, const Row& row) {
  RowWriter w(out, RowWriter::Mode::json);
  w.begin();
  write_row(w, row);
  w.end();
}

// One JSON Lines line or one CSV record.
template <typename Row>
void append_record(std::string& out, OutputFormat format, const Row& row) {
  if (format == OutputFormat::jsonl) {
    append_json(out, row);
    out.push_back('\n');
    return;
  }
  RowWriter w(out, RowWriter::Mode::csv);
  w.begin();
  write_row(w, row);
  w.end();
}

// The CSV header line for rows like `prototype` (its output options, e.g. with_identity,
// decide the fields); nothing for JSON Lines.
template <typename Row>
void append_header(std::string& out, OutputFormat format, const Row& prototype = Row{}) {
  if (format != OutputFormat::csv) return;
  RowWriter w(out, RowWriter::Mode::csv_header);
  w.begin();
  write_row(w, prototype);
  w.end();
}

}  // namespace hh::store
