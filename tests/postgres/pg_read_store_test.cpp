// The read side on PostgreSQL (store/postgres/read/): the same rows written into a SQLite
// store and a PostgreSQL store (the same values through each one's INSERTs) must read back
// the same through every query of store/read_store.h, store/figures.h and
// store/follow_up_reads.h: formatted by the one row formatter (store/row_format.h) and
// compared as text. Listings longer than a cursor's fetch and pages across batches included.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "store/figures.h"
#include "store/follow_up_reads.h"
#include "store/postgres/database.h"
#include "store/schema/glob_regex.h"
#include "store/postgres/read/read_session.h"
#include "store/open_readers.h"
#include "store/row_format.h"
#include "store/sqlite/database.h"
#include "store/store_options.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(pg_read_store_test)

using namespace hh;
using store::ReadStore;
namespace pgread = hh::store::pgread;

namespace {

// A column value, written to each backend in its own type: samples.value and
// series.source_id (json_*) are ANY in SQLite and jsonb in PostgreSQL.
struct V {
  enum Kind { null, integer, real, text, blob, json_integer, json_real, json_text } kind = null;
  int64_t i = 0;
  double d = 0;
  std::string s;  // text, bytes, or a json_real's JSON spelling
};
V N() { return {}; }
V I(int64_t i) { return {V::integer, i, 0, {}}; }
V R(double d) { return {V::real, 0, d, {}}; }
V T(std::string s) { return {V::text, 0, 0, std::move(s)}; }
V B(std::string s) { return {V::blob, 0, 0, std::move(s)}; }
V JI(int64_t i) { return {V::json_integer, i, 0, {}}; }
V JR(double d, std::string spelling) { return {V::json_real, 0, d, std::move(spelling)}; }
V JT(std::string s) { return {V::json_text, 0, 0, std::move(s)}; }

std::string json_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

// A SQLite store and a PostgreSQL store, written alike.
class BothStores {
 public:
  // `pg_uri`: an empty database to use (default: a fresh one).
  explicit BothStores(std::string pg_uri = {})
      : sqlite_path_(dir_.file("store.db")),
        pg_uri_(pg_uri.empty() ? test::PostgresCluster::shared().fresh_database() : std::move(pg_uri)) {
    auto lite = store::open_for_writing(sqlite_path_, store::StoreOptions{});
    if (!lite) throw std::runtime_error(lite.error());
    lite_.emplace(std::move(*lite));
    auto pg = store::connect_migrated({pg_uri_, ""});
    if (!pg) throw std::runtime_error(pg.error());
    pg_.emplace(std::move(*pg));
  }

  void insert(const std::string& table, const std::vector<std::string>& columns, const std::vector<V>& values) {
    std::string names, lite_marks, pg_marks;
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string n = std::to_string(i + 1);
      names += (i ? ", " : "") + columns[i];
      lite_marks += (i ? ", ?" : "?") + n;
      const bool json = values[i].kind >= V::json_integer;
      pg_marks += (i ? ", $" : "$") + n + (json ? "::jsonb" : "");
    }
    const std::string head = "INSERT INTO " + table + " (" + names + ") VALUES (";
    auto statement = lite_->prepare(head + lite_marks + ")");
    BOOST_REQUIRE_MESSAGE(statement, statement.error());
    pg::Params params;
    std::vector<std::string> json_texts;
    json_texts.reserve(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      const V& v = values[i];
      const int at = static_cast<int>(i + 1);
      switch (v.kind) {
        case V::null: statement->bind_null(at); params.add_null(); break;
        case V::integer: statement->bind(at, v.i); params.add(v.i); break;
        case V::real: statement->bind(at, v.d); params.add(v.d); break;
        case V::text: statement->bind(at, std::string_view(v.s)); params.add(v.s); break;
        case V::blob:
          statement->bind_blob(at, std::span<const char>(v.s.data(), v.s.size()));
          params.bytes(v.s);
          break;
        case V::json_integer:
          statement->bind(at, v.i);
          params.add(json_texts.emplace_back(std::to_string(v.i)));
          break;
        case V::json_real:
          statement->bind(at, v.d);
          params.add(json_texts.emplace_back(v.s));
          break;
        case V::json_text:
          statement->bind(at, std::string_view(v.s));
          params.add(json_texts.emplace_back(json_quoted(v.s)));
          break;
      }
    }
    auto ran = statement->run();
    BOOST_REQUIRE_MESSAGE(ran, table + ": " + ran.error());
    auto inserted = pg_->query(head + pg_marks + ")", params);
    BOOST_REQUIRE_MESSAGE(inserted, table + ": " + inserted.error());
  }

  // SQL run on both (the same text, or each its own).
  void exec(const std::string& sqlite_sql, const std::string& pg_sql) {
    auto lite = lite_->exec(sqlite_sql);
    BOOST_REQUIRE_MESSAGE(lite, lite.error());
    auto pg = pg_->exec(pg_sql);
    BOOST_REQUIRE_MESSAGE(pg, pg.error());
  }
  void exec(const std::string& sql) { exec(sql, sql); }

  ReadStore& lite_reader() { return reader(lite_reader_, sqlite_path_); }
  ReadStore& pg_reader() { return reader(pg_reader_, pg_uri_); }
  const std::string& sqlite_path() const { return sqlite_path_; }
  const std::string& pg_uri() const { return pg_uri_; }
  pg::Connection& pg_writer() { return *pg_; }

 private:
  static ReadStore& reader(std::unique_ptr<ReadStore>& slot, const std::string& database) {
    if (!slot) {
      auto opened = store::open_read_store(database);
      if (!opened) throw std::runtime_error(opened.error());
      slot = std::move(*opened);
    }
    return *slot;
  }

  test::TempDir dir_;
  std::string sqlite_path_;
  std::string pg_uri_;
  std::optional<sqlite::Connection> lite_;
  std::optional<pg::Connection> pg_;
  std::unique_ptr<ReadStore> lite_reader_, pg_reader_;
};

std::string started(const Result<void>& r) { return r ? "" : "start error: " + r.error() + "\n"; }

// What JSON does not show of a sample: the value's type (72 and 72.0 print alike) and
// whether source_id is a number or text.
std::string type_tags(const store::StoredSample& row) {
  const char* source = row.source_id ? "i" : row.source_id_text ? "t" : "n";
  return " [v" + std::to_string(static_cast<int>(row.value_type)) + " s" + source + "]";
}

// Every row a query hands out, one JSON line each (identity fields included where a row
// has them), then an error line if it failed.
template <typename Row, typename Query>
std::string drain(Query& query, size_t limit = SIZE_MAX) {
  std::string out;
  for (size_t n = 0; n < limit; ++n) {
    Row row{};
    if constexpr (requires { row.with_identity; }) row.with_identity = true;
    auto more = query.next(row);
    if (!more) return out + "error: " + more.error() + "\n";
    if (!*more) return out;
    store::append_json(out, row);
    if constexpr (std::is_same_v<Row, store::StoredSample>) out += type_tags(row);
    out += '\n';
  }
  query.finish();
  return out;
}

// The start's error, if any, then drain(). (A function, so that the start comes first:
// the operands of `+` may be evaluated in any order.)
template <typename Row, typename Query>
std::string listed(Query& query, const Result<void>& begun) {
  std::string out = started(begun);
  return out + drain<Row>(query);
}

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// The same reads through both readers: equal text, and at least `min_lines` lines of it.
void same(BothStores& stores, const std::string& what, const std::function<std::string(ReadStore&)>& read,
          size_t min_lines) {
  const std::string lite = read(stores.lite_reader());
  const std::string pg = read(stores.pg_reader());
  BOOST_TEST_CONTEXT(what) {
    BOOST_TEST(lite == pg);
    BOOST_TEST(lines(lite) >= min_lines);
  }
}

// ---- The data set.

const std::vector<std::string> kSampleColumns = {"series_id", "t_ms",     "timezone_offset", "value",
                                                 "unit",      "type",     "start_ms",        "end_ms",
                                                 "systolic",  "diastolic", "extra",          "seq"};

