#pragma once
// The help every command prints (`healthhook … --help`, README's "COMMAND --help lists the
// options"): CLI11's, plus the options a subcommand takes from its command.
#include <CLI/CLI.hpp>
#include <string>

namespace hh::cli {

// A subcommand that falls through (`forward list`, `jobs show`: CLI11's fallthrough) takes
// its command's options after its own name too (`forward list --dead`), but CLI11 lists only
// the options defined on it. This lists the others as well, under "Options of healthhook
// forward (also taken here)", read from the command itself: each option keeps one definition.
// Set on the top-level app before the commands are added (CLI11 copies it to each).
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override;
};

}  // namespace hh::cli
