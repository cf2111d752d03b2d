// Every table `healthhook query` prints, in both formats, read back with strict readers:
// JSON Lines (one whole JSON object per LF-terminated line) and RFC 4180 CSV (CRLF
// records, quoted fields, one field count). The inbox holds the reference notes'
// payloads exactly as the examples in schemas/examples/ are written, pretty-printed over
// many lines, plus the fetched pages of the same folder; `healthhook rebuild` applies
// them. Every stored value must come back: text byte for byte, stored JSON minified
// (whitespace between tokens dropped, strings and numbers as stored).
#include <simdjson.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "store/sqlite/database.h"
#include "store/sqlite/sqlite_inbox.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(query_formats_test)

using namespace hh;
using hh::test::TempDir;

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// What simdjson's minify makes of stored JSON: the expected text of a JSON field.
std::string minified(std::string_view json) {
  std::string out(json.size(), '\0');
  size_t length = 0;
  BOOST_REQUIRE(simdjson::minify(json.data(), json.size(), out.data(), length) == simdjson::SUCCESS);
  out.resize(length);
  return out;
}

// --- Strict readers -----------------------------------------------------------------

// RFC 4180: records end with CRLF; a field is quoted when it holds ',', '"', CR or LF, a
// quote inside quotes is doubled; nothing else may contain a quote, CR or LF. An empty
// unquoted field is NULL (nullopt), "" the empty string.
using CsvRecord = std::vector<std::optional<std::string>>;

std::vector<CsvRecord> read_csv(const std::string& text) {
  std::vector<CsvRecord> records;
  size_t i = 0;
  while (i < text.size()) {
    CsvRecord record;
    for (;;) {
      std::optional<std::string> field;
      if (i < text.size() && text[i] == '"') {
        field.emplace();
        ++i;
        for (;;) {
          BOOST_REQUIRE_MESSAGE(i < text.size(), "CSV: unterminated quoted field");
          if (text[i] == '"') {
            if (i + 1 < text.size() && text[i + 1] == '"') {
              field->push_back('"');
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          field->push_back(text[i++]);
        }
      } else {
        const size_t end = text.find_first_of(",\r\n\"", i);
        BOOST_REQUIRE_MESSAGE(end != std::string::npos, "CSV: a record without CRLF at the end");
        BOOST_REQUIRE_MESSAGE(text[end] != '"', "CSV: a quote inside an unquoted field at byte " << end);
        BOOST_REQUIRE_MESSAGE(text[end] != '\n', "CSV: a bare LF at byte " << end);
        if (end > i) field = text.substr(i, end - i);
        i = end;
      }
      record.push_back(std::move(field));
      BOOST_REQUIRE_MESSAGE(i < text.size(), "CSV: a record without CRLF at the end");
      if (text[i] == ',') {
        ++i;
        continue;
      }
      BOOST_REQUIRE_MESSAGE(text.compare(i, 2, "\r\n") == 0, "CSV: expected CRLF at byte " << i);
      i += 2;
      break;
    }
    records.push_back(std::move(record));
  }
  return records;
}

// One JSON object per line, every line ended by LF, no empty lines, nothing else.
std::vector<std::string> jsonl_lines(const std::string& text) {
  std::vector<std::string> lines;
  BOOST_REQUIRE_MESSAGE(text.empty() || text.back() == '\n', "JSON Lines: the last line has no LF");
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  simdjson::dom::parser parser;
  for (const auto& line : lines) {
    BOOST_REQUIRE_MESSAGE(!line.empty(), "JSON Lines: an empty line");
    BOOST_REQUIRE_MESSAGE(line.find('\r') == std::string::npos, "JSON Lines: a CR in " << line);
    simdjson::dom::object object;
    const auto error = parser.parse(line).get(object);
    BOOST_REQUIRE_MESSAGE(!error, "JSON Lines: not one JSON object: " << line.substr(0, 200));
  }
  return lines;
}

// The exact text of member `name` of the JSON object `line` (its raw JSON: a string with
// its quotes, an object as written).
std::string raw_member(const std::string& line, std::string_view name) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(line);
  auto doc = parser.iterate(padded);
  simdjson::ondemand::object object = doc.get_object().value();
  for (auto field : object) {
    if (field.unescaped_key().value() != name) continue;
    simdjson::ondemand::value value = field.value().value();
    std::string_view raw;
    switch (value.type().value()) {
      case simdjson::ondemand::json_type::object: raw = value.get_object().value().raw_json().value(); break;
      case simdjson::ondemand::json_type::array: raw = value.get_array().value().raw_json().value(); break;
      default: raw = value.raw_json_token();  // a scalar's token, up to the next structural character
    }
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n')) raw.remove_suffix(1);
    return std::string(raw);
  }
  BOOST_FAIL("no member " << name << " in " << line);
  return {};
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out.push_back(c);
    }
  }
  return out + "\"";
}

