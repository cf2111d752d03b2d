// healthhook replay FILE…: capture files (replay/capture_file.h) into a database, or to a
// running receiver.
//
//   replay FILE… [--database DB] [--verify-signatures --secret-file F…]
//       offline: inbox + processor on the database, no server (replay/offline_replay.h)
//   replay FILE… --to URL [--secret-file F | --config C] [--concurrency N] [--ca-file F]
//          [--allow-plain-http] [--timeout SECONDS]
//       re-sends each delivery signed with a fresh timestamp (replay/resend.h); without
//       --secret-file, with the configuration's signing secret (the first of several,
//       with a notice: during a rotation the receiver accepts any of them). https://, or
//       plain http:// to a loopback host; plain http:// to any other host only with
//       --allow-plain-http (the bodies are health data).
//
// FILE "-" is standard input; a file that starts compressed or binary is refused before
// anything is stored (capture_file.h). A malformed line is reported on stderr as "file:line:
// reason" and the others go on. With --to, a line the receiver keeps answering "not now"
// (429, 5xx) or never answers stops the run there, and so do 20 refused signatures in a
// row from the start (resend.h). A line marked "body_removed" (its body was removed by
// retention before the capture) is counted in `bodies_removed` and skipped: there is
// nothing to replay, and it is not a failure. Prints a JSON summary on stdout. Exit status:
// 0 when every line was stored (or was a duplicate, or had no body), 1 when any line failed
// or the store failed, 2 for usage and configuration errors.
#include <sys/stat.h>

#include <iostream>
#include <optional>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/http_url.h"
#include "common/json_writer.h"
#include "common/progress.h"
#include "config/secrets.h"
#include "replay/offline_replay.h"
#include "replay/resend.h"
#include "store/database_location.h"

