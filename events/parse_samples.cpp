// Timeseries samples (reference notes §2.4): the hot path of the processor, thousands of
// samples per delivery. One pass over each sample object, keys switched on by length, no
// allocation unless a sample has extra fields longer than the string's inline buffer.
//
// Sample grammar (every member optional except a time):
//   {"timestamp"|"start": ISO 8601, "end": ISO 8601, "timezone_offset": int|null,
//    "type": string|null, "unit": string|null, "value": number|string|null,
//    "systolic": number, "diastolic": number,            (blood_pressure)
//    <anything else>: any JSON}                          → extra_json, raw text as sent
#include <string>

#include "common/json_writer.h"
#include "common/timestamp.h"
#include "events/family_parsers.h"

namespace hh::events {
namespace {

bool read_sample_value(JsonReader& json, od::value v, SampleValue& out) {
  od::json_type type{};
  if (auto code = v.type().get(type)) return json.json_problem(code);
  switch (type) {
    case od::json_type::number: {
      // Integers stay integers (SQLite stores them exactly), floats stay doubles.
      JsonReader::Number n;
      if (!json.number_value(v, n)) return false;
      if (n.is_integer) out = n.integer;
      else out = n.real;
      return true;
    }
    case od::json_type::string: {
      std::string_view s;
      if (!json.string(v, s)) return false;
      out = s;
      return true;
    }
    case od::json_type::null: {
      std::optional<std::string_view> none;
      if (!json.text(v, none)) return false;
      out = std::monostate{};
      return true;
    }
    default: {
      std::string what("expected a number, string or null, got ");
      what.append(json_type_name(type));
      return json.problem_is(what);
    }
  }
}

// Parses an ISO 8601 time into `out`; false with the problem set (quoting the text).
bool read_time(JsonReader& json, std::string_view text, int64_t& out) {
  if (auto ms = parse_iso8601_ms(text)) {
    out = *ms;
    return true;
  }
  std::string what("not an ISO 8601 time ");
  append_quoted_excerpt(what, text);
  return json.problem_is(what);
}

}  // namespace

bool parse_samples(JsonReader& json, od::array samples, size_t depth, std::string_view array_path,
                   std::vector<SampleRow>& out) {
  size_t index = 0;
  for (auto element : samples) {
    const JsonPath path{array_path, index};
    od::value v;
    if (auto code = element.get(v)) return json.fail(code, path, {});
    od::object sample;
    if (!json.object(v, depth + 1, sample)) return json.fail(path, {});

    SampleRow& row = out.emplace_back();
    std::optional<std::string_view> timestamp, start, end;
    for (auto field : sample) {
      std::string_view key;
      if (!json.key(field, key)) return json.fail(path, {});
      od::value value;
      if (auto code = field.value().get(value)) return json.fail(code, path, key);
      bool ok = true;
      bool known = true;
      switch (key.size()) {
        case 3:
          if (key == "end") ok = json.text(value, end);
          else known = false;
          break;
        case 4:
          if (key == "type") ok = json.text(value, row.type);
          else if (key == "unit") ok = json.text(value, row.unit);
          else known = false;
          break;
        case 5:
          if (key == "value") ok = read_sample_value(json, value, row.value);
          else if (key == "start") ok = json.text(value, start);
          else known = false;
          break;
        case 8:
          if (key == "systolic") ok = json.number(value, row.systolic);
          else known = false;
          break;
        case 9:
          if (key == "timestamp") ok = json.text(value, timestamp);
          else if (key == "diastolic") ok = json.number(value, row.diastolic);
          else known = false;
          break;
        case 15:
          if (key == "timezone_offset") ok = json.int64(value, row.timezone_offset);
          else known = false;
          break;
        default:
          known = false;
      }
      if (!known) {
        // id (deprecated), grouping, sensor_location, intensity, tags, delivery_mode, …:
        // kept with their original JSON text.
        std::string_view raw;
        ok = json.raw(value, depth + 2, raw);
        if (ok) {
          row.extra_json.push_back(row.extra_json.empty() ? '{' : ',');
          json::append_string(row.extra_json, key);
          row.extra_json.push_back(':');
          row.extra_json.append(raw);
        }
      }
      if (!ok) return json.fail(path, key);
    }
    if (!row.extra_json.empty()) row.extra_json.push_back('}');

    // The key instant: `timestamp`, else `start` (timestamp is a deprecated alias of start).
    if (timestamp) {
      if (!read_time(json, *timestamp, row.t_ms)) return json.fail(path, "timestamp");
    } else if (start) {
      if (!read_time(json, *start, row.t_ms)) return json.fail(path, "start");
    } else {
      return json.fail(path, "timestamp", "missing (neither timestamp nor start)");
    }
    if (start) {
      int64_t ms = 0;
      if (!read_time(json, *start, ms)) return json.fail(path, "start");
      row.start_ms = ms;
    }
    if (end) {
      int64_t ms = 0;
      if (!read_time(json, *end, ms)) return json.fail(path, "end");
      row.end_ms = ms;
    }
    ++index;
  }
  // An error inside simdjson's array iteration surfaces as an element error above; an
  // array that ends early is caught by the enclosing object's iteration.
  return true;
}

}  // namespace hh::events
