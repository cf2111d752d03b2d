// healthhook connections export | import: moving provider connections in bulk (service
// interface: POST /v2/link/bulk_export, POST /v2/link/bulk_import; a migration feature the
// service enables on request).
//
//   healthhook connections export --provider P [--users FILE] --output FILE [--team TEAM_ID]
//   healthhook connections import --provider P FILE [--wait] [--dry-run] [--batch N] [--team TEAM_ID]
//
// export pages through every connection of the provider (or of the users listed in FILE,
// one UUID a line) into a JSON Lines file of connection recipes (fetcher/calls/
// recipe_file.h), created 0600 since it holds OAuth tokens; prints a summary line.
// import checks the whole file first (--dry-run stops there), then sends it in batches of
// --batch recipes; each batch prints one JSON line (HTTP status, imported and failed user
// ids, "unaccounted" ones its answer names neither way, "not_in_batch" ids it names that
// the batch did not hold, "contradictory" ones it names more than once, or "queued" when
// the service answered 202 without lists), then a total line, whose "not_imported" lists
// the users of a batch that failed and of the batches not sent after it.
// --wait asks the service to finish each batch within 20 s (else it answers 202).
//
// The provider must be one of the interface's bulk providers. Tokens are never printed or
// logged: errors name a line and a member, never a value, and the service's reasons are
// shown with the batch's tokens redacted. Exit 0 done, 1 a call failed, a user id was
// not imported (failed, or named neither way) or an answer named ids not in its batch, 2
// bad input or configuration (nothing is sent then).

#include <algorithm>
#include <fstream>
#include <map>
#include <span>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/service_access.h"
#include "cli/service_input.h"
#include "common/file_text.h"
#include "common/json_writer.h"
#include "common/uuid_text.h"
#include "fetcher/calls/bulk_connections.h"
#include "fetcher/calls/recipe_file.h"
#include "fetcher/service_values.h"

namespace hh::cli {
namespace {

struct ConnectionsExportFlags {
  SettingsFlags settings;
  std::string provider;
  std::optional<std::string> users_file;
  std::string output;
  std::optional<std::string> team;
};

struct ConnectionsImportFlags {
  SettingsFlags settings;
  std::string provider;
  std::string file;
  bool wait = false;
  bool dry_run = false;
  int64_t batch = static_cast<int64_t>(fetcher::kImportBatchDefault);
  std::optional<std::string> team;
};

Result<void> check_bulk_provider(std::string_view provider) {
  if (!fetcher::is_bulk_provider(provider)) {
    return fail(ErrorKind::data, "--provider: " + fetcher::quoted_value(provider) +
                                     " is not one the interface lists for bulk operations (" +
                                     fetcher::bulk_providers_list() + ")");
  }
  return {};
}

// --users FILE: one user id (a UUID) a line; blank lines and lines starting with '#' skipped.
Result<std::vector<std::string>> read_user_ids(const std::string& path) {
  constexpr size_t kMaxLineBytes = 64 * 1024;  // a UUID, or a comment
  auto opened = open_text_file(path);
  if (!opened) return fail(opened, "--users");
  std::ifstream& in = *opened;
  std::vector<std::string> ids;
  std::string line;
  for (size_t number = 1;; ++number) {
    const LineRead read = getline_within(in, line, kMaxLineBytes);
    if (read == LineRead::end) break;
    if (read == LineRead::too_long) {
      return fail(ErrorKind::data, "--users: " + path + ":" + std::to_string(number) + ": longer than 64 KiB (one user id a line)");
    }
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    line.erase(0, start);
    if (!fetcher::is_uuid(line)) {
      // A long line is not quoted: a recipes file given here by mistake holds tokens.
      const std::string what = line.size() <= 64 ? fetcher::quoted_value(line)
                                                 : "a line of " + std::to_string(line.size()) + " bytes (not shown)";
      return fail(ErrorKind::data, "--users: " + path + ":" + std::to_string(number) + ": " + what + " is not a UUID");
    }
    ids.push_back(line);
  }
  if (ids.empty()) return fail(ErrorKind::data, "--users: " + path + ": no user ids");
  return ids;
}

std::string id_array(const std::vector<std::string>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out.push_back(',');
    json::append_string(out, ids[i]);
  }
  return out + "]";
}

// What one batch's answer says of its users, each id in one list.
struct BatchOutcome {
  std::vector<std::string> imported, failed;
  std::vector<std::string> unaccounted;    // users of the batch the answer names neither way
  std::vector<std::string> not_in_batch;   // ids the answer names that the batch did not hold
  std::vector<std::string> contradictory;  // users named more than once: imported and failed, or twice

