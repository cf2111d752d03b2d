// healthhook man --output DIR: writes the manual pages, healthhook(1) and one
// healthhook-COMMAND(1) per command, from the same descriptions `--help` prints (CLI11's
// App and Option), so the pages cannot say other than the program. The Debian package
// installs them (cmake/Packaging.cmake runs this at build time).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>
#include <vector>

#include "cli/command_support.h"
#include "cli/commands.h"

namespace hh::cli {
namespace {

// Text as roff reads it literally: backslashes escaped, '-' as a minus (so options can be
// copied), and a line starting with '.' or '\'' not taken for a request.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out.push_back(c);
    line_start = c == '\n';
  }
  return out;
}

// An option's names and value, as --help shows them: "\-\-config FILE" style.
std::string option_heading(const CLI::Option& option) {
  std::string names = option.get_name(true, true);
  const std::string type = option.get_type_name();
  if (option.get_items_expected_max() > 0 && !type.empty()) names += " " + type;
  return names;
}

void write_options(std::ostream& out, const CLI::App& command) {
  const auto options = command.get_options([](const CLI::Option* option) { return !option->get_group().empty(); });
  if (options.empty()) return;
  for (const CLI::Option* option : options) {
    out << ".TP\n.B " << roff(option_heading(*option)) << "\n" << roff(option->get_description())
        << (option->get_required() ? " (required)" : "") << "\n";
  }
}

std::string full_name(const CLI::App& command) {
  std::string name = command.get_name();
  for (const CLI::App* parent = command.get_parent(); parent && parent->get_parent(); parent = parent->get_parent()) {
    name = parent->get_name() + " " + name;
  }
  return name;
}

void write_subcommands(std::ostream& out, const CLI::App& command) {
  for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; })) {
    out << ".SS " << roff(full_name(*sub)) << "\n" << roff(sub->get_description()) << "\n";
    write_options(out, *sub);
    write_subcommands(out, *sub);
  }
}

constexpr std::string_view kExitStatus =
    ".SH EXIT STATUS\n0 success; 1 a runtime failure (the store, a port in use, failed lines); 2 a bad "
    "configuration or usage.\n";

constexpr std::string_view kSettings =
    ".SH CONFIGURATION\nSettings come from the TOML file given with \\-\\-config, then HEALTHHOOK_* environment "
    "variables (the key upper\\-cased, '.' as '_'), then \\-\\-set KEY=VALUE. "
    "\\fBhealthhook config reference\\fR prints every key with its default and meaning. Secrets are read from "
    "files only, first from $CREDENTIALS_DIRECTORY.\n";

void write_command_page(std::ostream& out, const CLI::App& command, const std::string& page) {
  out << ".TH " << page << " 1 \"\" \"healthhook " HEALTHHOOK_VERSION "\" \"healthhook manual\"\n"
      << ".SH NAME\n" << roff("healthhook-" + command.get_name()) << " \\- " << roff(command.get_description()) << "\n"
      << ".SH SYNOPSIS\n.B healthhook " << roff(command.get_name()) << "\n[\\fIoptions\\fR]"
      << (command.get_subcommands([](const CLI::App*) { return true; }).empty() ? "" : " \\fICOMMAND\\fR") << "\n"
      << ".SH OPTIONS\n";
  write_options(out, command);
  if (!command.get_subcommands([](const CLI::App*) { return true; }).empty()) {
    out << ".SH COMMANDS\n";
    write_subcommands(out, command);
  }
  out << kSettings << kExitStatus << ".SH SEE ALSO\n.BR healthhook (1)\n";
}

void write_main_page(std::ostream& out, const CLI::App& app) {
  out << ".TH HEALTHHOOK 1 \"\" \"healthhook " HEALTHHOOK_VERSION "\" \"healthhook manual\"\n"
      << ".SH NAME\nhealthhook \\- " << roff(app.get_description().substr(app.get_description().find(':') + 2)) << "\n"
      << ".SH SYNOPSIS\n.B healthhook\n\\fICOMMAND\\fR [\\fIoptions\\fR]\n"
      << ".SH DESCRIPTION\nOne program, one command per job: \\fBserve\\fR receives, verifies and stores deliveries "
         "and applies them to the tables; the other commands read, export, replay, repair and call the service. "
         "Each command's page is healthhook\\-COMMAND(1).\n"
      << ".SH COMMANDS\n";
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    out << ".TP\n.BR healthhook\\-" << roff(command->get_name()) << " (1)\n" << roff(command->get_description()) << "\n";
  }
  out << ".SH OPTIONS\n";
  write_options(out, app);
  out << kSettings << kExitStatus;
}

// A page is written whole under a temporary name, then takes its own: a full disk leaves
// no empty or cut page behind, and the error says which page and why.
Result<void> write_page(const std::filesystem::path& path, const std::string& text) {
  const std::string partial = path.string() + ".partial";
  const auto failed = [&](int error) {
    std::remove(partial.c_str());
    return fail(ErrorKind::io, path.string() + ": cannot write: " + std::strerror(error));
  };
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out) return failed(errno);
  out << text;
  out.close();
  if (!out) return failed(errno ? errno : EIO);
  if (std::rename(partial.c_str(), path.c_str()) != 0) return failed(errno);
  return {};
}

template <typename WritePage>
std::string page_text(WritePage&& body) {
  std::ostringstream out;
  body(out);
  return std::move(out).str();
}

int write_pages(const CLI::App& app, const std::string& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  std::vector<std::pair<std::string, std::string>> pages;
  pages.emplace_back("healthhook.1", page_text([&](std::ostream& out) { write_main_page(out, app); }));
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string page = "healthhook-" + command->get_name();
    pages.emplace_back(page + ".1", page_text([&](std::ostream& out) { write_command_page(out, *command, page); }));
  }
  for (const auto& [name, text] : pages) {
    if (auto written = write_page(std::filesystem::path(folder) / name, text); !written) {
      report_error("man", written.error());  // the first failure stops: the rest would fail alike
      return kExitFailure;
    }
  }
  return kExitOk;
}

}  // namespace

void add_man_command(CLI::App& app, int& exit_code) {
  auto folder = std::make_shared<std::string>();
  auto* command = app.add_subcommand("man", "Write the manual pages (healthhook.1, healthhook-COMMAND.1) into a folder");
  command->add_option("--output", *folder, "Folder to write the pages into (created if missing)")
      ->required()
      ->check(CLI::Validator(  // "" would write the pages into the current folder
          [](const std::string& text) { return text.empty() ? std::string("empty: give a folder") : std::string(); },
          "FOLDER"));
  command->callback([folder, command, &exit_code] { exit_code = write_pages(*command->get_parent(), *folder); });
}

}  // namespace hh::cli
