// healthhook lab-report upload | show: the service's lab report parsing API (beta, enabled
// on request; fetcher/calls/lab_reports.h).
//
//   healthhook lab-report upload FILE [--needs-review] [--user USER_ID] [--team TEAM_ID]
//   healthhook lab-report show JOB_ID [--team TEAM_ID]
//
// upload checks the file first (PDF, JPEG or PNG by its first bytes, at most 10 MB) and
// prints {"job_id","status"}; the job's progress then arrives as
// lab_report.parsing_job.* webhooks, and a completed job without results is fetched by
// `serve` (a parsing_job follow-up). show prints the job as the service answers it (an
// answer about another job, or one larger than the parser takes in one document, is
// refused, as serve refuses it: common/parsing_job_answer.h, events/parse_limits.h).
// With --user the user's team decides the base URL and key, else --team or [service].
// Exit 0 done, 1 the call failed, 2 bad input or configuration (nothing is sent then).
#include "cli/command_support.h"
#include "cli/commands.h"
#include "fetcher/recovery_input.h"
#include "cli/service_access.h"
#include "common/json_writer.h"
#include "events/parse_limits.h"
#include "fetcher/calls/lab_reports.h"

namespace hh::cli {
namespace {

struct LabReportUploadFlags {
  SettingsFlags settings;
  std::string file;
  bool needs_review = false;
  std::optional<std::string> user_id;
  std::optional<std::string> team;
};

struct LabReportShowFlags {
  SettingsFlags settings;
  std::string job_id;
  std::optional<std::string> team;
};

int run_lab_report_upload(const LabReportUploadFlags& flags) {
  constexpr std::string_view kCommand = "lab-report upload";
  if (flags.user_id) {
    if (auto checked = fetcher::check_user_id(*flags.user_id); !checked) {
      return report_call_failure(kCommand, "--user: " + checked.error(), ErrorKind::data);
    }
  }
  auto file = fetcher::read_lab_report_file(flags.file);
  if (!file) return report_call_failure(kCommand, file.error(), ErrorKind::data);
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  const std::string team = flags.user_id ? team_of_user(*settings, *flags.user_id, flags.team) : flags.team.value_or("");
  auto access = service_access_or_report(*settings, kCommand, team);
  if (!access) return kExitBadConfig;
  std::optional<std::string_view> user_id;
  if (flags.user_id) user_id = *flags.user_id;
  auto job = fetcher::upload_lab_report(*access, *file, flags.needs_review, user_id);
  if (!job) return report_call_failure(kCommand, job.error(), job.error_kind());
  std::string out;
  json::ObjectWriter object(out);
  object.string("job_id", job->id);
  if (!job->status.empty()) object.string("status", job->status);
  object.string("file", file->name).string("content_type", file->content_type);
  object.integer("bytes", static_cast<int64_t>(file->bytes.size())).boolean("needs_human_review", flags.needs_review);
  object.close();
  print_json_line(out);
  return kExitOk;
}

int run_lab_report_show(const LabReportShowFlags& flags) {
  constexpr std::string_view kCommand = "lab-report show";
  if (flags.job_id.empty()) return report_call_failure(kCommand, "JOB_ID is empty", ErrorKind::data);
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  auto access = service_access_or_report(*settings, kCommand, flags.team.value_or(""));
  if (!access) return kExitBadConfig;
  auto job = fetcher::get_parsing_job(*access, flags.job_id, events::ParseLimits{}.max_document_bytes);
  if (!job) return report_call_failure(kCommand, job.error(), job.error_kind());
  print_json_line(job->body);
  return kExitOk;
}

}  // namespace

void add_lab_report_command(CLI::App& app, int& exit_code) {
  auto* lab_report = app.add_subcommand("lab-report", "Upload a lab report for parsing, or show a parsing job");
  lab_report->require_subcommand(1);

  auto upload = std::make_shared<LabReportUploadFlags>();
  auto* upload_command = lab_report->add_subcommand(
      "upload", "Upload a PDF, JPEG or PNG lab report (at most 10 MB) and create a parsing job");
  add_settings_flags(*upload_command, upload->settings, false);
  upload_command->add_option("file", upload->file, "The report file")->required();
  upload_command->add_flag("--needs-review", upload->needs_review, "Flag the job for human review");
  upload_command->add_option("--user", upload->user_id, "The service's user id the report belongs to (a UUID)");
  upload_command->add_option("--team", upload->team, "A [[service.teams]] team id (default: the user's team, else [service])");
  upload_command->callback([upload, &exit_code] { exit_code = run_lab_report_upload(*upload); });

  auto show = std::make_shared<LabReportShowFlags>();
  auto* show_command = lab_report->add_subcommand("show", "Print a parsing job's status and results (GET /lab_report/v1/parser/job/{id})");
  add_settings_flags(*show_command, show->settings, false);
  show_command->add_option("job_id", show->job_id, "The parsing job's id")->required();
  show_command->add_option("--team", show->team, "A [[service.teams]] team id (default [service])");
  show_command->callback([show, &exit_code] { exit_code = run_lab_report_show(*show); });
}

}  // namespace hh::cli
