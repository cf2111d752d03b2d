#pragma once
// Every derived table, the change feed and the jobs of a SQLite store and a PostgreSQL
// store, compared row for row (the two backends given the same deliveries must agree).
// Both sides are rendered as SQL literals (tests/derived/store_dump.h): 42, 1.5, 'text',
// NULL. Normalised, and only these: a jsonb scalar (samples.value, series.source_id) is
// rendered as SQLite keeps it (a JSON string as text, a number with a fraction as a real),
// and rows of keyed tables are compared sorted (the two servers' text collations differ).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "store/postgres/connection.h"
#include "store/sqlite/connection.h"
#include "tests/derived/store_dump.h"

namespace hh::test {

inline std::string derived_real(std::string_view text) {
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);  // as store_dump.cpp renders a SQLite REAL
  return buffer;
}

inline void derived_append_utf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out.push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code >> 6)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

// The text of a JSON string literal as jsonb prints it (escapes: " \ / b f n r t uXXXX).
inline std::string derived_json_text(std::string_view json) {
  std::string out;
  for (size_t i = 1; i + 1 < json.size(); ++i) {
    if (json[i] != '\\') {
      out.push_back(json[i]);
      continue;
    }
    const char e = json[++i];
    switch (e) {
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        const auto hex = [&](size_t at) {
          uint32_t v = 0;
          std::from_chars(json.data() + at, json.data() + at + 4, v, 16);
          return v;
        };
        uint32_t code = hex(i + 1);
        i += 4;
        if (code >= 0xD800 && code < 0xDC00 && i + 6 < json.size() && json[i + 1] == '\\') {
          code = 0x10000 + ((code - 0xD800) << 10) + (hex(i + 3) - 0xDC00);
          i += 6;
        }
        derived_append_utf8(out, code);
        break;
      }
      default: out.push_back(e);
    }
  }
  return out;
}

// Every row of `sql` on PostgreSQL, each as its values rendered like store_dump.cpp's.
inline std::vector<std::string> derived_pg_rows(pg::Connection& db, const std::string& sql) {
  auto result = db.query(sql);
  BOOST_REQUIRE_MESSAGE(result, result.error());
  std::vector<std::string> out;
  for (int r = 0; r < result->size(); ++r) {
    std::string line;
    for (int c = 0; c < PQnfields(result->get()); ++c) {
      if (c) line += "|";
      if (result->is_null(r, c)) {
        line += "NULL";
        continue;
      }
      const std::string_view text = result->text(r, c);
      switch (PQftype(result->get(), c)) {
        case 20: case 21: case 23: line += text; break;  // int8, int2, int4
        case 700: case 701: line += derived_real(text); break;  // float4, float8
        case 3802:  // jsonb scalar
          if (text.starts_with("\"")) {
            line += "'" + derived_json_text(text) + "'";
          } else if (text.find_first_of(".eE") != std::string_view::npos) {
            line += derived_real(text);
          } else {
            line += text;
          }
          break;
        default: line += "'" + std::string(text) + "'";
      }
    }
    out.push_back(std::move(line));
  }
  return out;
}

// What is compared: a name, the SQL (same on both), and whether the rows come in a defined
// order (else both sides are sorted).
struct DerivedDump {
  std::string name;
  std::string sql;
  bool ordered = false;
  std::string pg_sql = {};  // when it differs
};

// SQLite's typeof() of a jsonb scalar as SQLite would keep it.
inline std::string derived_type_of(const std::string& column) {
  return "CASE WHEN " + column + " IS NULL THEN 'null' WHEN jsonb_typeof(" + column + ") = 'string' THEN 'text' "
         "WHEN " + column + "::text ~ '[.eE]' THEN 'real' ELSE 'integer' END";
}