void fill_samples(BothStores& s) {
  const std::vector<std::string> series = {"series_id", "user_id", "resource", "provider", "source_type", "source_id"};
  s.insert("users", {"user_id", "client_user_id", "team_id", "first_seen_ms", "last_seen_ms", "seq"},
           {T("u1"), T("client-1"), T("team"), I(1000), I(2000), I(1)});
  s.insert("users", {"user_id", "client_user_id", "team_id", "first_seen_ms", "last_seen_ms", "seq"},
           {T("u2"), N(), N(), I(1500), I(2500), I(2)});
  s.insert("providers", {"slug", "name", "description", "logo", "auth_type", "supported_resources", "seq", "data"},
           {T("oura"), T("Oura"), T("A ring"), N(), T("oauth"), T("[\"sleep\"]"), I(3), T("{}")});
  s.insert("series", series, {I(1), T("u1"), T("heartrate"), T("oura"), T("ring"), JI(42)});
  s.insert("series", series, {I(2), T("u1"), T("heartrate"), T("fitbit"), T("watch"), JT("abc")});
  s.insert("series", series, {I(3), T("u1"), T("heartrate"), T("withings"), T("scale"), N()});
  s.insert("series", series, {I(4), T("u1"), T("steps"), T("oura"), T("ring"), JR(1.5, "1.5")});
  s.insert("series", series, {I(5), T("u2"), T("heartrate"), T("oura"), T("ring"), JT("72")});
  // Highest id, first by name, upper case sorting before lower case bytewise.
  s.insert("series", series, {I(6), T("u1"), T("heartrate"), T("Apple"), T("phone"), JI(-7)});
  s.insert("series", series, {I(7), T("u1"), T("heartrate"), T("polar"), T("strap"), JR(2.0, "2.0")});
  // Sorts before the lower-case names bytewise, after them in a linguistic collation.
  s.insert("series", series, {I(8), T("u1"), T("heartrate"), T("Zwift"), T("bike"), N()});
  const std::vector<V> values = {JI(60),           JR(72.0, "72.0"), JR(0.1, "0.1"), JT("high"), N(),
                                 JI(-9007199254740993), JR(1e-7, "1e-07"), JT(""),   JR(98.6, "98.6")};
  s.exec("BEGIN");
  for (int64_t i = 0; i < 45; ++i) {
    const int64_t t = 1000 * (i + 1);
    s.insert("samples", kSampleColumns,
             {I(1), I(t), i % 3 ? I(3600) : N(), values[static_cast<size_t>(i) % values.size()], T("bpm"),
              i % 4 ? N() : T("resting"), N(), N(), N(), N(), i % 5 ? N() : T("{\"a\": [1, 2]}"), I(10 + i)});
    // Ties with series 1 on every other instant, and instants of their own.
    s.insert("samples", kSampleColumns,
             {I(2), I(i % 2 ? t : t + 500), N(), JI(i), T("bpm"), N(), I(t - 100), I(t), R(120.5), R(80.25), N(),
              I(100 + i)});
    if (i % 3 == 0) {
      s.insert("samples", kSampleColumns,
               {I(6), I(t), I(-18000), JR(65.5, "65.5"), N(), N(), N(), N(), N(), N(), N(), I(200 + i)});
    }
    if (i % 10 == 0) {
      s.insert("samples", kSampleColumns, {I(8), I(t + 1), N(), JI(i), N(), N(), N(), N(), N(), N(), N(), I(500 + i)});
    }
    s.insert("samples", kSampleColumns,
             {I(4), I(t), N(), JI(i * 100), T("steps"), N(), N(), N(), N(), N(), N(), I(300 + i)});
    s.insert("samples", kSampleColumns,
             {I(5), I(t), N(), JT("text \"quoted\" \\ value"), N(), N(), N(), N(), N(), N(), N(), I(400 + i)});
  }
  s.exec("COMMIT");
  // A series longer than a cursor's fetch (kFetchRows) and a time-ordered batch.
  const int big = pgread::kFetchRows * 2 + 500;
  s.exec("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < " + std::to_string(big - 1) +
             ") INSERT INTO samples (series_id, t_ms, value, seq) SELECT 7, 700 + i * 37, i, 1000 + i FROM n",
         "INSERT INTO samples (series_id, t_ms, value, seq) SELECT 7, 700 + i * 37, to_jsonb(i), 1000 + i "
         "FROM generate_series(0, " + std::to_string(big - 1) + ") AS i");
}