namespace hh::cli {
namespace {

constexpr int64_t kDefaultReplayBatch = 1000;
constexpr int64_t kMaxReplayBatch = 100000;
constexpr int64_t kMaxTimeoutSeconds = 86400;
// A capture line's members besides the body and headers (id, timestamp, names), with room.
constexpr uint64_t kCaptureEnvelopeBytes = 64 * 1024;

struct ReplayFlags {
  SettingsFlags settings;
  std::vector<std::string> files;
  std::optional<std::string> to;
  std::vector<std::string> secret_files;
  bool verify_signatures = false;
  size_t concurrency = 1;  // the file's order: the receiver numbers deliveries as offline replay does
  std::optional<int64_t> timeout_seconds;  // with --to only; default replay::ResendOptions's
  std::optional<int64_t> batch;  // offline only; default kDefaultReplayBatch, checked against kMaxReplayBatch
  bool allow_plain_http = false;
  std::string ca_file;
};

void report_line(std::string_view file, uint64_t line, std::string_view reason) {
  if (file.empty()) {
    report_error("replay", reason);
  } else {
    // On a terminal, not glued to the progress line.
    Progress::write_line(std::string(file) + ":" + std::to_string(line) + ": " + std::string(reason) + "\n");
  }
}

// Opens every file first, so a missing one fails before anything is stored.
std::optional<std::vector<replay::CaptureReader>> open_files(const std::vector<std::string>& files, uint64_t& total_bytes) {
  std::vector<replay::CaptureReader> readers;
  total_bytes = 0;
  for (const auto& file : files) {
    auto reader = replay::CaptureReader::open(file);
    if (!reader) {
      report_error("replay", reader.error());
      return std::nullopt;
    }
    struct stat info {};
    if (file != "-" && ::stat(file.c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
      total_bytes += static_cast<uint64_t>(info.st_size);
    }
    readers.push_back(std::move(*reader));
  }
  return readers;
}

int run_offline(const ReplayFlags& flags, std::vector<replay::CaptureReader>& readers, uint64_t total_bytes) {
  auto settings = load_settings_or_report(flags.settings, "replay");
  if (!settings) return kExitBadConfig;
  replay::OfflineOptions options;
  options.batch_deliveries = static_cast<size_t>(flags.batch.value_or(kDefaultReplayBatch));
  options.max_body_bytes = static_cast<uint64_t>(settings->max_body_bytes);
  // A line past what a delivery within the receiver's limits can take as a capture line
  // (every byte of its body and headers escaped as \u00XX, six bytes) is refused without
  // being read whole: a 200 MiB line took 600 MiB of memory to be refused as too large.
  const uint64_t max_line = 6 * static_cast<uint64_t>(settings->max_body_bytes + settings->max_header_bytes) +
                            kCaptureEnvelopeBytes;
  const std::string too_long = ", more than a delivery within max_body_bytes (" +
                               std::to_string(settings->max_body_bytes) + ") and max_header_bytes (" +
                               std::to_string(settings->max_header_bytes) +
                               ") can take: the receiver refuses it, so replay does too";
  for (auto& reader : readers) reader.limit_line_bytes(static_cast<size_t>(max_line), too_long);
  if (flags.verify_signatures) {
    std::vector<std::string> secrets;
    for (const auto& file : flags.secret_files) {
      auto secret = config::read_signing_secret_file(file, ".");
      if (!secret) {
        report_error("replay", "--secret-file: " + secret.error());
        return kExitBadConfig;
      }
      secrets.push_back(std::move(*secret));
    }
    auto verifier = signature::Verifier::create(secrets, settings->timestamp_tolerance_s);
    if (!verifier) {
      report_error("replay", "--secret-file: " + verifier.error());
      return kExitBadConfig;
    }
    options.verifier = std::move(*verifier);
  }

  // What an offline replay stores is never forwarded: refused while a sender makes entries
  // from the inbox, which would make these deliveries' too (store_options.h).
  auto store = open_store_or_report(*settings, "replay", {.refuse_while_sender_makes_entries = true});
  if (!store) return kExitFailure;
  auto replayer = replay::OfflineReplay::create(*store, std::move(options));
  if (!replayer) {
    report_error("replay", replayer.error() + " (to add deliveries to a running receiver, use --to)");
    return kExitFailure;
  }
  Progress progress("replay bytes", total_bytes);
  // The summary on stdout, also when a failure (a full disk) stopped the replay: what was
  // stored by then is stored, and a second run adds the rest.
  const auto print_summary = [&](bool stopped) {
    const auto& s = (*replayer)->summary();
    std::string out;
    json::ObjectWriter summary(out);
    summary.string("database", store::loggable_location(settings->database))
        .integer("lines", static_cast<int64_t>(s.lines))
        .integer("stored", static_cast<int64_t>(s.stored))
        .integer("duplicates", static_cast<int64_t>(s.duplicates))
        .integer("failed", static_cast<int64_t>(s.failed))
        .integer("bodies_removed", static_cast<int64_t>(s.bodies_removed))
        .integer("processed", static_cast<int64_t>(s.processed))
        .integer("invalid", static_cast<int64_t>(s.invalid))
        .integer("ignored", static_cast<int64_t>(s.ignored))
        .integer("unknown", static_cast<int64_t>(s.unknown))
        .integer("samples", static_cast<int64_t>(s.samples))
        .number("seconds", s.seconds)
        .number("deliveries_per_second", s.seconds > 0 ? static_cast<double>(s.lines) / s.seconds : 0)
        .number("samples_per_second", s.seconds > 0 ? static_cast<double>(s.samples) / s.seconds : 0);
    if (stopped) summary.boolean("stopped", true);
    summary.close();
    std::cout << out << "\n";
    return s.failed > 0 || stopped ? kExitFailure : kExitOk;
  };
  uint64_t base = 0;
  for (auto& reader : readers) {
    if (auto added = (*replayer)->add(reader, report_line, &progress, base); !added) {
      progress.finish();
      report_error("replay", added.error());
      return print_summary(true);
    }
    base += reader.bytes_consumed();
  }
  if (auto finished = (*replayer)->finish(); !finished) {
    progress.finish();
    report_error("replay", finished.error());
    return print_summary(true);
  }
  progress.finish();
  return print_summary(false);
}

// The secret --to signs with: --secret-file, else the configuration's signing secret.
std::optional<std::string> resend_secret(const ReplayFlags& flags) {
  if (!flags.secret_files.empty()) {
    auto secret = config::read_signing_secret_file(flags.secret_files.front(), ".");
    if (!secret) {
      report_error("replay", "--secret-file: " + secret.error());
      return std::nullopt;
    }
    return std::move(*secret);
  }
  auto settings = load_settings_or_report(flags.settings, "replay");
  if (!settings) return std::nullopt;
  const auto& files = settings->signing_secret_files;
  if (files.empty()) {
    report_error("replay", "signing_secret_files: none configured; give --secret-file");
    return std::nullopt;
  }
  if (files.size() > 1) {
    std::cerr << "healthhook replay: signing with the first of " << files.size()
              << " configured signing secrets (" << files.front() << "); --secret-file chooses another\n";
  }
  auto secret = config::read_signing_secret_file(files.front(), settings->base_dir);
  if (!secret) {
    report_error("replay", "signing_secret_files: " + secret.error() + " (or give --secret-file)");
    return std::nullopt;
  }
  return std::move(*secret);
}

int run_resend(const ReplayFlags& flags, std::vector<replay::CaptureReader>& readers, uint64_t total_bytes) {
  auto secret = resend_secret(flags);
  if (!secret) return kExitBadConfig;
  replay::ResendOptions options;
  options.url = *flags.to;
  options.secret = std::move(*secret);
  options.concurrency = flags.concurrency;
  options.allow_plain_http = flags.allow_plain_http;
  options.ca_file = flags.ca_file;
  if (flags.timeout_seconds) options.answer_timeout = std::chrono::seconds(*flags.timeout_seconds);
  Progress progress("replay bytes", total_bytes);
  auto summary = replay::resend(readers, options, report_line, &progress);
  progress.finish();
  if (!summary) {
    report_error("replay", summary.error());
    return kExitBadConfig;  // the URL or the secret: nothing was sent
  }
  std::string statuses = "{";
  for (const auto& [status, count] : summary->statuses) {
    if (statuses.size() > 1) statuses.push_back(',');
    statuses.append("\"").append(std::to_string(status)).append("\":").append(std::to_string(count));
  }
  statuses.push_back('}');
  std::string out;
  json::ObjectWriter(out)
      .string("to", loggable_url(options.url))
      .integer("lines", static_cast<int64_t>(summary->lines))
      .integer("answered", static_cast<int64_t>(summary->answered))
      .raw("statuses", statuses)
      .integer("stored", static_cast<int64_t>(summary->stored))
      .integer("duplicates", static_cast<int64_t>(summary->duplicates))
      .integer("failed", static_cast<int64_t>(summary->failed))
      .integer("bodies_removed", static_cast<int64_t>(summary->bodies_removed))
      .boolean("stopped", summary->stopped)
      .number("seconds", summary->seconds)
      .close();
  std::cout << out << "\n";
  return summary->failed > 0 || summary->stopped ? kExitFailure : kExitOk;
}

int run_replay(const ReplayFlags& flags) {
  if (flags.to) {
    if (flags.secret_files.size() > 1) {
      report_error("replay", "--to signs with one secret: give at most one --secret-file");
      return kExitBadConfig;
    }
    if (flags.verify_signatures) {
      report_error("replay", "--verify-signatures is for offline replay; with --to the receiver verifies");
      return kExitBadConfig;
    }
    if (flags.batch) {
      report_error("replay", "--batch is for offline replay (deliveries per transaction); with --to use --concurrency");
      return kExitBadConfig;
    }
    // Before anything is read: the URL alone decides (a refusal sends nothing).
    if (auto target = replay::parse_target_url(*flags.to, flags.allow_plain_http); !target) {
      report_error("replay", target.error());
      return kExitBadConfig;
    }
    if (flags.concurrency == 0 || flags.concurrency > 256) {
      report_error("replay", "--concurrency: must be between 1 and 256");
      return kExitBadConfig;
    }
    if (flags.timeout_seconds && (*flags.timeout_seconds < 1 || *flags.timeout_seconds > kMaxTimeoutSeconds)) {
      report_error("replay", "--timeout: must be between 1 and " + std::to_string(kMaxTimeoutSeconds) + " seconds");
      return kExitBadConfig;
    }
  } else if (flags.allow_plain_http || !flags.ca_file.empty() || flags.concurrency != 1 || flags.timeout_seconds) {
    // Offline, deliveries are stored in the files' order by one writer: nothing to set.
    report_error("replay", std::string(flags.allow_plain_http    ? "--allow-plain-http"
                                       : !flags.ca_file.empty()  ? "--ca-file"
                                       : flags.timeout_seconds ? "--timeout"
                                                                 : "--concurrency") +
                               " is used with --to");
    return kExitBadConfig;
  } else if (flags.verify_signatures && flags.secret_files.empty()) {
    report_error("replay", "--verify-signatures needs --secret-file");
    return kExitBadConfig;
  } else if (!flags.verify_signatures && !flags.secret_files.empty()) {
    report_error("replay", "--secret-file is used with --to or --verify-signatures");
    return kExitBadConfig;
  }
  if (flags.batch && (*flags.batch < 1 || *flags.batch > kMaxReplayBatch)) {
    // A batch is also bounded by its bodies' bytes; a count past this only reserves memory.
    report_error("replay", "--batch: " + std::to_string(*flags.batch) + " is not between 1 and " +
                               std::to_string(kMaxReplayBatch));
    return kExitBadConfig;
  }
  uint64_t total_bytes = 0;
  auto readers = open_files(flags.files, total_bytes);
  if (!readers) return kExitBadConfig;
  return flags.to ? run_resend(flags, *readers, total_bytes) : run_offline(flags, *readers, total_bytes);
}

}  // namespace

void add_replay_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ReplayFlags>();
  auto* command = app.add_subcommand(
      "replay", "Replay capture files into the database (offline), or re-send them signed to a receiver (--to)");
  add_settings_flags(*command, flags->settings, /*with_listen=*/false);
  command->add_option("FILE", flags->files, "Capture files (JSON Lines); - for standard input")->required();
  command->add_option("--to", flags->to,
                      "Re-send to this receiver URL instead: https://…, or http:// to a loopback host, e.g. "
                      "http://127.0.0.1:8080/webhooks")
      ->type_name("URL");
  command->add_option("--secret-file", flags->secret_files,
                      "Signing secret file (whsec_…): signs with --to; checks with --verify-signatures (repeatable)")
      ->type_name("FILE")
      ->allow_extra_args(false);  // one file per --secret-file: the next word is a capture file
  // With --to and no --secret-file, the configuration's signing_secret_files (see resend_secret).
  command->add_flag("--verify-signatures", flags->verify_signatures,
                    "Offline: store only lines whose captured signature matches a --secret-file (age not checked)");
  command->add_option("--concurrency", flags->concurrency, "With --to: deliveries sent at once, each on its connection (default 1: the file's order, so the receiver "
                      "numbers them (seq) as offline replay does; more is faster and keeps each user's order)");
  command->add_flag("--allow-plain-http", flags->allow_plain_http,
                    "With --to: allow http:// to a host that is not loopback (sends health data unencrypted)");
  command->add_option("--ca-file", flags->ca_file, "With an https:// --to: trust this CA (default: the system's)")
      ->type_name("FILE");
  command->add_option("--timeout", flags->timeout_seconds,
                      "With --to: seconds one attempt may take, from sending a delivery to its answer's last byte "
                      "(default 120; interim 1xx answers do not extend it)")
      ->type_name("SECONDS");
  command->add_option("--batch", flags->batch, "Offline: deliveries per transaction (default 1000, at most 100000)");
  command->callback([flags, &exit_code] { exit_code = run_replay(*flags); });
}

}  // namespace hh::cli