// --- The database ---------------------------------------------------------------------

// Every webhook example (pretty-printed, as written) and every fetched page of
// schemas/examples/, appended to a fresh inbox, then applied by `healthhook rebuild`.
std::string build_database(const TempDir& dir) {
  const std::string path = dir.file("formats.db");
  auto db = store::open_for_writing(path, store::StoreOptions{});
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  auto inbox = store::SqliteInbox::create(*db);
  BOOST_REQUIRE_MESSAGE(inbox.ok(), inbox.error());
  std::vector<store::NewDelivery> rows;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(HEALTHHOOK_SCHEMAS_DIR) + "/examples")) {
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  int64_t received = 1717200000000;
  for (const auto& file : files) {
    const std::string name = file.filename().string();
    store::NewDelivery row;
    row.received_at_ms = received += 1000;
    if (name.starts_with("fetched-")) {
      if (!name.ends_with(".body.json")) continue;
      const std::string stem = name.substr(0, name.size() - std::string(".body.json").size());
      row.origin = store::Origin::fetch;
      row.message_id = "fetch:" + stem;
      row.headers_json = read_file(file.parent_path() / (stem + ".context.json"));
      row.event_type = "fetch";
    } else {
      row.message_id = "msg_" + name;
      row.webhook_timestamp = received / 1000;
      // Headers as a JSON object, pretty-printed like a hand-made capture's.
      row.headers_json = "{\n  \"svix-id\": " + json_string(row.message_id) + ",\n  \"content-type\": \"application/json\"\n}";
    }
    row.body = read_file(file);
    rows.push_back(std::move(row));
  }
  // One that is invalid (sleep needs an id), pretty-printed too.
  store::NewDelivery broken;
  broken.message_id = "msg_invalid";
  broken.received_at_ms = received += 1000;
  broken.webhook_timestamp = received / 1000;
  broken.headers_json = "{}";
  broken.body = "{\n  \"event_type\": \"daily.data.sleep.created\",\n  \"data\": {\"user_id\": \"u-9\"}\n}\n";
  rows.push_back(std::move(broken));
  std::vector<const store::NewDelivery*> batch;
  for (const auto& row : rows) batch.push_back(&row);
  auto appended = inbox->append(batch);
  BOOST_REQUIRE_MESSAGE(appended.ok(), appended.error());
  auto rebuilt = test::run_healthhook({"rebuild", "--database", path});
  BOOST_REQUIRE_MESSAGE(rebuilt.exit_code == 0, rebuilt.stderr_text);
  return path;
}

// Rows of `sql` as text (NULL: nullopt), for the expected values.
std::vector<std::vector<std::optional<std::string>>> select(const std::string& database, const std::string& sql) {
  auto db = store::open_for_reading(database);
  BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
  auto stmt = db->prepare(sql);
  BOOST_REQUIRE_MESSAGE(stmt.ok(), stmt.error() << " in " << sql);
  std::vector<std::vector<std::optional<std::string>>> out;
  while (stmt->step().value()) {
    auto& row = out.emplace_back();
    for (int i = 0; i < sqlite3_column_count(stmt->get()); ++i) {
      if (stmt->column_is_null(i)) {
        row.emplace_back();
      } else {
        row.emplace_back(std::string(stmt->column_blob(i)));
      }
    }
  }
  return out;
}

struct Field {
  std::string name;
  bool json = false;  // stored JSON: compared minified
};

struct Table {
  std::string name;           // healthhook query <name>
  std::vector<std::string> extra_args;
  std::string sql;            // the stored values of `fields`, in the output's row order
  std::vector<Field> fields;
};

