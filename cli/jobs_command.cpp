// healthhook jobs: the follow-up queue from the command line (spec §5, §6).
//
//   healthhook jobs [--state queued|running|done|dead] [--format table|jsonl]
//   healthhook jobs show ID [--format table|jsonl]
//   healthhook jobs requeue ID | --all-dead
//
// Safe while `serve` runs: reads see the last commit (WAL); re-queueing is one short
// BEGIN IMMEDIATE transaction that waits for the writer (busy_timeout) instead of failing.
// Exit 0 on success, 1 when the job does not exist / cannot be re-queued or the database
// fails, 2 for bad usage or configuration.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/json_scan.h"
#include "common/json_writer.h"
#include "common/timestamp.h"
#include "store/database_location.h"
#include "store/open_store.h"

namespace hh::cli {
namespace {

struct JobsFlags {
  SettingsFlags settings;
  std::optional<std::string> state;
  std::string format = "table";
  int64_t show_id = 0;
  std::optional<int64_t> requeue_id;
  bool all_dead = false;
};

std::string json_line(const store::JobRow& job) {
  std::string out;
  json::ObjectWriter line(out);
  line.integer("job_id", job.job_id).string("kind", job.kind).string("job_key", job.job_key).string("state", job.state);
  line.integer("attempts", job.attempts).string("next_attempt_at", format_rfc3339_ms(job.next_attempt_at));
  line.optional_string("last_error", job.last_error ? std::optional<std::string_view>(*job.last_error) : std::nullopt);
  line.integer("trigger_seq", job.trigger_seq);
  if (json::check_json(job.payload)) {
    line.raw("payload", job.payload);
  } else {
    line.string("payload", job.payload);  // kept visible even when it is not JSON
  }
  line.string("created_at", format_rfc3339_ms(job.created_at)).string("updated_at", format_rfc3339_ms(job.updated_at));
  line.close();
  return out;
}

void print_table(const std::vector<store::JobRow>& jobs) {
  std::cout << table_cell("ID", 7) << " " << table_cell("KIND", 15) << " " << table_cell("STATE", 8) << " " << table_cell("ATTEMPTS", 8)
            << " " << table_cell("NEXT ATTEMPT (UTC)", 24) << " " << table_cell("KEY", 40) << " LAST ERROR\n";
  for (const auto& job : jobs) {
    std::cout << table_cell(std::to_string(job.job_id), 7) << " " << table_cell(job.kind, 15) << " " << table_cell(job.state, 8) << " "
              << table_cell(std::to_string(job.attempts), 8) << " " << table_cell(format_rfc3339_ms(job.next_attempt_at), 24)
              << " " << table_cell(job.job_key, 40) << " " << (job.last_error ? table_cell(*job.last_error, 80) : "") << "\n";
  }
}

void print_details(const store::JobRow& job) {
  std::cout << "job_id:          " << job.job_id << "\n"
            << "kind:            " << job.kind << "\n"
            << "job_key:         " << job.job_key << "\n"
            << "state:           " << job.state << "\n"
            << "attempts:        " << job.attempts << "\n"
            << "next_attempt_at: " << format_rfc3339_ms(job.next_attempt_at) << "\n"
            << "last_error:      " << job.last_error.value_or("") << "\n"
            << "trigger_seq:     " << job.trigger_seq << "\n"
            << "payload:         " << job.payload << "\n"
            << "created_at:      " << format_rfc3339_ms(job.created_at) << "\n"
            << "updated_at:      " << format_rfc3339_ms(job.updated_at) << "\n";
}

int run_jobs(const JobsFlags& flags, bool show, bool requeue) {
  auto settings = load_settings_or_report(flags.settings, "jobs");
  if (!settings) return kExitBadConfig;
  auto database = existing_database_or_report(*settings, "jobs");
  if (!database) return kExitBadConfig;
  auto opened = store::open_job_admin(*database);
  if (!opened) {
    report_error("jobs", opened.error());
    return kExitFailure;
  }
  store::JobAdmin& admin = **opened;
  if (requeue) {
    if (flags.all_dead == flags.requeue_id.has_value()) {
      report_error("jobs requeue", "give a job id or --all-dead");
      return kExitBadConfig;
    }
    if (flags.all_dead) {
      auto count = admin.requeue_dead(unix_now_ms());
      if (!count) {
        report_error("jobs requeue", count.error());
        return kExitFailure;
      }
      std::cout << "requeued " << *count << " dead job" << (*count == 1 ? "" : "s") << "\n";
      return kExitOk;
    }
    auto status = admin.requeue(*flags.requeue_id, unix_now_ms());
    if (!status) {
      report_error("jobs requeue", status.error());
      return kExitFailure;
    }
    switch (*status) {
      case store::RequeueStatus::requeued:
        std::cout << "requeued job " << *flags.requeue_id << "\n";
        return kExitOk;
      case store::RequeueStatus::not_found:
        report_error("jobs requeue", "no job " + std::to_string(*flags.requeue_id));
        return kExitFailure;
      case store::RequeueStatus::running:
        report_error("jobs requeue", "job " + std::to_string(*flags.requeue_id) + " is running; not re-queued");
        return kExitFailure;
    }
  }
  if (show) {
    auto job = admin.find(flags.show_id);
    if (!job) {
      report_error("jobs show", job.error());
      return kExitFailure;
    }
    if (!*job) {
      report_error("jobs show", "no job " + std::to_string(flags.show_id));
      return kExitFailure;
    }
    if (flags.format == "jsonl") {
      std::cout << json_line(**job) << "\n";
    } else {
      print_details(**job);
    }
    return kExitOk;
  }
  auto jobs = admin.list(flags.state);
  if (!jobs) {
    report_error("jobs", jobs.error());
    return kExitFailure;
  }
  if (flags.format == "jsonl") {
    for (const auto& job : *jobs) std::cout << json_line(job) << "\n";
  } else {
    print_table(*jobs);
  }
  return kExitOk;
}

}  // namespace

void add_jobs_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<JobsFlags>();
  auto* command = app.add_subcommand("jobs", "List, show and re-queue follow-up jobs");
  add_settings_flags(*command, flags->settings, false);
  command->add_option("--state", flags->state, "Only jobs in this state")
      ->check(CLI::IsMember({"queued", "running", "done", "dead"}));
  command->add_option("--format", flags->format, "table (default) or jsonl")->check(CLI::IsMember({"table", "jsonl"}));
  command->require_subcommand(0, 1);
  command->fallthrough();  // settings flags may follow `show ID` / `requeue ID`

  auto* show = command->add_subcommand("show", "Show one job with its payload and last error");
  // Checked as text: CLI11 would clamp an id past int64 to the largest one.
  const CLI::Validator job_id(
      [](std::string& text) -> std::string {
        int64_t id = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
        if (ec != std::errc() || end != text.data() + text.size() || id < 1) return "a job id is a whole number from 1";
        return {};
      },
      "JOB_ID");
  show->add_option("id", flags->show_id, "Job id")->required()->check(job_id);

  auto* requeue = command->add_subcommand("requeue", "Queue a job (or every dead job) again, due now");
  requeue->add_option("id", flags->requeue_id, "Job id")->check(job_id);
  requeue->add_flag("--all-dead", flags->all_dead, "Every dead job");

  command->callback([flags, show, requeue, &exit_code] {
    exit_code = run_jobs(*flags, show->parsed(), requeue->parsed());
  });
}

}  // namespace hh::cli
