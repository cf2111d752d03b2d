// healthhook: one binary, one subcommand per job (spec §6).
#include <CLI/CLI.hpp>
#include <boost/system/system_error.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "app/serve.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/help_formatter.h"
#include "store/open_store.h"

namespace {

// --version everywhere, as --help is (spec §6): CLI11 gives every subcommand its own help
// flag, but the version flag only to the app it is set on.
void add_version_everywhere(CLI::App& app, const std::string& version) {
  for (CLI::App* sub : app.get_subcommands(std::function<bool(CLI::App*)>{})) {
    if (sub->get_option_no_throw("--version") == nullptr) {
      sub->set_version_flag(sub->get_option_no_throw("-V") == nullptr ? "-V,--version" : "--version", version);
    }
    add_version_everywhere(*sub, version);
  }
}

// A number given as "" is refused as empty: CLI11 reads it as 0 ("--timeout: 0 is not
// between 5 and 60") or as no value at all (`--batch ""` as if the flag were absent).
void refuse_empty_numbers(CLI::App& app) {
  static const CLI::Validator not_empty(
      [](std::string& value) {
        return value.empty() ? std::string("empty value (a number is expected)") : std::string();
      },
      "", "not empty");
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type == "INT" || type == "UINT" || type == "FLOAT" || type == "NUMBER") option->check(not_empty);
  }
  for (CLI::App* sub : app.get_subcommands(std::function<bool(CLI::App*)>{})) refuse_empty_numbers(*sub);
}

// Whether `word` is an option that takes the next word as its value: "--name" or "-x",
// not "--name=value", "-xvalue" or "--".
bool takes_next_word(std::string_view word) {
  if (word == "--" || word.find('=') != std::string_view::npos) return false;
  return word.starts_with("--") || (word.size() == 2 && word[0] == '-');
}

// The word that stood where a command belongs, among the arguments nothing took: the first
// that is no option and no option's value.
std::optional<std::string> unknown_command_word(const std::vector<std::string>& left) {
  for (size_t i = 0; i < left.size(); ++i) {
    if (left[i].starts_with("-")) continue;
    if (i == 0 || !takes_next_word(left[i - 1])) return left[i];
  }
  return std::nullopt;
}

// "healthhook" and the commands the arguments named: "healthhook forward requeue".
std::string command_prefix(const CLI::App& top) {
  std::string prefix = "healthhook";
  for (const CLI::App* at = &top; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    prefix += " " + at->get_name();
  }
  return prefix;
}

// What main says when the system refused a command something it cannot go on without.
int refused_by_the_system(const CLI::App& app, const std::string& what, bool no_thread) {
  std::cerr << command_prefix(app) << ": " << what;
  if (no_thread) {
    std::cerr << " (cannot start a thread: a limit on threads or processes, ulimit -u or systemd's TasksMax, or "
                 "memory)";
  }
  std::cerr << "\n";
  return hh::cli::kExitFailure;
}

// What was printed must have reached standard output: a full disk (`> /dev/full`) or a
// closed descriptor fails the command (exit 1) as it fails query's and capture's own
// writes, instead of exiting 0 with nothing written. The command ran to its end first, so
// the line says that what it did is done (a purge, a queued job): only its report is lost.
// std::cout shares stdout's buffer (synchronised with stdio), so one flush covers both.
int with_stdout_written(int exit_code, const std::string& command) {
  std::cout.flush();
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return exit_code;
  const int error = errno;
  if (exit_code != hh::cli::kExitOk) return exit_code;  // the failure already said
  std::cerr << command << ": <stdout>: " << (error ? std::strerror(error) : "write failed")
            << " (the command ran to its end; what it printed is lost)\n";
  return hh::cli::kExitFailure;
}

// Whether the command line names `serve`: its first word that is no option (no option of
// the top level takes a value: --help, --version), read before the command line is parsed.
bool names_serve(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (!word.starts_with('-')) return word == "serve";
  }
  return false;
}