void fill_records(BothStores& s) {
  s.insert("users", {"user_id", "client_user_id", "team_id", "first_seen_ms", "last_seen_ms", "seq"},
           {T("u/3"), T("c3"), N(), I(1), I(2), I(3)});
  s.insert("users", {"user_id", "client_user_id", "team_id", "first_seen_ms", "last_seen_ms", "seq"},
           {T("u1"), T("client-1"), T("team"), I(1000), I(2000), I(1)});
  s.insert("providers", {"slug", "name", "description", "logo", "auth_type", "supported_resources", "seq", "data"},
           {T("oura"), T("Oura"), T("A ring"), N(), T("oauth"), T("[\"sleep\"]"), I(3), T("{}")});
  s.insert("providers", {"slug", "name", "description", "logo", "auth_type", "supported_resources", "seq", "data"},
           {T("Fitbit"), N(), N(), T("https://x/logo.png"), N(), N(), I(4), T("{}")});
  const std::vector<std::string> summary = {"resource", "id",       "user_id", "provider", "source_type",
                                            "calendar_date", "start_ms", "end_ms", "seq",    "data"};
  for (int i = 0; i < 30; ++i) {
    const std::string id = "s" + std::to_string(i % 7) + "-" + std::to_string(i);
    // Starts with ties and gaps; every fifth without a start.
    s.insert("summaries", summary,
             {T(i % 3 ? "sleep" : "activity"), T(id), i % 11 == 10 ? N() : T("u1"), i % 2 ? T("oura") : T("Fitbit"),
              T("ring"), N(), i % 5 == 4 ? N() : I(1000 * (i / 3)), N(), I(50 + i),
              T("{\"score\": " + std::to_string(i) + ", \"x\": \"\\u00e9\"}")});
  }
  s.insert("summaries", summary,
           {T("sleep"), T("with/slash"), T("u2"), N(), T("manual"), T("2024-01-01"), I(5), I(6), I(99), T("{}")});
  const std::vector<std::string> stream = {"workout_id", "user_id", "provider", "provider_id", "sport",
                                           "notice_seq", "fetched_seq", "point_count", "seq"};
  s.insert("workout_streams", stream, {T("w1"), T("u1"), T("oura"), T("p1"), T("run"), I(1), I(2), I(3), I(4)});
  s.insert("workout_streams", stream, {T("w2"), T("u2"), T("fitbit"), N(), N(), N(), N(), N(), I(5)});
  const std::vector<std::string> point = {"workout_id", "idx", "time", "distance", "heartrate", "velocity_smooth",
                                          "lat", "lng", "altitude", "cadence", "power", "resistance", "temperature"};
  s.exec("BEGIN");
  for (int i = 0; i < pgread::kFetchRows + 200; ++i) {
    s.insert("stream_points", point,
             {T("w1"), I(i), I(1700000000 + i), R(i * 2.5), i % 2 ? N() : R(140 + i % 7), R(0.1), R(52.52),
              R(13.405), N(), N(), N(), N(), R(-3.5)});
  }
  for (int i = 0; i < 5; ++i) {
    // -0.0: SQLite's REAL column keeps 0, PostgreSQL's double precision -0; read back as 0.
    s.insert("stream_points", point,
             {T("w2"), I(i), N(), N(), R(99), N(), N(), N(), R(1e300), I(90), I(250), N(), R(-0.0)});
  }
  s.exec("COMMIT");
  s.insert("connections",
           {"user_id", "provider", "status", "external_user_id", "error_type", "error_message",
            "resource_availability", "event_type", "seq", "data"},
           {T("u1"), T("oura"), T("connected"), T("ext"), N(), N(), T("{\"sleep\": true}"),
            T("provider.connection.created"), I(6), T("{\"a\": 1}")});
  s.insert("connections",
           {"user_id", "provider", "status", "external_user_id", "error_type", "error_message",
            "resource_availability", "event_type", "seq", "data"},
           {T("u1"), T("fitbit"), T("error"), N(), T("token"), T("expired"), N(), T("provider.connection.error"),
            I(7), T("{}")});
  s.insert("devices",
           {"id", "user_id", "provider", "source_type", "app_id", "device_manufacturer", "device_model",
            "device_version", "device_id", "seq", "data"},
           {T("d1"), T("u1"), T("oura"), T("ring"), N(), T("Oura"), T("Gen3"), N(), T("x"), I(8), T("{}")});
  s.insert("devices",
           {"id", "user_id", "provider", "source_type", "app_id", "device_manufacturer", "device_model",
            "device_version", "device_id", "seq", "data"},
           {T("d0"), N(), N(), N(), N(), N(), N(), N(), N(), I(9), T("{}")});
  const std::vector<std::string> order = {"id",           "user_id",        "team_id", "status", "last_event_status",
                                          "status_detail", "interpretation", "seq",     "data"};
  s.insert("lab_orders", order, {T("o2"), T("u1"), N(), T("completed"), N(), N(), T("normal"), I(10), T("{}")});
  s.insert("lab_orders", order, {T("o1"), T("u1"), T("t"), T("received"), T("r"), T("d"), N(), I(11), T("{}")});
  s.insert("lab_orders", order, {T("o9"), T("u2"), N(), N(), N(), N(), N(), I(12), T("{}")});
  const std::vector<std::string> appointment = {"id",     "order_id", "user_id", "status", "event_status",
                                                "start_at", "end_at",  "seq",     "data"};
  s.insert("lab_appointments", appointment,
           {T("a1"), T("o3"), T("u1"), T("scheduled"), N(), T("2024-01-01T10:00:00Z"), N(), I(13), T("{}")});
  s.insert("lab_appointments", appointment, {T("a2"), N(), T("u1"), N(), N(), N(), N(), I(14), T("{}")});
  s.insert("lab_appointments", appointment, {T("a3"), T("o1"), T("u1"), N(), N(), N(), N(), I(15), T("{}")});
  const std::vector<std::string> result = {"order_id", "user_id", "sample_id", "status", "interpretation", "seq",
                                           "data"};
  s.insert("lab_results", result, {T("o4"), T("u1"), T("sample"), T("final"), T("abnormal"), I(16), T("{}")});
  s.insert("lab_results", result, {T("o2"), T("u1"), N(), N(), N(), I(17), T("{}")});
  const std::vector<std::string> parsing = {"id", "status", "failure_reason", "needs_human_review", "is_reviewed",
                                            "results", "seq", "data"};
  s.insert("lab_parsing_jobs", parsing, {T("p1"), T("completed"), N(), I(1), I(0), T("{\"r\": []}"), I(18), T("{}")});
  s.insert("lab_parsing_jobs", parsing, {T("p2"), T("failed"), T("blurry"), N(), N(), N(), I(19), T("{}")});
  const std::vector<std::string> backfill = {"user_id", "resource", "provider", "start_ms", "end_ms", "is_final",
                                             "seq"};
  s.insert("backfills", backfill, {T("u1"), T("sleep"), T("oura"), I(0), I(86400000), I(1), I(20)});
  s.insert("backfills", backfill, {T("u1"), T("sleep"), T("oura"), I(86400000), I(172800000), N(), I(21)});
  s.insert("backfills", backfill, {T("u2"), T("steps"), T("fitbit"), I(-5), I(5), I(0), I(22)});
  const std::vector<std::string> job = {"kind",        "job_key", "state",      "attempts",  "next_attempt_at",
                                        "last_error",  "trigger_seq", "payload", "created_at", "updated_at"};
  s.insert("jobs", job,
           {T("backfill"), T("u1/sleep/oura/0/86400000"), T("dead"), I(5), I(9000), T("HTTP 500"), I(20), T("{}"),
            I(1), I(2)});
  s.insert("jobs", job,
           {T("backfill"), T("u2/steps/fitbit/-5/5"), T("queued"), I(0), I(7000), N(), I(22), T("{}"), I(1), I(2)});
  s.insert("jobs", job,
           {T("workout_stream"), T("w1"), T("queued"), I(1), I(6000), N(), I(4), T("{}"), I(1), I(2)});
  s.insert("jobs", job, {T("workout_stream"), T("w2"), T("done"), I(1), I(100), N(), I(5), T("{}"), I(1), I(2)});
}

void fill_changes(BothStores& s) {
  const std::vector<std::string> change = {"change_id", "seq", "table_name", "row_key", "op", "row_count", "from_ms",
                                           "to_ms"};
  int64_t id = 0;
  const auto add = [&](int64_t seq, int count) {
    for (int i = 0; i < count; ++i) {
      ++id;
      s.insert("changes", change,
               {I(id), I(seq), T(i % 2 ? "samples" : "summaries"), T("u1/heartrate/" + std::to_string(id)),
                T(i % 3 ? "insert" : "update"), I(1 + i), i % 2 ? I(1000 * id) : N(), i % 2 ? I(2000 * id) : N()});
    }
  };
  add(1, 3);
  add(2, 12);  // more than a page of 5: pages end inside it
  add(3, 1);
  add(5, 2);
  add(6, 4);
  add(9, 1);
  // PostgreSQL serves changes up to the applied position (change_query.h).
  s.exec("UPDATE processor_state SET applied_seq = 9");
}

// Inbox rows: bodies with NUL and 0xff bytes, outcomes, a removed body, fetched rows.
void fill_inbox(BothStores& s) {
  const std::vector<std::string> inbox = {"seq",        "message_id", "origin",  "received_at",
                                          "webhook_timestamp", "event_type", "headers", "body"};
  const std::vector<std::string> types = {"daily.data.sleep.created", "historical.data.heartrate.created",
                                          "provider.connection.created", "la]b*?", "DAILY.data.x"};
  s.exec("BEGIN");
  for (int i = 1; i <= 3 * pgread::kFetchDeliveries; ++i) {
    std::string body = "{\"n\": " + std::to_string(i) + "}";
    if (i % 4 == 0) body = std::string("bin\0ary\xff\xfe", 9) + std::to_string(i);
    if (i % 9 == 0) body.clear();
    const bool fetched = i % 7 == 0;
    s.insert("inbox", inbox,
             {I(i), T((fetched ? "fetch:providers:" : "msg_") + std::to_string(1000 + i)),
              T(fetched ? "fetch" : "webhook"), I(10000 + 100 * i), fetched ? N() : I(10 + i),
              i % 6 == 5 ? N() : T(fetched ? "fetch.providers" : types[static_cast<size_t>(i) % types.size()]),
              T("{\"content-type\": \"application/json\"}"), B(body)});
    if (i <= 30 && i % 5 != 0) {
      s.insert("delivery_outcomes", {"seq", "status", "family", "error"},
               {I(i), T(i % 3 ? "processed" : "invalid"), i % 2 ? T("summary") : N(), i % 3 ? N() : T("bad")});
    }
  }
  s.insert("removed_bodies", {"seq", "body_sha256", "body_bytes", "removed_at_ms"},
           {I(2), T("ab12"), I(10), I(99999)});
  s.exec("UPDATE processor_state SET applied_seq = 30");
  s.exec("COMMIT");
}

// The PostgreSQL reader's last statement was one FETCH of a few rows (a cursor's), not a
// whole listing's SELECT.
void expect_last_fetch_of_a_few_rows(BothStores& stores) {
  auto last = stores.pg_writer().query(
      "SELECT query FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() "
      "AND query LIKE 'FETCH%'");
  BOOST_REQUIRE_MESSAGE(last, last.error());
  BOOST_REQUIRE_EQUAL(last->size(), 1);
  BOOST_TEST(std::string(last->text(0, 0)).starts_with("FETCH FORWARD " + std::to_string(pgread::kFetchDeliveries) + " "));
}

}  // namespace

