#include "tests/io/io_fixtures.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <thread>

#include "store/sqlite/database.h"

namespace hh::test::io {

std::string samples_body(const std::string& user, const std::string& resource, const std::string& provider,
                         const std::vector<std::pair<std::string, double>>& samples, const std::string& unit) {
  std::string data;
  for (const auto& [time, value] : samples) {
    if (!data.empty()) data += ",";
    char number[32];
    std::snprintf(number, sizeof number, "%g", value);
    data += R"({"timestamp":")" + time + R"(","timezone_offset":3600,"type":null,"unit":")" + unit +
            R"(","value":)" + number + "}";
  }
  return R"({"event_type":"daily.data.)" + resource + R"(.created","data":{"user_id":")" + user +
         R"(","source":{"provider":")" + provider + R"(","type":"ring"},"data":[)" + data + R"(]},"user_id":")" +
         user + R"(","team_id":"team-1"})";
}

std::string sleep_body(const std::string& user, const std::string& id, int score, const std::string& bedtime_start) {
  return R"({"event_type":"daily.data.sleep.updated","data":{"id":")" + id + R"(","user_id":")" + user +
         R"(","calendar_date":")" + bedtime_start.substr(0, 10) + R"(","bedtime_start":")" + bedtime_start +
         R"(","bedtime_stop":")" + bedtime_start.substr(0, 10) + R"(T23:59:00+00:00","score":)" +
         std::to_string(score) + R"(,"source":{"provider":"oura","type":"ring"}},"user_id":")" + user + R"("})";
}

std::string connection_body(const std::string& user, const std::string& provider, bool error) {
  return R"({"event_type":"provider.connection.)" + std::string(error ? "error" : "created") +
         R"(","data":{"user_id":")" + user + R"(","provider":{"name":"X","slug":")" + provider +
         R"("},"external_user_id":"ext-)" + user + "\"" +
         (error ? R"(,"error_type":"token_refresh_failed","message":"refresh failed")" : "") + R"(},"user_id":")" +
         user + R"("})";
}

std::string dump(const std::string& database, const std::string& sql) {
  auto db = store::open_for_reading(database);
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  auto stmt = db->prepare(sql);
  BOOST_REQUIRE_MESSAGE(stmt.ok(), stmt.error());
  std::string out;
  for (;;) {
    auto row = stmt->step();
    BOOST_REQUIRE_MESSAGE(row.ok(), row.error());
    if (!*row) break;
    const int columns = sqlite3_column_count(stmt->get());
    for (int i = 0; i < columns; ++i) {
      if (i > 0) out += "|";
      out += stmt->column_is_null(i) ? std::string("NULL") : std::string(stmt->column_text(i));
    }
    out += "\n";
  }
  return out;
}

long long query_int(const std::string& database, const std::string& sql) {
  auto db = store::open_for_reading(database);
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  auto value = db->query_int(sql);
  BOOST_REQUIRE_MESSAGE(value.ok(), value.error());
  return value->value_or(-1);
}

std::string derived_tables(const std::string& database, bool with_positions) {
  // Columns other than positions, per table; ORDER BY every column makes the dump canonical.
  struct Table {
    std::string name, columns, positions;
  };
  const std::vector<Table> tables = {
      {"summaries", "resource, id, user_id, provider, source_type, calendar_date, start_ms, end_ms, data", "seq"},
      {"samples_named",
       "user_id, resource, provider, source_type, t_ms, timezone_offset, value, unit, type, start_ms, end_ms, "
       "systolic, diastolic, extra",
       "seq"},
      {"series", "user_id, resource, provider, source_type", "series_id"},
      {"workout_streams", "workout_id, user_id, provider, provider_id, sport, point_count", "notice_seq, fetched_seq, seq"},
      {"stream_points", "workout_id, idx, time, distance, heartrate", ""},
      {"connections", "user_id, provider, status, external_user_id, error_type, error_message, event_type, data", "seq"},
      {"devices", "id, user_id, provider, data", "seq"},
      {"lab_orders", "id, user_id, status, data", "seq"},
      {"lab_appointments", "id, order_id, status, data", "seq"},
      {"lab_results", "order_id, status, data", "seq"},
      {"lab_parsing_jobs", "id, status, data", "seq"},
      {"backfills", "user_id, resource, provider, start_ms, end_ms, is_final", "seq"},
      {"changes", "table_name, row_key, op, row_count, from_ms, to_ms", "change_id, seq"},
      {"jobs", "kind, job_key, state, payload", "trigger_seq"},
  };
  std::string out;
  for (const auto& t : tables) {
    std::string columns = t.columns;
    if (with_positions && !t.positions.empty()) columns += ", " + t.positions;
    out += "== " + t.name + "\n";
    out += dump(database, "SELECT " + columns + " FROM " + t.name + " ORDER BY " + columns);
  }
  return out;
}

void wait_until_processed(const std::string& database) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  for (;;) {
    const long long newest = query_int(database, "SELECT ifnull(max(seq), 0) FROM deliveries");
    const long long applied = query_int(database, "SELECT applied_seq FROM processor_state");
    if (applied >= newest) return;
    BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline,
                          "processor did not catch up: applied " << applied << " of " << newest);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace hh::test::io