int run(int argc, char** argv, std::string& command) {
  hh::store::prepare_backends();  // before any command opens a store
  // A file-size limit (ulimit -f, systemd's LimitFSIZE) reached by a write must fail that
  // write (EFBIG: a 503 in serve, an error elsewhere), not kill the process with SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"healthhook: self-hosted receiver for a health-data service's signed webhooks"};
  app.set_version_flag("-V,--version", "healthhook " HEALTHHOOK_VERSION);
  app.require_subcommand(1);
  // Before the commands are added: each copies it (a subcommand's --help lists the options
  // it takes from its command, `forward list --help` forward's).
  app.formatter(std::make_shared<hh::cli::HelpFormatter>());
  int exit_code = hh::cli::kExitOk;
  hh::cli::add_serve_command(app, exit_code);
  hh::cli::add_check_config_command(app, exit_code);
  hh::cli::add_rebuild_command(app, exit_code);
  hh::cli::add_jobs_command(app, exit_code);
  hh::cli::add_forward_command(app, exit_code);
  hh::cli::add_purge_user_command(app, exit_code);
  hh::cli::add_capture_command(app, exit_code);
  hh::cli::add_replay_command(app, exit_code);
  hh::cli::add_query_command(app, exit_code);
  hh::cli::add_sign_command(app, exit_code);
  hh::cli::add_backfill_command(app, exit_code);
  hh::cli::add_refresh_command(app, exit_code);
  hh::cli::add_migrate_command(app, exit_code);
  hh::cli::add_user_command(app, exit_code);
  hh::cli::add_link_code_command(app, exit_code);
  hh::cli::add_teams_command(app, exit_code);
  hh::cli::add_connections_command(app, exit_code);
  hh::cli::add_lab_report_command(app, exit_code);
  hh::cli::add_lab_lookup_commands(app, exit_code);
  hh::cli::add_config_command(app, exit_code);
  hh::cli::add_man_command(app, exit_code);
  add_version_everywhere(app, "healthhook " HEALTHHOOK_VERSION);
  refuse_empty_numbers(app);
  // One line, as every other refusal on the command line (CLI11 adds a second), naming the
  // command as its own errors do ("healthhook query: --format: …").
  app.failure_message([](const CLI::App* top, const CLI::Error& e) {
    std::string what = e.what();
    // CLI11 lists unexpected arguments last first ("B --until A --since"): in the order given.
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      const std::vector<std::string> left = top->remaining(true);
      std::string given;
      for (const std::string& word : left) given += (given.empty() ? "" : " ") + word;
      what = std::string(left.size() > 1 ? "The following arguments were not expected: "
                                         : "The following argument was not expected: ") +
             given;
    }
    return command_prefix(*top) + ": " + what + " (--help for the options)\n";
  });
  try {
    app.parse(argc, argv);
    command = command_prefix(app);
  } catch (const CLI::ParseError& e) {
    // A word where a command belongs ("healthhook bogus", "healthhook query nosuch"): named,
    // with the commands there are, rather than "A subcommand is required".
    // With --help too ("healthhook bogus --help" printed the main help and exited 0).
    const bool required_or_help =
        dynamic_cast<const CLI::RequiredError*>(&e) != nullptr || dynamic_cast<const CLI::CallForHelp*>(&e) != nullptr;
    if (const auto word = unknown_command_word(app.remaining(true)); required_or_help && word) {
      const CLI::App* at = &app;
      while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
      const std::string path = command_prefix(app);
      std::string commands;
      for (const CLI::App* command : at->get_subcommands({})) {
        commands += (commands.empty() ? "" : ", ") + command->get_name();
      }
      if (!commands.empty()) {
        std::cerr << path << ": unknown command \"" << *word << "\" (one of: " << commands
                  << ")\n";
        return hh::cli::kExitBadConfig;
      }
    }
    // "healthhook --bogus", "healthhook query --bogus": an option no command here knows is
    // named, not the command missing after it ("query --format csv" misses its table).
    if (const auto left = app.remaining(true);
        dynamic_cast<const CLI::RequiredError*>(&e) && !left.empty() && left.front().starts_with("-")) {
      const CLI::App* at = &app;
      while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
      const std::string option = left.front().substr(0, left.front().find('='));
      bool known_below = false;
      for (const CLI::App* command : at->get_subcommands({})) {
        known_below = known_below || command->get_option_no_throw(option) != nullptr;
      }
      if (!known_below) {
        std::cerr << command_prefix(app) << ": unknown option \"" << left.front() << "\" (--help for the options)\n";
        return hh::cli::kExitBadConfig;
      }
    }
    const int code = app.exit(e);
    return code == 0 ? 0 : hh::cli::kExitBadConfig;
  } catch (const std::system_error& e) {
    // The system refused a resource a command cannot go on without, almost always a thread
    // (std::thread throws; the helpers that can be done without log a warning instead):
    // one line, as every other failure, not an abort.
    return refused_by_the_system(app, e.what(), e.code() == std::errc::resource_unavailable_try_again);
  } catch (const boost::system::system_error& e) {  // Boost's threads (Asio's resolver, thread pools)
    return refused_by_the_system(app, e.what(), e.code() == boost::system::errc::resource_unavailable_try_again);
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // serve's stop and reload signals held first of all, before the stores' set-up and the
  // command line: one sent while serve starts (systemctl stop or reload then) waits for its
  // handler, which stops serve cleanly or reloads, instead of ending it by the default action
  // (exit 143 or 129, nothing logged; docs/facing-the-internet.md). Other commands keep the
  // defaults. What comes before main (loading the libraries) cannot hold them.
  if (names_serve(argc, argv)) hh::app::hold_stop_signals();
  std::string command = "healthhook";
  const int exit_code = run(argc, argv, command);
  return with_stdout_written(exit_code, command);
}
