// healthhook config reference: prints every configuration key with its type, default,
// allowed values and meaning (config/settings_reference.h), the table docs/configuration.md
// holds. --update FILE rewrites that table in place, between its marker lines, so the
// manual follows the code (a test fails while the two differ).
#include <fstream>
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/file_text.h"
#include "config/settings_reference.h"

namespace hh::cli {
namespace {

int update_reference(const std::string& file) {
  auto text = read_file_text(file);
  if (!text) {
    report_error("config reference", text.error());
    return kExitFailure;
  }
  const std::string& document = *text;
  const size_t begin = document.find(config::kReferenceBegin);
  const size_t end = document.find(config::kReferenceEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    report_error("config reference", file + ": marker lines missing or out of order (" + std::string(config::kReferenceBegin) + " … " +
                                         std::string(config::kReferenceEnd) + ")");
    return kExitBadConfig;
  }
  const size_t body = begin + config::kReferenceBegin.size();
  const std::string updated =
      document.substr(0, body) + "\n" + config::settings_reference_markdown() + document.substr(end);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!(out << updated)) {
    report_error("config reference", file + ": cannot write");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void add_config_command(CLI::App& app, int& exit_code) {
  auto* command = app.add_subcommand("config", "Describe the configuration");
  command->require_subcommand(1);
  auto update = std::make_shared<std::string>();
  auto* reference = command->add_subcommand(
      "reference", "Print every configuration key with its type, default, allowed values and meaning (Markdown)");
  reference->add_option("--update", *update,
                        "Rewrite the table between the marker lines of this file instead (docs/configuration.md)");
  reference->callback([update, &exit_code] {
    if (!update->empty()) {
      exit_code = update_reference(*update);
      return;
    }
    std::cout << config::settings_reference_markdown();
    exit_code = kExitOk;
  });
}

}  // namespace hh::cli
