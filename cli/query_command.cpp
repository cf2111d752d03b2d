// healthhook query samples|summaries|streams|connections|orders: the derived tables as
// CSV or JSON Lines (field names and formats: store/queries/row_format.h), filtered.
//
// Reads through a read-only connection inside one read transaction (a consistent
// snapshot beside a running `serve`), one row at a time with buffered output: memory
// stays flat for millions of rows. Rows come in key order (samples: user, resource,
// provider, source type, then time; summaries: resource, id; streams: workout, index).
#include <filesystem>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/timestamp.h"
#include "replay/output_file.h"
#include "store/database.h"
#include "store/queries/row_format.h"

namespace hh::cli {
namespace {

struct QueryFlags {
  SettingsFlags settings;
  std::string format = "jsonl";
  std::string output = "-";
  std::optional<std::string> user, resource, provider, source_type, workout, since, until;
};

// Writes every row of `query` (already started) to `out`.
template <typename Row, typename Query>
Result<uint64_t> write_rows(Query& query, store::OutputFormat format, replay::OutputFile& out) {
  store::append_header<Row>(out.buffer(), format);
  Row row;
  uint64_t count = 0;
  for (;;) {
    auto has_row = query.next(row);
    if (!has_row) return fail(has_row.error());
    if (!*has_row) break;
    store::append_record(out.buffer(), format, row);
    if (auto flushed = out.flush_if_full(); !flushed) return fail(flushed.error());
    ++count;
  }
  return count;
}

std::optional<int64_t> time_flag(const std::optional<std::string>& text, std::string_view flag, bool& ok) {
  if (!text) return std::nullopt;
  auto ms = parse_time_bound_ms(*text);
  if (!ms) {
    report_error("query", std::string(flag) + ": expected RFC 3339, a date or Unix seconds, got \"" + *text + "\"");
    ok = false;
  }
  return ms;
}

Result<uint64_t> export_table(std::string_view table, const QueryFlags& flags, sqlite::Connection& db,
                              store::OutputFormat format, replay::OutputFile& out, std::optional<int64_t> since,
                              std::optional<int64_t> until) {
  if (table == "samples") {
    auto query = store::SampleQuery::create(db);
    if (!query) return fail(query.error());
    store::SampleFilter filter{flags.user, flags.resource, flags.provider, flags.source_type, since, until};
    if (auto started = query->start_by_series(filter); !started) return fail(started.error());
    return write_rows<store::StoredSample>(*query, format, out);
  }
  if (table == "summaries") {
    auto query = store::SummaryQuery::create(db);
    if (!query) return fail(query.error());
    query->start_export({flags.resource, flags.user, flags.provider, flags.source_type, since, until});
    return write_rows<store::StoredSummary>(*query, format, out);
  }
  if (table == "streams") {
    auto query = store::StreamQuery::create(db);
    if (!query) return fail(query.error());
    query->start_export({flags.workout, flags.user, flags.provider, since, until});
    return write_rows<store::StoredStreamPoint>(*query, format, out);
  }
  if (table == "connections") {
    auto query = store::ConnectionQuery::create(db);
    if (!query) return fail(query.error());
    query->start({flags.user, flags.provider});
    return write_rows<store::StoredConnection>(*query, format, out);
  }
  auto query = store::LabOrderQuery::create(db);
  if (!query) return fail(query.error());
  query->start({flags.user});
  return write_rows<store::StoredLabOrder>(*query, format, out);
}

int run_query(std::string_view table, const QueryFlags& flags) {
  auto settings = load_settings_or_report(flags.settings, "query");
  if (!settings) return kExitBadConfig;
  bool ok = true;
  const auto since = time_flag(flags.since, "--since", ok);
  const auto until = time_flag(flags.until, "--until", ok);
  if (!ok) return kExitBadConfig;
  const auto format = flags.format == "csv" ? store::OutputFormat::csv : store::OutputFormat::jsonl;
  std::error_code ec;
  if (!std::filesystem::exists(settings->database, ec)) {
    report_error("query", "database: " + settings->database + " does not exist");
    return kExitBadConfig;
  }
  auto db = store::open_for_reading(settings->database);
  if (!db) {
    report_error("query", db.error());
    return kExitFailure;
  }
  auto out = replay::OutputFile::open(flags.output);
  if (!out) {
    report_error("query", "--output: " + out.error());
    return kExitBadConfig;
  }
  if (auto begun = db->exec("BEGIN"); !begun) {
    report_error("query", begun.error());
    return kExitFailure;
  }
  auto written = export_table(table, flags, *db, format, *out, since, until);
  (void)db->exec("COMMIT");  // a read transaction: ending it cannot lose data
  if (!written) {
    report_error("query", written.error());
    return kExitFailure;
  }
  if (auto closed = out->close(); !closed) {
    report_error("query", closed.error());
    return kExitFailure;
  }
  return kExitOk;
}

void add_table(CLI::App& query, std::string_view table, std::string_view description, int& exit_code) {
  auto flags = std::make_shared<QueryFlags>();
  auto* command = query.add_subcommand(std::string(table), std::string(description));
  add_settings_flags(*command, flags->settings, /*with_listen=*/false);
  command->add_option("--format", flags->format, "csv (RFC 4180) or jsonl (JSON Lines, the default)")
      ->check(CLI::IsMember({"csv", "jsonl"}));
  command->add_option("-o,--output", flags->output, "File to write (default: standard output)")->type_name("FILE");
  command->add_option("--user", flags->user, "Only this user_id");
  if (table == "samples" || table == "summaries") {
    command->add_option("--resource", flags->resource, "Only this resource (heartrate, sleep, …)");
    command->add_option("--source-type", flags->source_type, "Only this source type (ring, watch, …)");
  }
  if (table != "orders") command->add_option("--provider", flags->provider, "Only this provider (oura, garmin, …)");
  if (table == "streams") command->add_option("--workout", flags->workout, "Only this workout_id");
  if (table == "samples" || table == "summaries" || table == "streams") {
    const std::string on = table == "samples"     ? "the sample's timestamp"
                           : table == "summaries" ? "the start of the summary's period"
                                                  : "the point's time";
    command->add_option("--since", flags->since, "At or after T, on " + on + " (RFC 3339, a date, or Unix seconds)");
    command->add_option("--until", flags->until, "Before T");
  }
  command->callback([table, flags, &exit_code] { exit_code = run_query(table, *flags); });
}

}  // namespace

void add_query_command(CLI::App& app, int& exit_code) {
  auto* query = app.add_subcommand("query", "Print derived tables as CSV or JSON Lines");
  query->require_subcommand(1);
  add_table(*query, "samples", "Timeseries samples (one row per sample)", exit_code);
  add_table(*query, "summaries", "Summaries (sleep, activity, workouts, …)", exit_code);
  add_table(*query, "streams", "Workout stream points", exit_code);
  add_table(*query, "connections", "Provider connections", exit_code);
  add_table(*query, "orders", "Lab test orders", exit_code);
}

}  // namespace hh::cli