inline std::vector<DerivedDump> derived_dumps(bool with_ids) {
  const std::string series_id = with_ids ? "series_id, " : "";
  std::vector<DerivedDump> all = {
      // The type each scalar is kept with (rendered alike above): SQLite's storage class,
      // and what the jsonb text says (72.0 must stay a real, "72" a string).
      {"value types", "SELECT s.user_id, s.resource, p.t_ms, typeof(p.value) FROM samples p JOIN series s "
                      "USING (series_id) UNION ALL SELECT user_id, resource, -1, typeof(source_id) FROM series",
       false, "SELECT s.user_id, s.resource, p.t_ms, " + derived_type_of("p.value") + " FROM samples p JOIN series s "
              "USING (series_id) UNION ALL SELECT user_id, resource, -1, " + derived_type_of("source_id") +
              " FROM series"},
      {"summaries", "SELECT resource, id, user_id, provider, source_type, calendar_date, start_ms, end_ms, app_id, seq, "
                    "data FROM summaries"},
      {"series", "SELECT " + series_id + "user_id, resource, provider, source_type, source_id, app_id FROM series"},
      {"samples", "SELECT user_id, resource, provider, source_type, t_ms, timezone_offset, value, unit, type, "
                  "start_ms, end_ms, systolic, diastolic, extra, seq FROM samples_named"},
      {"workout_streams", "SELECT workout_id, user_id, provider, provider_id, sport, notice_seq, fetched_seq, "
                          "point_count, seq FROM workout_streams"},
      {"stream_points", "SELECT workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, "
                        "cadence, power, resistance, temperature FROM stream_points"},
      {"connections", "SELECT user_id, provider, status, external_user_id, error_type, error_message, "
                      "resource_availability, deregistered_at, event_type, seq, data FROM connections"},
      {"devices", "SELECT id, user_id, provider, source_type, app_id, device_manufacturer, device_model, "
                  "device_version, device_id, seq, data FROM devices"},
      {"lab_orders", "SELECT id, user_id, team_id, status, last_event_status, status_detail, interpretation, seq, "
                     "data FROM lab_orders"},
      {"lab_appointments", "SELECT id, order_id, user_id, status, event_status, start_at, end_at, seq, data "
                           "FROM lab_appointments"},
      {"lab_results", "SELECT order_id, user_id, sample_id, status, interpretation, seq, data FROM lab_results"},
      {"lab_parsing_jobs", "SELECT id, user_id, status, failure_reason, needs_human_review, is_reviewed, results, "
                           "seq, data FROM lab_parsing_jobs"},
      {"backfills", "SELECT user_id, resource, provider, start_ms, end_ms, is_final, seq FROM backfills"},
      {"users", "SELECT user_id, client_user_id, team_id, first_seen_ms, last_seen_ms, seq FROM users"},
      {"providers", "SELECT slug, name, description, logo, auth_type, supported_resources, seq, data FROM providers"},
      {"changes", "SELECT " + std::string(with_ids ? "change_id, " : "") +
                      "seq, table_name, row_key, op, row_count, from_ms, to_ms, user_id FROM changes ORDER BY change_id",
       true},
      {"jobs", "SELECT " + std::string(with_ids ? "job_id, " : "") +
                   "kind, job_key, state, attempts, next_attempt_at, last_error, trigger_seq, payload, created_at, "
                   "updated_at, user_id FROM jobs"},
  };
  return all;
}

// Every table of derived_dumps() on both sides, row for row (ids too when `with_ids`);
// the number of rows compared.
inline size_t compare_derived_tables(sqlite::Connection& lite, pg::Connection& pg, bool with_ids = true) {
  size_t compared = 0;
  for (const DerivedDump& dump : derived_dumps(with_ids)) {
    std::vector<std::string> lite_rows = test::rows(lite, dump.sql);
    std::vector<std::string> pg_side = derived_pg_rows(pg, dump.pg_sql.empty() ? dump.sql : dump.pg_sql);
    if (!dump.ordered) {
      std::sort(lite_rows.begin(), lite_rows.end());
      std::sort(pg_side.begin(), pg_side.end());
    }
    BOOST_TEST_CONTEXT("table " << dump.name) {
      BOOST_TEST(pg_side == lite_rows, boost::test_tools::per_element());
    }
    compared += lite_rows.size();
  }
  return compared;
}

}  // namespace hh::test
