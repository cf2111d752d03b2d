// healthhook capture: exports inbox deliveries as a capture file (replay/capture_file.h),
// for `healthhook replay`. Webhook deliveries only, in seq order, filtered by received_at
// (--since inclusive, --until exclusive) and event type (a glob: * ? [...], [!...] or
// [^...] for none of a set).
//
// Reads through a reader of its own, so it runs beside `serve` on the same store.
// Streams: memory stays flat whatever the size of the inbox. Progress on a terminal.
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/timestamp.h"
#include "replay/capture_export.h"
#include "store/database_location.h"
#include "store/read_rows.h"

namespace hh::cli {
namespace {

struct CaptureFlags {
  SettingsFlags settings;
  std::optional<std::string> since;
  std::optional<std::string> until;
  std::optional<std::string> event_type;
  std::string output = "-";
};

// Parses a --since/--until value; false (reported) when it is not a time.
bool parse_bound(const std::optional<std::string>& text, std::string_view flag, std::optional<int64_t>& out) {
  if (!text) return true;
  out = parse_time_bound_ms(*text);
  if (!out) {
    report_error("capture", std::string(flag) + ": expected RFC 3339, a date or Unix seconds, got \"" + *text + "\"");
    return false;
  }
  return true;
}

int run_capture(const CaptureFlags& flags) {
  auto settings = load_settings_or_report(flags.settings, "capture");
  if (!settings) return kExitBadConfig;
  store::DeliveryFilter filter;
  if (!parse_bound(flags.since, "--since", filter.since_ms) || !parse_bound(flags.until, "--until", filter.until_ms)) {
    return kExitBadConfig;
  }
  if (!window_ok("capture", filter.since_ms, filter.until_ms, flags.since, flags.until) ||
      !event_type_ok("capture", flags.event_type)) {
    return kExitBadConfig;
  }
  filter.event_type_glob = event_type_glob(flags.event_type);
  int exit_code = kExitOk;
  auto reader = open_read_store_or_report(*settings, "capture", exit_code);
  if (!reader) return exit_code;
  auto out = replay::OutputFile::open(flags.output, store::files_of(settings->database));
  if (!out) {
    report_error("capture", "--output: " + out.error());
    return kExitBadConfig;
  }
  Progress progress("capture");
  bool bad_rows = false;
  auto summary = replay::export_capture(*reader, filter, *out, &progress, [&](int64_t seq, std::string_view reason) {
    bad_rows = true;
    report_error("capture", "seq " + std::to_string(seq) + ": " + std::string(reason) + " (skipped)");
  });
  progress.finish();
  if (!summary) {
    report_error("capture", summary.error());
    return kExitFailure;
  }
  if (auto closed = out->close(); !closed) {
    report_error("capture", closed.error());
    return kExitFailure;
  }
  log::info("capture_done")
      .num("deliveries", static_cast<int64_t>(summary->exported))
      .num("skipped", static_cast<int64_t>(summary->skipped))
      .num("bodies_removed", static_cast<int64_t>(summary->bodies_removed))
      .str("output", out->name());
  return bad_rows ? kExitFailure : kExitOk;
}

}  // namespace

void add_capture_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<CaptureFlags>();
  auto* command = app.add_subcommand("capture", "Export inbox deliveries as a capture file (JSON Lines) for replay");
  add_settings_flags(*command, flags->settings, /*with_listen=*/false);
  command->add_option("--since", flags->since, "Deliveries received at or after T (RFC 3339, a date, or Unix seconds)");
  command->add_option("--until", flags->until, "Deliveries received before T");
  command->add_option("--event-type", flags->event_type, kEventTypeGlobHelp)
      ->type_name("GLOB");
  command->add_option("-o,--output", flags->output, "Capture file to write (default: standard output)")
      ->type_name("FILE");
  command->callback([flags, &exit_code] { exit_code = run_capture(*flags); });
}

}  // namespace hh::cli