BOOST_AUTO_TEST_CASE(glob_patterns_become_anchored_regular_expressions) {
  BOOST_TEST(store::schema::glob_to_regex("daily.*") == "^daily\\..*$");
  BOOST_TEST(store::schema::glob_to_regex("a?[^]x-z-]") == "^a.[^\\]x-z\\-]$");
  BOOST_TEST(store::schema::glob_to_regex("[abc") == "a^");
  BOOST_TEST(store::schema::glob_to_regex("[z-ad]") == "^[zd]$");  // a reversed range holds nothing
}

BOOST_AUTO_TEST_CASE(a_bytewise_database_runs_the_sql_without_its_collate_clauses) {
  const std::string sql = "SELECT a FROM t WHERE a COLLATE \"C\" > $1 ORDER BY a COLLATE \"C\", b";
  BOOST_TEST(pgread::for_collation(sql, true) == "SELECT a FROM t WHERE a > $1 ORDER BY a, b");
  BOOST_TEST(pgread::for_collation(sql, false) == sql);
  auto reader = pgread::connect_reader({test::PostgresCluster::shared().fresh_database(), ""});
  BOOST_REQUIRE(!reader);  // no schema
  BothStores stores;
  auto connection = pgread::connect_reader({stores.pg_uri(), ""});
  BOOST_REQUIRE_MESSAGE(connection, connection.error());
  BOOST_TEST(connection->bytewise_collation);  // the test servers' databases are C
}

BOOST_AUTO_TEST_CASE(samples_match_by_series_and_by_time_across_pages_and_batches) {
  BothStores stores;
  fill_samples(stores);
  std::vector<std::pair<std::string, store::SampleFilter>> exports = {
      {"everything", {}},
      {"one user", {"u1", {}, {}, {}, {}, {}}},
      {"one user and resource", {"u1", "heartrate", {}, {}, {}, {}}},
      {"provider", {{}, {}, "oura", {}, {}, {}}},
      {"source type", {{}, {}, {}, "watch", {}, {}}},
      {"window", {{}, {}, {}, {}, 5000, 9000}},
      {"user and window", {"u1", "heartrate", {}, {}, 3000, 20001}},
      {"nothing", {"nobody", {}, {}, {}, {}, {}}},
  };
  for (const auto& named : exports) {
    const store::SampleFilter filter = named.second;
    same(stores, "by series: " + named.first, [&filter](ReadStore& r) {
      auto& q = r.samples();
      const std::string start = started(q.start_by_series(filter));
      return start + drain<store::StoredSample>(q);
    }, named.first == "nothing" ? 0 : 1);
  }
  // The whole export is longer than a cursor's fetch.
  const std::string all = [&stores] {
    auto& q = stores.pg_reader().samples();
    (void)q.start_by_series({});
    return drain<store::StoredSample>(q);
  }();
  BOOST_TEST(lines(all) > static_cast<size_t>(2 * pgread::kFetchRows));
  const std::string float_72 =  // 72.0 (a float, type tag v2) prints as 72
      "\"value\":72,\"unit\":\"bpm\",\"type\":null,\"start\":null,\"end\":null,\"extra\":null,"
      "\"seq\":11,\"source_id\":42,\"client_user_id\":\"client-1\",\"provider_name\":\"Oura\"} [v2 si]";
  BOOST_TEST(all.find(float_72) != std::string::npos);
  BOOST_TEST(all.find("\"value\":0.1") != std::string::npos);
  // Read back from jsonb (0.0000001) and printed in the shortest form, the exponent without
  // leading zeros, as SQLite's REAL is (`same` above): 1e-7, not 1e-07 (decision 089).
  BOOST_TEST(all.find("\"value\":1e-7,") != std::string::npos);
  BOOST_TEST(all.find("e-07") == std::string::npos);
  BOOST_TEST(all.find("\"value\":-9007199254740993,") != std::string::npos);
  BOOST_TEST(all.find("\"value\":\"high\"") != std::string::npos);
  BOOST_TEST(all.find("\"source_id\":42") != std::string::npos);
  BOOST_TEST(all.find("\"source_id\":\"abc\"") != std::string::npos);

  // Time-ordered: a whole listing (through growing batches), and pages of several sizes,
  // each resuming after the last row of the one before.
  std::vector<std::pair<std::string, store::SampleFilter>> timed = {
      {"user and resource", {"u1", "heartrate", {}, {}, {}, {}}},
      {"one provider", {"u1", "heartrate", "fitbit", {}, {}, {}}},
      {"window", {"u1", "heartrate", {}, {}, 4000, 30500}},
      {"other user", {"u2", "heartrate", {}, {}, {}, {}}},
  };
  for (const auto& named : timed) {
    const store::SampleFilter filter = named.second;
    same(stores, "by time: " + named.first, [&filter](ReadStore& r) {
      auto& q = r.samples();
      return listed<store::StoredSample>(q, q.start_by_time(filter, std::nullopt));
    }, 1);
    for (size_t limit : {size_t{7}, size_t{100}}) {
      same(stores, "pages of " + std::to_string(limit) + ": " + named.first, [&filter, limit](ReadStore& r) {
        auto& q = r.samples();
        std::string out;
        std::optional<store::SamplePosition> after;
        for (int page = 0; page < 1000; ++page) {
          auto begun = q.start_by_time(filter, after);
          if (!begun) return out + started(begun);
          size_t rows = 0;
          store::StoredSample row;
          row.with_identity = true;
          for (; rows < limit; ++rows) {
            auto more = q.next(row);
            if (!more) return out + "error: " + more.error();
            if (!*more) break;
            store::append_json(out, row);
            out += type_tags(row) + '\n';
            after = store::SamplePosition{row.t_ms, row.series_id};
          }
          q.finish();
          out += "-- page\n";
          if (rows < limit) break;
        }
        return out;
      }, 2);
    }
  }
  same(stores, "a page without a user", [](ReadStore& r) {
    return started(r.samples().start_by_time({{}, "heartrate", {}, {}, {}, {}}, std::nullopt));
  }, 1);
  same(stores, "a page resuming after the last instant", [](ReadStore& r) {
    auto& q = r.samples();
    const auto after = store::SamplePosition{INT64_MAX, 3};
    return listed<store::StoredSample>(q, q.start_by_time({"u1", "heartrate", {}, {}, {}, {}}, after)) + "end\n";
  }, 1);
}

// In a database whose default collation is not bytewise (ICU), text keys still sort as
// SQLite sorts them (COLLATE "C" stays in the SQL there).
BOOST_AUTO_TEST_CASE(keys_sort_bytewise_in_a_database_of_another_collation) {
  test::PostgresCluster& cluster = test::PostgresCluster::shared();
  cluster.psql("postgres", "CREATE DATABASE hh_read_icu TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'");
  BothStores stores(cluster.uri("hh_read_icu"));
  fill_samples(stores);
  same(stores, "export in another collation", [](ReadStore& r) {
    return listed<store::StoredSample>(r.samples(), r.samples().start_by_series({}));
  }, 1000);
  const std::string pg = listed<store::StoredSample>(stores.pg_reader().samples(),
                                                     stores.pg_reader().samples().start_by_series({}));
  BOOST_TEST(pg.find("\"Zwift\"") < pg.find("\"fitbit\""));
  same(stores, "pages in another collation", [](ReadStore& r) {
    return listed<store::StoredSample>(r.samples(), r.samples().start_by_time({"u1", "heartrate", {}, {}, {}, {}},
                                                                              store::SamplePosition{5000, 2}));
  }, 1000);
}

