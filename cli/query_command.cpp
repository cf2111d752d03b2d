// healthhook query <table>: the derived tables and the inbox as CSV or JSON Lines (field
// names and formats: store/row_format.h), filtered.
//
//   samples, summaries [--with identity], streams       timeseries, summaries, stream points
//   connections, devices, users, providers              who the users are and what they use
//   orders, appointments, results, parsing-jobs         lab testing
//   backfills                                           backfill windows and their fetch jobs
//   deliveries [--status S]                             inbox rows with their outcome and error
//
// Reads through a reader of its own inside one read snapshot (a consistent state beside
// a running `serve`), one row at a time with buffered output: memory stays flat for
// millions of rows. Rows come in key order (samples: user, resource, provider, source
// type, then time; summaries: resource, id; streams: workout, index; deliveries: seq;
// the others: their primary key). Refused, every table, while a rebuild is unfinished
// (store/unfinished_rebuild.h).
#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/timestamp.h"
#include "replay/output_file.h"
#include "store/database_location.h"
#include "store/row_format.h"
#include "store/unfinished_rebuild.h"

namespace hh::cli {
namespace {

struct QueryFlags {
  SettingsFlags settings;
  std::string format = "jsonl";
  std::string output = "-";
  std::optional<std::string> user, resource, provider, source_type, workout, since, until, status, order, event_type;
  std::vector<std::string> with;  // "identity"
};

// Writes every row of `query` (already started) to `out`; `prototype` carries the output
// options (with_identity) into every row.
template <typename Row, typename Query>
Result<uint64_t> write_rows(Query& query, store::OutputFormat format, replay::OutputFile& out,
                            const Row& prototype = Row{}) {
  store::append_header<Row>(out.buffer(), format, prototype);
  Row row = prototype;
  uint64_t count = 0;
  for (;;) {
    auto has_row = query.next(row);
    if (!has_row) return fail(has_row);
    if (!*has_row) break;
    store::append_record(out.buffer(), format, row);
    if (auto flushed = out.flush_if_full(); !flushed) return fail(flushed);
    ++count;
  }
  return count;
}

// A table with one row per key (store::RecordQuery).
template <typename Row>
Result<uint64_t> write_records(store::RecordQuery<Row>& query, const store::RecordFilter& filter,
                               store::OutputFormat format, replay::OutputFile& out) {
  if (auto started = query.start(filter); !started) return fail(started);
  return write_rows<Row>(query, format, out);
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

// Writes the rows of `table` to `out`, all from one read snapshot.
Result<uint64_t> export_table(std::string_view table, const QueryFlags& flags, store::ReadStore& reader,
                              store::OutputFormat format, replay::OutputFile& out, std::optional<int64_t> since,
                              std::optional<int64_t> until) {
  store::ReadSnapshot snapshot(reader);
  if (!snapshot.begun()) return fail(snapshot.begun());
  // Tables a rebuild emptied and has not filled again would pass for whole ones, and
  // 'processed' for applied (store/unfinished_rebuild.h).
  auto unfinished = reader.unfinished_rebuild();
  if (!unfinished) return fail(unfinished);
  if (*unfinished) return fail(ErrorKind::unavailable, std::string(store::kRebuildUnfinishedOffline));
  const bool identity = !flags.with.empty();
  if (table == "samples") {
    store::SampleQuery& query = reader.samples();
    store::SampleFilter filter{flags.user, flags.resource, flags.provider, flags.source_type, since, until};
    if (auto started = query.start_by_series(filter); !started) return fail(started);
    store::StoredSample prototype;
    prototype.with_identity = identity;
    return write_rows(query, format, out, prototype);
  }
  if (table == "summaries") {
    store::SummaryQuery& query = reader.summaries();
    store::SummaryFilter filter{flags.resource, flags.user, flags.provider, flags.source_type, since, until};
    if (auto started = query.start_export(filter); !started) return fail(started);
    store::StoredSummary prototype;
    prototype.with_identity = identity;
    return write_rows(query, format, out, prototype);
  }
  if (table == "streams") {
    store::StreamQuery& query = reader.streams();
    if (auto started = query.start_export({flags.workout, flags.user, flags.provider, since, until}); !started) {
      return fail(started);
    }
    return write_rows<store::StoredStreamPoint>(query, format, out);
  }
  if (table == "deliveries") {
    store::DeliveryQuery& query = reader.deliveries();
    store::DeliveryFilter filter;
    filter.since_ms = since;
    filter.until_ms = until;
    filter.event_type_glob = flags.event_type;
    filter.status = flags.status;
    filter.webhooks_only = false;
    int64_t first_seq = 0, last_seq = 0;
    if (auto started = query.start_export(filter, first_seq, last_seq); !started) return fail(started);
    return write_rows<store::StoredDelivery>(query, format, out);
  }
  const store::RecordFilter filter{flags.user, flags.provider, flags.resource, flags.status, flags.order};
  if (table == "connections") return write_records(reader.connections(), filter, format, out);
  if (table == "devices") return write_records(reader.devices(), filter, format, out);
  if (table == "orders") return write_records(reader.lab_orders(), filter, format, out);
  if (table == "appointments") return write_records(reader.lab_appointments(), filter, format, out);
  if (table == "results") return write_records(reader.lab_results(), filter, format, out);
  if (table == "parsing-jobs") return write_records(reader.parsing_jobs(), filter, format, out);
  if (table == "backfills") return write_records(reader.backfills(), filter, format, out);
  if (table == "users") return write_records(reader.users(), filter, format, out);
  return write_records(reader.providers(), filter, format, out);
}

int run_query(std::string_view table, const QueryFlags& flags) {
  auto settings = load_settings_or_report(flags.settings, "query");
  if (!settings) return kExitBadConfig;
  bool ok = true;
  const auto since = time_flag(flags.since, "--since", ok);
  const auto until = time_flag(flags.until, "--until", ok);
  if (!ok) return kExitBadConfig;
  if (!window_ok("query", since, until, flags.since, flags.until) || !event_type_ok("query", flags.event_type)) {
    return kExitBadConfig;
  }
  const auto format = flags.format == "csv" ? store::OutputFormat::csv : store::OutputFormat::jsonl;
  int exit_code = kExitOk;
  auto reader = open_read_store_or_report(*settings, "query", exit_code);
  if (!reader) return exit_code;
  auto out = replay::OutputFile::open(flags.output, store::files_of(settings->database));
  if (!out) {
    report_error("query", "--output: " + out.error());
    return kExitBadConfig;
  }
  auto written = export_table(table, flags, *reader, format, *out, since, until);
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

// Which filters each table takes.
struct TableFlags {
  bool user = true, resource = false, provider = false, source_type = false, time = false, workout = false,
       status = false, order = false, with_identity = false;
  std::vector<std::string> statuses;  // --status values (empty: free text)
  std::string time_on;                // what --since/--until apply to
};

TableFlags flags_of(std::string_view table) {
  TableFlags f;
  if (table == "samples" || table == "summaries") {
    f.resource = f.provider = f.source_type = f.time = f.with_identity = true;
    f.time_on = table == "samples" ? "the sample's timestamp" : "the start of the summary's period";
  } else if (table == "streams") {
    f.provider = f.time = f.workout = true;
    f.time_on = "the point's time";
  } else if (table == "connections" || table == "devices") {
    f.provider = true;
  } else if (table == "backfills") {
    f.provider = f.resource = true;
  } else if (table == "orders" || table == "appointments" || table == "results") {
    f.status = true;
    f.order = table != "orders";
  } else if (table == "parsing-jobs") {
    f.user = false;  // lab_report.parsing_job.* names no user
    f.status = true;
  } else if (table == "providers") {
    f.user = false;
    f.provider = true;
  } else if (table == "deliveries") {
    f.user = false;
    f.time = f.status = true;
    f.statuses = {"pending", "processed", "applied", "invalid", "ignored", "unknown"};
    f.time_on = "received_at";
  }
  return f;
}

void add_table(CLI::App& query, std::string_view table, std::string_view description, int& exit_code) {
  auto flags = std::make_shared<QueryFlags>();
  const TableFlags which = flags_of(table);
  auto* command = query.add_subcommand(std::string(table), std::string(description));
  add_settings_flags(*command, flags->settings, /*with_listen=*/false);
  command->add_option("--format", flags->format, "csv (RFC 4180) or jsonl (JSON Lines, the default)")
      ->check(CLI::IsMember({"csv", "jsonl"}));
  command->add_option("-o,--output", flags->output, "File to write (default: standard output)")->type_name("FILE");
  if (which.user) command->add_option("--user", flags->user, "Only this user_id");
  if (which.resource) command->add_option("--resource", flags->resource, "Only this resource (heartrate, sleep, …)");
  if (which.source_type) {
    command->add_option("--source-type", flags->source_type, "Only this source type (ring, watch, …)");
  }
  if (which.provider) command->add_option("--provider", flags->provider, "Only this provider (oura, garmin, …)");
  if (which.workout) command->add_option("--workout", flags->workout, "Only this workout_id");
  if (which.order) command->add_option("--order", flags->order, "Only this lab order id");
  if (which.status) {
    auto* status = command->add_option("--status", flags->status,
                                       table == "deliveries"
                                           ? "Only this processing status (applied = processed)"
                                           : "Only this status, as the service sent it");
    if (!which.statuses.empty()) status->check(CLI::IsMember(which.statuses));
  }
  if (table == "deliveries") {
    command->add_option("--event-type", flags->event_type, "Only event types matching GLOB, e.g. 'daily.data.*'")
        ->type_name("GLOB");
  }
  if (which.time) {
    command->add_option("--since", flags->since,
                        "At or after T, on " + which.time_on + " (RFC 3339, a date, or Unix seconds)");
    command->add_option("--until", flags->until, "Before T");
  }
  if (which.with_identity) {
    command->add_option("--with", flags->with, "Add columns: identity (client_user_id, provider_name, …)")
        ->check(CLI::IsMember({"identity"}));
  }
  command->callback([table, flags, &exit_code] {
    if (flags->status == "applied") flags->status = "processed";
    exit_code = run_query(table, *flags);
  });
}

}  // namespace

void add_query_command(CLI::App& app, int& exit_code) {
  auto* query = app.add_subcommand("query", "Print tables as CSV or JSON Lines");
  query->require_subcommand(1);
  add_table(*query, "samples", "Timeseries samples (one row per sample)", exit_code);
  add_table(*query, "summaries", "Summaries (sleep, activity, workouts, …)", exit_code);
  add_table(*query, "streams", "Workout stream points", exit_code);
  add_table(*query, "connections", "Provider connections", exit_code);
  add_table(*query, "devices", "Devices (provider.device.*)", exit_code);
  add_table(*query, "users", "Users: client_user_id, team_id, first and last seen", exit_code);
  add_table(*query, "providers", "The service's providers: names, logos, supported resources", exit_code);
  add_table(*query, "orders", "Lab test orders", exit_code);
  add_table(*query, "appointments", "Lab appointments", exit_code);
  add_table(*query, "results", "Critical lab results (labtest.result.critical)", exit_code);
  add_table(*query, "parsing-jobs", "Lab report parsing jobs", exit_code);
  add_table(*query, "backfills", "Backfill windows and the state of their fetch jobs", exit_code);
  add_table(*query, "deliveries", "Inbox rows with their processing status and error", exit_code);
}

}  // namespace hh::cli