  void add_to(BatchOutcome& total) const {
    for (auto [from, to] : {std::pair{&imported, &total.imported}, std::pair{&failed, &total.failed},
                            std::pair{&unaccounted, &total.unaccounted}, std::pair{&not_in_batch, &total.not_in_batch},
                            std::pair{&contradictory, &total.contradictory}}) {
      to->insert(to->end(), from->begin(), from->end());
    }
  }
};

// Sorts the answer's ids by what they say of `batch_users`. An id not sent in this batch says
// nothing of the batch's users: shown apart (not_in_batch). A user named more than once
// (user_ids_imported [U1,U2] with user_ids_failed [U2], or imported [U1,U1]) contradicts
// itself or hints at a fault: neither imported nor failed is known, so it is counted in
// neither but shown as contradictory.
BatchOutcome classify_answer(std::span<const std::string> batch_users, const fetcher::ImportAnswer& answer) {
  const auto user_named = [&](const std::string& id) -> const std::string* {
    for (const std::string& user : batch_users) {
      if (fetcher::same_uuid(id, user)) return &user;
    }
    return nullptr;
  };
  std::map<std::string, size_t> mentions;  // uuid_key(user) -> how often the answer names it
  BatchOutcome outcome;
  for (const auto* list : {&answer.imported, &answer.failed}) {
    for (const std::string& id : *list) {
      if (const std::string* user = user_named(id)) {
        ++mentions[uuid_key(*user)];
      } else {
        outcome.not_in_batch.push_back(id);
      }
    }
  }
  const auto mentions_of = [&](const std::string& user) {
    const auto at = mentions.find(uuid_key(user));
    return at == mentions.end() ? size_t{0} : at->second;
  };
  for (const std::string& user : batch_users) {
    const size_t count = mentions_of(user);
    if (count == 0) outcome.unaccounted.push_back(user);
    if (count > 1) outcome.contradictory.push_back(user);
  }
  for (auto [from, to] : {std::pair{&answer.imported, &outcome.imported}, std::pair{&answer.failed, &outcome.failed}}) {
    for (const std::string& id : *from) {
      if (const std::string* user = user_named(id); user && mentions_of(*user) == 1) to->push_back(id);
    }
  }
  return outcome;
}

std::string listed_ids(const std::vector<std::string>& ids) {
  std::string listed;
  for (const std::string& id : ids) listed.append(listed.empty() ? "" : ", ").append(fetcher::quoted_value(id));
  return listed;
}

int run_connections_export(const ConnectionsExportFlags& flags) {
  constexpr std::string_view kCommand = "connections export";
  if (auto checked = check_bulk_provider(flags.provider); !checked) return report_call_failure(kCommand, checked.error(), ErrorKind::data);
  std::optional<std::vector<std::string>> users;
  if (flags.users_file) {
    auto ids = read_user_ids(*flags.users_file);
    if (!ids) return report_call_failure(kCommand, ids.error(), ErrorKind::data);
    users = std::move(*ids);
  }
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  auto access = service_access_or_report(*settings, kCommand, flags.team.value_or(""));
  if (!access) return kExitBadConfig;
  auto writer = fetcher::RecipeWriter::create(flags.output);
  if (!writer) return report_call_failure(kCommand, "--output: " + writer.error(), writer.error_kind());
  auto exported = fetcher::export_connections(*access, flags.provider, users,
                                              [&](std::string_view recipe) { return writer->write(recipe); });
  if (!exported) return report_call_failure(kCommand, exported.error() + " (no file written)", exported.error_kind());
  if (auto finished = writer->finish(); !finished) return report_call_failure(kCommand, finished.error(), ErrorKind::io);
  std::string out;
  json::ObjectWriter(out)
      .string("provider", flags.provider)
      .integer("connections", static_cast<int64_t>(*exported))
      .string("output", flags.output)
      .close();
  print_json_line(out);
  return kExitOk;
}

int run_connections_import(const ConnectionsImportFlags& flags) {
  constexpr std::string_view kCommand = "connections import";
  if (auto checked = check_bulk_provider(flags.provider); !checked) return report_call_failure(kCommand, checked.error(), ErrorKind::data);
  if (flags.batch < 1 || flags.batch > static_cast<int64_t>(fetcher::kImportBatchMax)) {
    return report_call_failure(kCommand, "--batch: " + std::to_string(flags.batch) + " is not between 1 and " +
                                             std::to_string(fetcher::kImportBatchMax), ErrorKind::data);
  }
  auto recipes = fetcher::read_recipe_file(flags.file);
  if (!recipes) return report_call_failure(kCommand, recipes.error(), recipes.error_kind());
  if (recipes->lines.empty()) return report_call_failure(kCommand, flags.file + ": no connection recipes", ErrorKind::data);
  if (flags.dry_run) {
    std::string out;
    json::ObjectWriter(out)
        .string("provider", flags.provider)
        .string("file", flags.file)
        .integer("connections", static_cast<int64_t>(recipes->lines.size()))
        .boolean("valid", true)
        .close();
    print_json_line(out);
    return kExitOk;
  }
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  auto access = service_access_or_report(*settings, kCommand, flags.team.value_or(""));
  if (!access) return kExitBadConfig;

  const auto batch_size = static_cast<size_t>(flags.batch);
  BatchOutcome total_outcome;
  std::vector<std::string> not_imported;
  size_t queued = 0, batches = 0;
  int exit_code = kExitOk;
  for (size_t first = 0; first < recipes->lines.size(); first += batch_size) {
    const size_t last = std::min(first + batch_size, recipes->lines.size());
    const std::vector<std::string> batch(recipes->lines.begin() + static_cast<ptrdiff_t>(first),
                                         recipes->lines.begin() + static_cast<ptrdiff_t>(last));
    ++batches;
    auto answer = fetcher::import_connections(*access, flags.provider, batch, flags.wait, recipes->tokens);
    if (!answer) {
      exit_code = report_call_failure(kCommand, "batch " + std::to_string(batches) + " (lines of connections " +
                                                    std::to_string(first + 1) + "-" + std::to_string(last) +
                                                    "): " + answer.error() + "; later batches not sent",
                                      answer.error_kind());
      // This batch's users and those of the batches not sent are in no answer's lists.
      not_imported.assign(recipes->user_ids.begin() + static_cast<ptrdiff_t>(first), recipes->user_ids.end());
      break;
    }
    std::string line;
    json::ObjectWriter object(line);
    object.integer("batch", static_cast<int64_t>(batches))
        .integer("connections", static_cast<int64_t>(batch.size()))
        .integer("status", answer->status);
    if (answer->lists) {
      const auto batch_users = std::span(recipes->user_ids).subspan(first, last - first);
      const BatchOutcome outcome = classify_answer(batch_users, *answer);
      object.raw("imported", id_array(outcome.imported)).raw("failed", id_array(outcome.failed));
      if (!outcome.unaccounted.empty()) object.raw("unaccounted", id_array(outcome.unaccounted));
      if (!outcome.not_in_batch.empty()) {
        object.raw("not_in_batch", id_array(outcome.not_in_batch));
        report_error(kCommand, "batch " + std::to_string(batches) +
                                   ": the service named ids not in this batch: " + listed_ids(outcome.not_in_batch));
      }
      if (!outcome.contradictory.empty()) {
        object.raw("contradictory", id_array(outcome.contradictory));
        report_error(kCommand, "batch " + std::to_string(batches) +
                                   ": the service named ids more than once (imported and failed, or twice): " +
                                   listed_ids(outcome.contradictory));
      }
      outcome.add_to(total_outcome);
    } else {
      object.integer("queued", static_cast<int64_t>(batch.size()));
      queued += batch.size();
    }
    object.close();
    print_json_line(line);
  }
  std::string total;
  json::ObjectWriter(total)
      .string("provider", flags.provider)
      .integer("batches", static_cast<int64_t>(batches))
      .integer("connections", static_cast<int64_t>(recipes->lines.size()))
      .raw("imported", id_array(total_outcome.imported))
      .raw("failed", id_array(total_outcome.failed))
      .raw("unaccounted", id_array(total_outcome.unaccounted))
      .raw("not_in_batch", id_array(total_outcome.not_in_batch))
      .raw("contradictory", id_array(total_outcome.contradictory))
      .raw("not_imported", id_array(not_imported))
      .integer("queued", static_cast<int64_t>(queued))
      .close();
  print_json_line("{\"total\":" + total + "}");
  const auto& failed = total_outcome.failed;
  const auto& unaccounted = total_outcome.unaccounted;
  const auto& not_in_batch = total_outcome.not_in_batch;
  const auto& contradictory = total_outcome.contradictory;
  if (exit_code == kExitOk && !failed.empty()) {
    report_error(kCommand, std::to_string(failed.size()) + " connection(s) were not imported (see \"failed\")");
    exit_code = kExitFailure;
  }
  if (exit_code == kExitOk && !unaccounted.empty()) {
    report_error(kCommand, std::to_string(unaccounted.size()) +
                               " connection(s) the service's answer names neither imported nor failed (see \"unaccounted\")");
    exit_code = kExitFailure;
  }
  if (exit_code == kExitOk && !not_in_batch.empty()) {
    report_error(kCommand, std::to_string(not_in_batch.size()) +
                               " id(s) the service's answers named were not in their batch (see \"not_in_batch\")");
    exit_code = kExitFailure;
  }
  if (exit_code == kExitOk && !contradictory.empty()) {
    report_error(kCommand, std::to_string(contradictory.size()) +
                               " connection(s) the service's answer named more than once (see \"contradictory\")");
    exit_code = kExitFailure;
  }
  if (exit_code == kExitOk && queued > 0) {
    report_error(kCommand, "note: " + std::to_string(queued) +
                               " connection(s) are queued at the service (HTTP 202); their outcome is not known yet");
  }
  return exit_code;
}

}  // namespace