BOOST_AUTO_TEST_CASE(summaries_streams_records_and_order_ids_match) {
  BothStores stores;
  fill_records(stores);
  std::vector<std::pair<std::string, store::SummaryFilter>> exports = {
      {"everything", {}},
      {"resource", {"sleep", {}, {}, {}, {}, {}}},
      {"user", {{}, "u1", {}, {}, {}, {}}},
      {"provider and source", {{}, {}, "oura", "ring", {}, {}}},
      {"window", {{}, {}, {}, {}, 2000, 6000}},
  };
  for (const auto& named : exports) {
    const store::SummaryFilter filter = named.second;
    same(stores, "summary export: " + named.first, [&filter](ReadStore& r) {
      auto& q = r.summaries();
      return listed<store::StoredSummary>(q, q.start_export(filter));
    }, 1);
  }
  for (int64_t limit : {int64_t{1}, int64_t{4}, int64_t{50}}) {
    for (const auto& filter : {store::SummaryFilter{"sleep", "u1", {}, {}, {}, {}},
                               store::SummaryFilter{"sleep", "u1", {}, {}, 1000, {}},
                               store::SummaryFilter{"activity", "u1", "oura", {}, {}, {}}}) {
      same(stores, "summary pages of " + std::to_string(limit), [&filter, limit](ReadStore& r) {
        auto& q = r.summaries();
        std::string out;
        std::optional<store::SummaryPosition> after;
        for (int page = 0; page < 100; ++page) {
          auto begun = q.start_page(filter, after, limit);
          if (!begun) return out + started(begun);
          store::StoredSummary row;
          int64_t rows = 0;
          for (;;) {
            auto more = q.next(row);
            if (!more) return out + "error: " + more.error();
            if (!*more) break;
            ++rows;
            store::append_json(out, row);
            out += '\n';
            after = store::SummaryPosition{row.start_ms, std::string(row.id)};
          }
          out += "-- page\n";
          if (rows < limit) break;
        }
        return out;
      }, 2);
    }
  }
  same(stores, "summary page without a user", [](ReadStore& r) {
    return started(r.summaries().start_page({"sleep", {}, {}, {}, {}, {}}, std::nullopt, 5));
  }, 1);
  for (std::string key : {"sleep/s1-1", "sleep/with/slash", "sleep/none", "noslash"}) {
    same(stores, "summary by key " + key, [&key](ReadStore& r) {
      auto& q = r.summaries();
      return listed<store::StoredSummary>(q, q.start_by_key(key)) + "end\n";
    }, 1);
  }

  // Streams: exports longer than a fetch, pages, lookups.
  for (const auto& filter : {store::StreamFilter{}, store::StreamFilter{"w2", {}, {}, {}, {}},
                             store::StreamFilter{{}, "u1", {}, {}, {}}, store::StreamFilter{{}, {}, "fitbit", {}, {}},
                             store::StreamFilter{{}, {}, {}, 1700000010000, 1700000020000}}) {
    same(stores, "stream export", [&filter](ReadStore& r) {
      auto& q = r.streams();
      return listed<store::StoredStreamPoint>(q, q.start_export(filter));
    }, 5);
  }
  same(stores, "stream pages", [](ReadStore& r) {
    auto& q = r.streams();
    std::string out = listed<store::StoredStreamPoint>(q, q.start_page("w1", std::nullopt, 3));
    out += listed<store::StoredStreamPoint>(q, q.start_page("w1", 1100, 500));
    return out + listed<store::StoredStreamPoint>(q, q.start_page("w9", 0, 5)) + "end\n";
  }, 100);
  same(stores, "workout lookups", [](ReadStore& r) {
    std::string out;
    for (const char* id : {"w1", "w2", "w3"}) {
      store::StoredWorkoutStream row;
      auto found = r.streams().find_workout(id, row);
      if (!found) return out + "error: " + found.error();
      if (*found) {
        store::append_json(out, row);
        // Not in the row's JSON: the fetch a stream page's cursor names (api_pages.cpp).
        out += " fetched_seq " + (row.fetched_seq ? std::to_string(*row.fetched_seq) : std::string("none"));
      }
      out += '\n';
    }
    return out;
  }, 3);
  for (ReadStore* r : {&stores.lite_reader(), &stores.pg_reader()}) {
    store::StoredWorkoutStream fetched, notice_only;
    auto found = r->streams().find_workout("w1", fetched);
    BOOST_TEST_REQUIRE((found.ok() && *found));
    BOOST_TEST(fetched.fetched_seq.value_or(-1) == 2);
    found = r->streams().find_workout("w2", notice_only);
    BOOST_TEST_REQUIRE((found.ok() && *found));
    BOOST_TEST(!notice_only.fetched_seq);
  }

  // Records: every table with its filters, and rows by change-feed key.
  const std::vector<store::RecordFilter> filters = {
      {}, {"u1", {}, {}, {}, {}}, {{}, "oura", {}, {}, {}}, {{}, {}, "sleep", {}, {}}, {{}, {}, {}, "completed", {}},
      {{}, {}, {}, {}, "o1"}, {"u2", "fitbit", {}, {}, {}}, {{}, {}, {}, {}, {}, "client-1"},
      // The pairs the read API and the console give (a user's orders, a user by client id),
      // three at once, and an empty string (a filter given, matching ''): each combination
      // is a statement of its own (store/schema/record_sql.h).
      {"u1", {}, {}, {}, "o1"}, {"u1", {}, {}, {}, {}, "client-1"}, {"u1", "oura", "sleep", {}, {}},
      {"u1", "oura", "sleep", "completed", "o1", "client-1"}, {"", {}, {}, {}, {}}};
  for (size_t i = 0; i < filters.size(); ++i) {
    const store::RecordFilter filter = filters[i];
    same(stores, "records, filter " + std::to_string(i), [&filter](ReadStore& r) {
      std::string out;
      const auto list = [&out, &filter](auto& query, auto prototype) {
        out += listed<decltype(prototype)>(query, query.start(filter)) + "--\n";
      };
      list(r.connections(), store::StoredConnection{});
      list(r.devices(), store::StoredDevice{});
      list(r.lab_orders(), store::StoredLabOrder{});
      list(r.lab_appointments(), store::StoredLabAppointment{});
      list(r.lab_results(), store::StoredLabResult{});
      list(r.parsing_jobs(), store::StoredParsingJob{});
      list(r.backfills(), store::StoredBackfill{});
      list(r.users(), store::StoredUser{});
      list(r.providers(), store::StoredProvider{});
      return out;
    }, 9);
  }
  same(stores, "records by key", [](ReadStore& r) {
    std::string out;
    const auto by_key = [&out](auto& query, auto prototype, const std::string& key) {
      out += key + ": " + listed<decltype(prototype)>(query, query.start_by_key(key)) + "\n";
    };
    by_key(r.connections(), store::StoredConnection{}, "u1/oura");
    by_key(r.connections(), store::StoredConnection{}, "u1");
    by_key(r.devices(), store::StoredDevice{}, "d0");
    by_key(r.lab_orders(), store::StoredLabOrder{}, "o2");
    by_key(r.lab_appointments(), store::StoredLabAppointment{}, "a1");
    by_key(r.lab_results(), store::StoredLabResult{}, "o4");
    by_key(r.parsing_jobs(), store::StoredParsingJob{}, "p1");
    by_key(r.backfills(), store::StoredBackfill{}, "u1/sleep/oura/0/86400000");
    by_key(r.backfills(), store::StoredBackfill{}, "u2/steps/fitbit/-5/5");
    by_key(r.backfills(), store::StoredBackfill{}, "u1/sleep/oura/0");
    by_key(r.backfills(), store::StoredBackfill{}, "u1/sleep/oura/x/y");
    by_key(r.users(), store::StoredUser{}, "u/3");
    by_key(r.providers(), store::StoredProvider{}, "Fitbit");
    by_key(r.providers(), store::StoredProvider{}, "none");
    return out;
  }, 14);
  same(stores, "order ids", [](ReadStore& r) {
    std::string out;
    auto& q = r.user_order_ids();
    std::optional<std::string> after;
    for (int page = 0; page < 10; ++page) {
      auto begun = q.start("u1", after, 2);
      if (!begun) return out + started(begun);
      std::string_view id;
      int rows = 0;
      for (;;) {
        auto more = q.next(id);
        if (!more) return out + "error: " + more.error();
        if (!*more) break;
        ++rows;
        out += std::string(id) + "\n";
        after = std::string(id);
      }
      out += "--\n";
      if (rows < 2) break;
    }
    return out;
  }, 5);

  // Lookups while an export's cursor is open (the read API's change feed reads rows by key
  // while it lists): both go on, in one snapshot.
  same(stores, "lookups inside an open listing", [](ReadStore& r) {
    store::ReadSnapshot snapshot(r);
    std::string out = started(snapshot.begun());
    auto& points = r.streams();
    out += started(points.start_export({"w1", {}, {}, {}, {}}));
    store::StoredStreamPoint point;
    for (int i = 0; i < 3; ++i) {
      auto more = points.next(point);
      if (!more || !*more) return out + "listing ended early\n";
      store::append_json(out, point);
      out += "\n" + listed<store::StoredUser>(r.users(), r.users().start_by_key("u1"));
    }
    return out + drain<store::StoredStreamPoint>(points, 2000);
  }, 1000);
}