const std::vector<Table>& tables() {
  static const std::vector<Table> all = {
      // Blood pressure's systolic/diastolic are reported inside `extra`: its rows are
      // compared on their other fields.
      {"samples", {}, "SELECT user_id, CASE WHEN systolic IS NULL AND diastolic IS NULL THEN extra END, "
                      "systolic IS NULL AND diastolic IS NULL FROM samples_named "
                      "ORDER BY user_id, resource, provider, source_type, t_ms",
       {{"user_id"}, {"extra", true}}},
      {"samples", {"--with", "identity"},
       "SELECT s.user_id, u.client_user_id, p.name, 1 FROM samples_named s LEFT JOIN users u USING (user_id) "
       "LEFT JOIN providers p ON p.slug = s.provider ORDER BY s.user_id, s.resource, s.provider, s.source_type, s.t_ms",
       {{"user_id"}, {"client_user_id"}, {"provider_name"}}},
      {"summaries", {}, "SELECT id, data, 1 FROM summaries ORDER BY resource, id", {{"id"}, {"data", true}}},
      {"summaries", {"--with", "identity"},
       "SELECT m.id, u.client_user_id, p.name, 1 FROM summaries m LEFT JOIN users u ON u.user_id = m.user_id "
       "LEFT JOIN providers p ON p.slug = m.provider ORDER BY m.resource, m.id",
       {{"id"}, {"client_user_id"}, {"provider_name"}}},
      {"streams", {}, "SELECT workout_id, 1 FROM stream_points ORDER BY workout_id, idx", {{"workout_id"}}},
      {"connections", {}, "SELECT user_id, resource_availability, data, 1 FROM connections ORDER BY user_id, provider",
       {{"user_id"}, {"resource_availability", true}, {"data", true}}},
      {"devices", {}, "SELECT id, device_model, data, 1 FROM devices ORDER BY id",
       {{"id"}, {"device_model"}, {"data", true}}},
      {"users", {}, "SELECT user_id, client_user_id, team_id, 1 FROM users ORDER BY user_id",
       {{"user_id"}, {"client_user_id"}, {"team_id"}}},
      {"providers", {}, "SELECT slug, name, logo, supported_resources, 1 FROM providers ORDER BY slug",
       {{"slug"}, {"name"}, {"logo"}, {"supported_resources", true}}},
      {"orders", {}, "SELECT id, last_event_status, data, 1 FROM lab_orders ORDER BY id",
       {{"id"}, {"last_event_status"}, {"data", true}}},
      {"appointments", {}, "SELECT id, data, 1 FROM lab_appointments ORDER BY id", {{"id"}, {"data", true}}},
      {"results", {}, "SELECT order_id, data, 1 FROM lab_results ORDER BY order_id", {{"order_id"}, {"data", true}}},
      {"parsing-jobs", {}, "SELECT id, results, data, 1 FROM lab_parsing_jobs ORDER BY id",
       {{"id"}, {"results", true}, {"data", true}}},
      {"backfills", {}, "SELECT user_id, resource, 1 FROM backfills ORDER BY user_id, resource, provider, start_ms",
       {{"user_id"}, {"resource"}}},
      {"deliveries", {}, "SELECT message_id, error, headers, body, 1 FROM deliveries ORDER BY seq",
       {{"message_id"}, {"error"}, {"headers", true}, {"body"}}},
  };
  return all;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_table_in_both_formats_parses_strictly_and_round_trips_the_stored_values) {
  TempDir dir;
  const std::string database = build_database(dir);
  // The fixtures are the pretty-printed payloads: without minifying, lines would break.
  BOOST_REQUIRE(!select(database, "SELECT 1 FROM summaries WHERE instr(data, char(10)) > 0").empty());
  BOOST_REQUIRE(!select(database, "SELECT 1 FROM providers WHERE instr(supported_resources, ' ') > 0").empty());

  for (const Table& table : tables()) {
    const auto expected = select(database, table.sql);
    BOOST_TEST_CONTEXT("query " << table.name << (table.extra_args.empty() ? "" : " --with identity")) {
      BOOST_TEST(!expected.empty());  // every table has rows, or the test proves nothing
      for (const std::string format : {"jsonl", "csv"}) {
        std::vector<std::string> args = {"query", table.name, "--database", database, "--format", format};
        args.insert(args.end(), table.extra_args.begin(), table.extra_args.end());
        const auto run = test::run_healthhook(args);
        BOOST_REQUIRE_MESSAGE(run.exit_code == 0, run.stderr_text);
        if (format == "jsonl") {
          const auto lines = jsonl_lines(run.stdout_text);
          BOOST_REQUIRE_EQUAL(lines.size(), expected.size());
          for (size_t r = 0; r < lines.size(); ++r) {
            const bool comparable = expected[r].back() == "1";
            for (size_t f = 0; f < table.fields.size(); ++f) {
              const Field& field = table.fields[f];
              if (field.json && !comparable) continue;
              const auto& stored = expected[r][f];
              const std::string want = !stored ? "null" : field.json ? minified(*stored) : json_string(*stored);
              BOOST_TEST(raw_member(lines[r], field.name) == want, "row " << r << " " << field.name);
            }
          }
        } else {
          const auto records = read_csv(run.stdout_text);
          BOOST_REQUIRE_EQUAL(records.size(), expected.size() + 1);  // and the header
          const CsvRecord& header = records[0];
          for (const auto& record : records) BOOST_TEST(record.size() == header.size());
          for (size_t f = 0; f < table.fields.size(); ++f) {
            const Field& field = table.fields[f];
            const auto column = std::find(header.begin(), header.end(), std::optional<std::string>(field.name));
            BOOST_REQUIRE_MESSAGE(column != header.end(), "no column " << field.name);
            const size_t c = static_cast<size_t>(column - header.begin());
            for (size_t r = 0; r < expected.size(); ++r) {
              if (field.json && expected[r].back() != "1") continue;
              const auto& stored = expected[r][f];
              const std::optional<std::string> want =
                  !stored ? std::nullopt : std::optional<std::string>(field.json ? minified(*stored) : *stored);
              BOOST_TEST((records[r + 1][c] == want), "row " << r << " " << field.name);
            }
          }
        }
      }
    }
  }
}