void add_connections_command(CLI::App& app, int& exit_code) {
  auto* connections = app.add_subcommand(
      "connections", "Export or import provider connections in bulk (a migration feature the service enables on request)");
  connections->require_subcommand(1);

  auto exporting = std::make_shared<ConnectionsExportFlags>();
  auto* export_command = connections->add_subcommand(
      "export", "Write the provider's connection recipes (with OAuth tokens) to a JSON Lines file, mode 0600");
  add_settings_flags(*export_command, exporting->settings, false);
  export_command->add_option("--provider", exporting->provider, "The provider, e.g. oura")->required();
  export_command->add_option("--users", exporting->users_file, "Only these users: a file with one user id a line");
  export_command->add_option("--output,-o", exporting->output, "The recipes file to write")->required();
  export_command->add_option("--team", exporting->team, "Whose connections: a [[service.teams]] team id (default [service])");
  export_command->callback([exporting, &exit_code] { exit_code = run_connections_export(*exporting); });

  auto importing = std::make_shared<ConnectionsImportFlags>();
  auto* import_command = connections->add_subcommand(
      "import", "Send a recipes file to the service in batches (POST /v2/link/bulk_import)");
  add_settings_flags(*import_command, importing->settings, false);
  import_command->add_option("--provider", importing->provider, "The provider, e.g. oura")->required();
  import_command->add_option("file", importing->file, "The recipes file (JSON Lines)")->required();
  import_command->add_flag("--wait", importing->wait, "Ask the service to finish each batch (it waits up to 20 s)");
  import_command->add_flag("--dry-run", importing->dry_run, "Only check the file; send nothing");
  import_command->add_option("--batch", importing->batch, "Connections per request (default 100, at most 1000)");
  import_command->add_option("--team", importing->team, "Into which team: a [[service.teams]] team id (default [service])");
  import_command->callback([importing, &exit_code] { exit_code = run_connections_import(*importing); });
}

}  // namespace hh::cli