// A page of large summaries (each as large as a delivery allows) stops at the read API's
// byte budget long before `limit`: PostgreSQL reads it a few rows at a time, as exports,
// where it fetched the whole page (10,000 summaries of 4 MiB: 40 GB in one result).
BOOST_AUTO_TEST_CASE(a_summary_page_is_fetched_a_few_rows_at_a_time) {
  BothStores stores;
  const std::vector<std::string> summary = {"resource", "id",       "user_id", "provider", "source_type",
                                            "calendar_date", "start_ms", "end_ms", "seq",    "data"};
  const int count = pgread::kFetchDeliveries * 3;
  for (int i = 0; i < count; ++i) {
    stores.insert("summaries", summary,
                  {T("sleep"), T("big-" + std::to_string(100 + i)), T("fat"), T("oura"), T("ring"), N(), I(1000 * i),
                   N(), I(i + 1), T("{\"padding\": \"" + std::string(100'000, 'y') + "\"}")});
  }
  const store::SummaryFilter filter{"sleep", "fat", {}, {}, {}, {}};
  same(stores, "a page of large summaries", [&filter](ReadStore& r) {
    store::ReadSnapshot snapshot(r);
    auto& q = r.summaries();
    return listed<store::StoredSummary>(q, q.start_page(filter, std::nullopt, 10000));
  }, static_cast<size_t>(count));

  ReadStore& reader = stores.pg_reader();
  store::ReadSnapshot snapshot(reader);
  auto& q = reader.summaries();
  BOOST_REQUIRE(q.start_page(filter, std::nullopt, 10000));
  store::StoredSummary row;
  auto first = q.next(row);
  BOOST_REQUIRE_MESSAGE(first, first.error());
  BOOST_REQUIRE(*first);
  // What the reader's connection ran last: one fetch of a few rows, not the page's SELECT.
  expect_last_fetch_of_a_few_rows(stores);
  q.finish();
}

// A user's devices (GET /v1/users/{id} stops at 8 MiB, decision 102): each row carries the
// device's data, as large as a delivery, and each new device id adds one, so PostgreSQL
// fetches them a few at a time (it fetched 1,000 rows at once: GBs held before the cut).
BOOST_AUTO_TEST_CASE(a_users_devices_and_connections_are_fetched_a_few_rows_at_a_time) {
  BothStores stores;
  const int count = pgread::kFetchDeliveries * 3;
  const std::string padding(100'000, 'm');
  for (int i = 0; i < count; ++i) {
    stores.insert("devices",
                  {"id", "user_id", "provider", "source_type", "app_id", "device_manufacturer", "device_model",
                   "device_version", "device_id", "seq", "data"},
                  {T("dev-" + std::to_string(100 + i)), T("fat"), T("garmin"), T("watch"), N(), T(padding), N(), N(),
                   T(std::to_string(i)), I(i + 1), T("{\"device_manufacturer\": \"" + padding + "\"}")});
    stores.insert("connections",
                  {"user_id", "provider", "status", "external_user_id", "error_type", "error_message",
                   "resource_availability", "event_type", "seq", "data"},
                  {T("fat"), T("p" + std::to_string(100 + i)), T("connected"), T(padding), N(), N(), N(),
                   T("provider.connection.created"), I(count + i + 1), T("{}")});
  }
  store::RecordFilter filter;
  filter.user_id = "fat";
  same(stores, "a user's large devices", [&filter](ReadStore& r) {
    store::ReadSnapshot snapshot(r);
    auto& q = r.devices();
    return listed<store::StoredDevice>(q, q.start(filter));
  }, static_cast<size_t>(count));

  ReadStore& reader = stores.pg_reader();
  const auto first_fetch = [&stores](auto& query, const store::RecordFilter& by, auto row) {
    BOOST_REQUIRE(query.start(by));
    auto first = query.next(row);
    BOOST_REQUIRE_MESSAGE(first, first.error());
    BOOST_REQUIRE(*first);
    expect_last_fetch_of_a_few_rows(stores);  // what the reader's connection ran last
    query.finish();
  };
  store::ReadSnapshot snapshot(reader);
  first_fetch(reader.devices(), filter, store::StoredDevice{});
  first_fetch(reader.connections(), filter, store::StoredConnection{});
}

// The record of erasures, paged by id, reads the same on both backends.
BOOST_AUTO_TEST_CASE(erasure_pages_match) {
  BothStores stores;
  const std::vector<std::string> columns = {"erasure_id", "user_id", "erased_at_ms", "row_counts"};
  for (int i = 1; i <= 5; ++i) {
    stores.insert("erasures", columns, {I(i), T("user-" + std::to_string(i)), I(1700000000000 + i), T("{}")});
  }
  for (int64_t limit : {int64_t{1}, int64_t{2}, int64_t{10}}) {
    same(stores, "erasure pages of " + std::to_string(limit), [limit](ReadStore& r) {
      std::string out;
      int64_t after = 0;
      for (int page = 0; page < 10; ++page) {
        store::ReadSnapshot snapshot(r);
        auto& q = r.erasures();
        if (auto begun = q.start_page(after, limit); !begun) return out + started(begun);
        store::StoredErasure row;
        int rows = 0;
        for (;;) {
          auto more = q.next(row);
          if (!more) return out + "error: " + more.error();
          if (!*more) break;
          ++rows;
          out += std::to_string(row.erasure_id) + " " + std::string(row.user_id) + " " +
                 std::to_string(row.erased_at_ms) + "\n";
          after = row.erasure_id;
        }
        out += "-- page\n";
        if (rows == 0) break;
      }
      return out;
    }, 5);
  }
}

BOOST_AUTO_TEST_CASE(change_pages_match_and_end_inside_a_seq_only_when_they_must) {
  BothStores stores;
  fill_changes(stores);
  for (int64_t limit : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{13}, int64_t{100}}) {
    same(stores, "change pages of " + std::to_string(limit), [limit](ReadStore& r) {
      std::string out;
      store::ChangePosition from;
      for (int page = 0; page < 100; ++page) {
        store::ReadSnapshot snapshot(r);
        auto& q = r.changes();
        auto begun = q.start_page(from, limit);
        if (!begun) return out + started(begun);
        store::StoredChange row;
        int rows = 0;
        for (;;) {
          auto more = q.next(row);
          if (!more) return out + "error: " + more.error();
          if (!*more) break;
          ++rows;
          store::append_json(out, row);
          out += '\n';
        }
        out += q.ends_inside_seq() ? "-- inside\n" : "-- page\n";
        if (rows == 0) break;
        from = q.ends_inside_seq() ? store::ChangePosition{row.seq, row.change_id} : store::ChangePosition{row.seq, {}};
      }
      return out;
    }, 24);
  }
}

// On PostgreSQL a change above the applied position is not served yet (sessions applying
// at once may commit a later seq's changes first: change_query.h), and is once the
// position passes it; SQLite serves what is there.
BOOST_AUTO_TEST_CASE(changes_above_the_applied_position_wait_on_postgresql) {
  BothStores stores;
  fill_changes(stores);
  const auto seqs = [](ReadStore& r) {
    std::string out;
    store::ReadSnapshot snapshot(r);
    auto& q = r.changes();
    if (auto begun = q.start_page(store::ChangePosition{0, {}}, 100); !begun) return started(begun);
    store::StoredChange row;
    for (;;) {
      auto more = q.next(row);
      if (!more) return out + "error: " + more.error();
      if (!*more) return out;
      out += std::to_string(row.seq) + " ";
    }
  };
  const std::string all = "1 1 1 2 2 2 2 2 2 2 2 2 2 2 2 3 5 5 6 6 6 6 9 ";
  stores.exec("UPDATE processor_state SET applied_seq = 5");
  BOOST_TEST(seqs(stores.lite_reader()) == all);
  BOOST_TEST(seqs(stores.pg_reader()) == "1 1 1 2 2 2 2 2 2 2 2 2 2 2 2 3 5 5 ");
  stores.exec("UPDATE processor_state SET applied_seq = 8");
  BOOST_TEST(seqs(stores.pg_reader()) == "1 1 1 2 2 2 2 2 2 2 2 2 2 2 2 3 5 5 6 6 6 6 ");
  stores.exec("UPDATE processor_state SET applied_seq = 9");
  BOOST_TEST(seqs(stores.pg_reader()) == all);
}

BOOST_AUTO_TEST_CASE(inbox_rows_match_byte_for_byte) {
  BothStores stores;
  fill_inbox(stores);
  const std::vector<std::optional<std::string>> globs = {
      std::nullopt, "*", "daily.data.*", "?aily*", "[a-d]*", "[^d]*", "*[]]*", "la]b[*][?]", "[abc", "*.created",
      "historical.data.*.created", "DAILY*", "fetch.*", "", "*data.[h-z]*", "[z-ad]*", "[^z-a]*", "[]-a]*"};
  for (size_t i = 0; i < globs.size(); ++i) {
    for (bool webhooks_only : {true, false}) {
      const store::DeliveryFilter filter{{}, {}, globs[i], {}, webhooks_only};
      same(stores, "deliveries, glob " + globs[i].value_or("none"), [&filter](ReadStore& r) {
        int64_t first = -1, last = -1;
        auto& q = r.deliveries();
        const std::string start = started(q.start_export(filter, first, last));
        return start + std::to_string(first) + ".." + std::to_string(last) + "\n" + drain<store::StoredDelivery>(q);
      }, 1);
    }
  }
  for (const auto& filter : {store::DeliveryFilter{10500, 12000, {}, {}, true},
                             store::DeliveryFilter{99999999, {}, {}, {}, true},
                             store::DeliveryFilter{{}, {}, {}, "pending", false},
                             store::DeliveryFilter{{}, {}, {}, "invalid", true},
                             store::DeliveryFilter{{}, 13000, {}, "processed", true}}) {
    same(stores, "deliveries in a window", [&filter](ReadStore& r) {
      int64_t first = -1, last = -1;
      auto& q = r.deliveries();
      const std::string start = started(q.start_export(filter, first, last));
      return start + std::to_string(first) + ".." + std::to_string(last) + "\n" + drain<store::StoredDelivery>(q);
    }, 1);
  }
  same(stores, "deliveries by id", [](ReadStore& r) {
    std::string out;
    for (const char* id : {"msg_1004", "msg_1002", "fetch:providers:1007", "msg_9"}) {
      store::StoredDelivery row;
      auto found = r.deliveries().find(id, row);
      if (!found) return out + "error: " + found.error();
      if (*found) store::append_json(out, row);
      out += "\n";
    }
    return out;
  }, 4);
  // The bytes themselves, not only their formatting.
  store::StoredDelivery row;
  auto found = stores.pg_reader().deliveries().find("msg_1004", row);
  BOOST_REQUIRE(found && *found);
  BOOST_TEST(row.body == std::string_view(std::string("bin\0ary\xff\xfe", 9) + "4"));
}

// The console's reads (store::ChartQuery, DeliveryQuery::start_newest_first, users by
// client_user_id): the same rows on both backends. Bucket figures are compared to 9
// significant digits: the backends may add a bucket's values in another order.
std::string bucket_line(const store::SampleBucket& b) {
  char figures[96];
  std::snprintf(figures, sizeof figures, "%.9g %.9g %.9g", b.min, b.max, b.mean);
  return std::string(b.provider) + "/" + std::string(b.source_type) + " #" + std::to_string(b.bucket) + " " +
         std::to_string(b.first_ms) + ".." + std::to_string(b.last_ms) + " n=" + std::to_string(b.count) + " " +
         figures + "\n";
}

BOOST_AUTO_TEST_CASE(console_reads_match) {
  BothStores stores;
  fill_samples(stores);
  BothStores records;  // summaries (their users clash with fill_samples' users)
  fill_records(records);
  same(stores, "series of a user", [](ReadStore& r) {
    std::string out = started(r.charts().start_series("u1"));
    store::StoredSeries row;
    for (;;) {
      auto more = r.charts().next(row);
      if (!more) return out + "error: " + more.error();
      if (!*more) return out;
      out += std::string(row.resource) + " " + std::string(row.provider) + " " + std::string(row.source_type) + " " +
             std::to_string(row.first_ms.value_or(-1)) + " " + std::to_string(row.last_ms.value_or(-1)) + "\n";
    }
  }, 7);
  for (const char* user : {"u1", "u2", "nobody"}) {
    same(records, std::string("summary kinds of ") + user, [user](ReadStore& r) {
      std::string out = started(r.charts().start_summary_kinds(user));
      store::StoredSummaryKind row;
      for (;;) {
        auto more = r.charts().next(row);
        if (!more) return out + "error: " + more.error();
        if (!*more) return out;
        out += std::string(row.resource) + " " + std::string(row.provider.value_or("-")) + " " +
               std::string(row.source_type) + " " + std::to_string(row.count) + " " +
               std::to_string(row.first_start_ms.value_or(-1)) + " " + std::to_string(row.last_start_ms.value_or(-1)) +
               "\n";
      }
    }, 0);
  }
  struct Chart {
    store::SampleFilter filter;
    int64_t bucket_ms;
  };
  const std::vector<Chart> charts = {
      {{"u1", "heartrate", {}, {}, 0, 200000}, 1},        // a bucket per sample
      {{"u1", "heartrate", {}, {}, 0, 200000}, 7000},
      {{"u1", "heartrate", {}, {}, 3000, 30000}, 1000},
      {{"u1", "heartrate", "oura", {}, 0, 200000}, 100000},
      {{"u1", "heartrate", {}, "watch", 0, 50000}, 5000},
      {{"u1", "steps", {}, {}, 0, 200000}, 10000},
      {{"u2", "heartrate", {}, {}, 0, 200000}, 1000},  // text values only: nothing
  };
  for (const auto& chart : charts) {
    same(stores, "chart " + chart.filter.resource.value_or("") + " " + std::to_string(chart.bucket_ms),
         [&chart](ReadStore& r) {
           std::string out = started(r.charts().start_buckets(chart.filter, chart.bucket_ms));
           store::SampleBucket row;
           for (;;) {
             auto more = r.charts().next(row);
             if (!more) return out + "error: " + more.error();
             if (!*more) return out;
             out += bucket_line(row);
           }
         }, chart.filter.user_id == "u2" ? 0 : 1);
  }
  same(stores, "users by client user id", [](ReadStore& r) {
    std::string out;
    for (const char* client : {"client-1", "nobody"}) {
      store::RecordFilter filter;
      filter.client_user_id = client;
      out += started(r.users().start(filter)) + drain<store::StoredUser>(r.users());
    }
    return out;
  }, 1);
}

BOOST_AUTO_TEST_CASE(deliveries_newest_first_match) {
  BothStores stores;
  fill_inbox(stores);
  const std::vector<store::DeliveryFilter> filters = {
      {{}, {}, {}, {}, true},           {{}, {}, {}, {}, false},          {10500, 12000, {}, {}, true},
      {{}, {}, "daily.data.*", {}, true}, {{}, {}, {}, "invalid", true}, {{}, 13000, {}, "processed", false}};
  for (const auto& filter : filters) {
    for (std::optional<int64_t> before : {std::optional<int64_t>(), std::optional<int64_t>(30), std::optional<int64_t>(1)}) {
      same(stores, "newest first, before " + std::to_string(before.value_or(0)), [&](ReadStore& r) {
        auto& q = r.deliveries();
        const std::string start = started(q.start_newest_first(filter, before));
        return start + drain<store::StoredDelivery>(q);
      }, 0);
    }
  }
  // Newest first indeed, and below `before`.
  auto& q = stores.pg_reader().deliveries();
  BOOST_REQUIRE(q.start_newest_first({{}, {}, {}, {}, false}, 20));
  store::StoredDelivery row;
  int64_t previous = 20;
  int count = 0;
  for (;;) {
    auto more = q.next(row);
    BOOST_REQUIRE(more);
    if (!*more) break;
    BOOST_TEST(row.seq < previous);
    previous = row.seq;
    ++count;
  }
  BOOST_TEST(count == 19);
}

BOOST_AUTO_TEST_CASE(a_snapshot_sees_one_state_and_listings_see_the_state_they_started_in) {
  BothStores stores;
  fill_records(stores);
  ReadStore& pg = stores.pg_reader();
  const auto users = [&pg] {
    auto& q = pg.users();
    return listed<store::StoredUser>(q, q.start({}));
  };
  const std::string before = users();
  {
    store::ReadSnapshot snapshot(pg);
    BOOST_REQUIRE(snapshot.begun());
    BOOST_TEST(users() == before);
    BOOST_REQUIRE(stores.pg_writer().exec(
        "INSERT INTO users (user_id, first_seen_ms, last_seen_ms, seq) VALUES ('u9', 1, 1, 50)"));
    BOOST_TEST(users() == before);
    BOOST_TEST(!pg.begin_snapshot());  // one at a time
  }
  const std::string after = users();
  BOOST_TEST(after != before);
  BOOST_TEST(after.find("\"u9\"") != std::string::npos);

  // A listing open across a write keeps the state it started in, as a SQLite statement does.
  auto& points = pg.streams();
  BOOST_REQUIRE(points.start_export({}));
  store::StoredStreamPoint point;
  auto first = points.next(point);
  BOOST_REQUIRE(first && *first);
  BOOST_REQUIRE(stores.pg_writer().exec("DELETE FROM stream_points WHERE workout_id = 'w2'"));
  const std::string rest = drain<store::StoredStreamPoint>(points);
  BOOST_TEST(lines(rest) == static_cast<size_t>(pgread::kFetchRows + 200 + 5 - 1));
  BOOST_REQUIRE(points.start_export({}));
  BOOST_TEST(lines(drain<store::StoredStreamPoint>(points)) == static_cast<size_t>(pgread::kFetchRows + 200));
}

BOOST_AUTO_TEST_CASE(figures_and_follow_up_reads_match) {
  BothStores stores;
  fill_records(stores);
  fill_inbox(stores);
  const auto figures_of = [](const std::string& database) {
    auto figures = store::open_figures(database);
    if (!figures) return "open error: " + figures.error();
    std::string out;
    auto positions = (*figures)->positions();
    if (!positions) return "error: " + positions.error();
    out += std::to_string(positions->last_seq) + " " + std::to_string(positions->applied_seq) + " " +
           std::to_string(positions->oldest_unapplied_received_at_ms.value_or(-1)) + "\n";
    for (auto range : std::vector<std::pair<int64_t, int64_t>>{{0, 30}, {10, 20}, {30, 30}}) {
      auto counts = (*figures)->outcome_counts(range.first, range.second);
      if (!counts) return "error: " + counts.error();
      std::vector<std::string> sorted;
      for (const auto& c : *counts) sorted.push_back(c.family + "/" + c.status + "=" + std::to_string(c.deliveries));
      std::sort(sorted.begin(), sorted.end());
      for (const auto& c : sorted) out += c + " ";
      out += "\n";
    }
    auto jobs = (*figures)->jobs_by_state();
    if (!jobs) return "error: " + jobs.error();
    for (const auto& [state, count] : *jobs) out += state + "=" + std::to_string(count) + " ";
    auto sizes = (*figures)->sizes();
    if (!sizes) return "error: " + sizes.error();
    out += sizes->database_bytes > 0 ? "\nsized\n" : "\nno size\n";
    return out;
  };
  const std::string lite = figures_of(stores.sqlite_path());
  BOOST_TEST(lite == figures_of(stores.pg_uri()));
  BOOST_TEST(lite.find("summary/processed=") != std::string::npos);

  const auto follow_ups_of = [](const std::string& database) {
    auto reads = store::open_follow_up_reads(database);
    if (!reads) return "open error: " + reads.error();
    std::string out;
    auto due = (*reads)->next_due_at();
    if (!due) return "error: " + due.error();
    out += std::to_string(due->value_or(-1)) + "\n";
    for (const char* prefix : {"fetch:providers:", "msg_100", "nothing", "msg_1004"}) {
      auto body = (*reads)->newest_body_with_id_prefix(prefix);
      if (!body) return "error: " + body.error();
      out += *body ? "[" + **body + "]\n" : "none\n";
    }
    auto empty = (*reads)->newest_body_with_id_prefix("");
    out += empty ? "accepted an empty prefix\n" : empty.error() + "\n";
    return out;
  };
  const std::string lite_reads = follow_ups_of(stores.sqlite_path());
  BOOST_TEST(lite_reads == follow_ups_of(stores.pg_uri()));
  BOOST_TEST(lite_reads.find(std::string("bin\0ary\xff\xfe", 9) + "4]") != std::string::npos);
  BOOST_TEST(lite_reads.find("6000\n") == 0u);
}

// Readers live long (the read API's pool, /metrics, the fetcher): after the server dropped
// their connections they reconnect, except inside a snapshot, whose view is gone.
BOOST_AUTO_TEST_CASE(readers_reconnect_after_their_connection_was_dropped) {
  BothStores stores;
  fill_records(stores);
  fill_inbox(stores);
  auto figures = store::open_figures(stores.pg_uri());
  BOOST_REQUIRE(figures);
  auto reads = store::open_follow_up_reads(stores.pg_uri());
  BOOST_REQUIRE(reads);
  ReadStore& reader = stores.pg_reader();
  const auto users = [&reader] { return listed<store::StoredUser>(reader.users(), reader.users().start({})); };
  const std::string before = users();
  BOOST_TEST(lines(before) == 2u);
  const auto drop_readers = [&stores] {
    auto dropped = stores.pg_writer().query(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()");
    BOOST_REQUIRE_MESSAGE(dropped, dropped.error());
    BOOST_TEST(dropped->integer(0, 0) >= 3);
  };
  drop_readers();
  BOOST_TEST(users() == before);
  BOOST_TEST(lines(listed<store::StoredStreamPoint>(reader.streams(), reader.streams().start_export({}))) ==
             static_cast<size_t>(pgread::kFetchRows + 205));
  auto positions = (*figures)->positions();
  BOOST_REQUIRE_MESSAGE(positions, positions.error());
  BOOST_TEST(positions->applied_seq == 30);
  auto due = (*reads)->next_due_at();
  BOOST_REQUIRE_MESSAGE(due, due.error());
  BOOST_TEST(due->value_or(-1) == 6000);
  {
    store::ReadSnapshot snapshot(reader);
    BOOST_REQUIRE(snapshot.begun());
    BOOST_TEST(users() == before);
    drop_readers();
    BOOST_TEST(users().find("error") != std::string::npos);
    BOOST_TEST(users().find("error") != std::string::npos);  // the snapshot stays ended
  }
  BOOST_TEST(users() == before);
}

BOOST_AUTO_TEST_CASE(a_database_without_the_schema_is_refused_and_left_alone) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto reader = store::open_read_store(uri);
  BOOST_REQUIRE(!reader);
  BOOST_TEST(reader.error().find("not a healthhook database (no schema)") != std::string::npos, reader.error());
  auto figures = store::open_figures(uri);
  BOOST_REQUIRE(!figures);
  BOOST_TEST(figures.error().find("no schema") != std::string::npos);
  auto reads = store::open_follow_up_reads(uri);
  BOOST_REQUIRE(!reads);
  BOOST_TEST(reads.error().find("no schema") != std::string::npos);
  auto db = store::connect({uri, ""});
  BOOST_REQUIRE(db);
  auto tables = db->query_int("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'");
  BOOST_REQUIRE(tables);
  BOOST_TEST(tables->value_or(-1) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