// A capture of the same inbox (headers stored pretty-printed, bodies pretty-printed) is
// JSON Lines too, and replays into the same tables.
BOOST_AUTO_TEST_CASE(a_capture_of_pretty_printed_deliveries_is_json_lines) {
  TempDir dir;
  const std::string database = build_database(dir);
  const std::string capture = dir.file("capture.jsonl");
  const auto captured = test::run_healthhook({"capture", "--database", database, "-o", capture});
  BOOST_REQUIRE_MESSAGE(captured.exit_code == 0, captured.stderr_text);
  const auto lines = jsonl_lines(read_file(capture));
  BOOST_TEST(lines.size() == select(database, "SELECT 1 FROM deliveries WHERE origin = 'webhook'").size());
  for (const auto& line : lines) BOOST_TEST(raw_member(line, "headers").find('\n') == std::string::npos);
  const std::string replayed = dir.file("replayed.db");
  const auto replay = test::run_healthhook({"replay", capture, "--database", replayed});
  BOOST_TEST(replay.exit_code == 0, replay.stderr_text);
  // Users come from webhook deliveries only: the replay names the same ones.
  BOOST_TEST(select(replayed, "SELECT user_id, client_user_id, team_id FROM users ORDER BY user_id") ==
             select(database, "SELECT user_id, client_user_id, team_id FROM users ORDER BY user_id"));
}

BOOST_AUTO_TEST_CASE(deliveries_by_status_list_each_invalid_one_with_its_error) {
  TempDir dir;
  const std::string database = build_database(dir);
  const auto invalid = test::run_healthhook({"query", "deliveries", "--database", database, "--status", "invalid"});
  BOOST_REQUIRE_MESSAGE(invalid.exit_code == 0, invalid.stderr_text);
  const auto expected = select(database, "SELECT message_id, error FROM deliveries WHERE status = 'invalid' ORDER BY seq");
  const auto lines = jsonl_lines(invalid.stdout_text);
  BOOST_REQUIRE_EQUAL(lines.size(), expected.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    BOOST_TEST(raw_member(lines[i], "status") == "\"invalid\"");
    BOOST_TEST(raw_member(lines[i], "message_id") == json_string(*expected[i][0]));
    BOOST_TEST(raw_member(lines[i], "error") == json_string(*expected[i][1]));
  }
  // "applied" is the processed ones; each status lists its own rows only.
  for (const auto& [flag, status] : std::vector<std::pair<std::string, std::string>>{
           {"applied", "processed"}, {"unknown", "unknown"}, {"ignored", "ignored"}}) {
    const auto run = test::run_healthhook({"query", "deliveries", "--database", database, "--status", flag});
    BOOST_REQUIRE_MESSAGE(run.exit_code == 0, run.stderr_text);
    const auto listed = jsonl_lines(run.stdout_text);
    BOOST_TEST(listed.size() == select(database, "SELECT 1 FROM deliveries WHERE status = '" + status + "'").size());
    BOOST_TEST(!listed.empty(), flag);
    for (const auto& line : listed) BOOST_TEST(raw_member(line, "status") == "\"" + status + "\"");
  }
  const auto bad = test::run_healthhook({"query", "deliveries", "--database", database, "--status", "broken"});
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(bad.stderr_text.find("--status") != std::string::npos, bad.stderr_text);
}

BOOST_AUTO_TEST_SUITE_END()  // query_formats_test
