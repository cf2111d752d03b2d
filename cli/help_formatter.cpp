#include "cli/help_formatter.h"

#include <vector>

namespace hh::cli {
namespace {

// "healthhook forward": the names from the top-level app down to `command`.
std::string command_path(const CLI::App& command) {
  std::string path = command.get_name();
  for (const CLI::App* parent = command.get_parent(); parent != nullptr; parent = parent->get_parent()) {
    path = (parent->get_parent() == nullptr ? std::string("healthhook") : parent->get_name()) + " " + path;
  }
  return path;
}

// Whether an option of one of `option`'s names is taken before the argument reaches its
// command: by `app` (its own -h, -V) or a command between `app` and `last`.
bool taken_below(const CLI::App& app, const CLI::App& last, const CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.get_lnames()) names.push_back("--" + name);
  for (const std::string& name : option.get_snames()) names.push_back("-" + name);
  for (const CLI::App* at = &app;; at = at->get_parent()) {
    for (const std::string& name : names) {
      if (at->get_option_no_throw(name) != nullptr) return true;
    }
    if (at == &last) return false;
  }
}

}  // namespace

std::string HelpFormatter::make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const {
  std::string help = CLI::Formatter::make_help(app, std::move(name), mode);
  if (mode == CLI::AppFormatMode::Sub) return help;  // a part of a parent's --help-all
  // Up the commands the arguments fall through to, as CLI11 passes an unknown option on.
  std::string inherited;
  for (const CLI::App* at = app; at->get_fallthrough() && at->get_parent() != nullptr; at = at->get_parent()) {
    const CLI::App& parent = *at->get_parent();
    const std::vector<const CLI::Option*> taken = parent.get_options([&](const CLI::Option* option) {
      return !option->get_group().empty() && option->nonpositional() && !taken_below(*app, *at, *option);
    });
    if (!taken.empty()) inherited += make_group("Options of " + command_path(parent) + " (also taken here)", false, taken);
  }
  if (inherited.empty()) return help;
  help.pop_back();  // CLI11's help ends with a blank line; the groups above start with one
  return help + inherited + "\n";
}

}  // namespace hh::cli
