// healthhook serve: the flags; the server itself is app/serve.h.
#include "app/serve.h"
#include "cli/command_support.h"
#include "cli/commands.h"

namespace hh::cli {
namespace {

int exit_code_of(app::ServeExit exit) {
  switch (exit) {
    case app::ServeExit::ok: return kExitOk;
    case app::ServeExit::bad_config: return kExitBadConfig;
    case app::ServeExit::failure: break;
  }
  return kExitFailure;
}

int run_serve(const SettingsFlags& flags) {
  // Held since main() began (cli/main.cpp); again here for a caller that did not: a SIGTERM
  // or SIGHUP that comes while serve starts waits for its handler, where it stops serve
  // cleanly or reloads, instead of ending the process by its default action.
  app::hold_stop_signals();
  auto settings = load_settings_or_report(flags, "serve");
  if (!settings) return kExitBadConfig;
  app::ServeHooks hooks;
  // The reload applies log_level with the rest, only when all of it loads.
  hooks.reread_settings = [&flags] { return read_settings_for(flags, config::ConfigFileKind::regular_only); };
  hooks.report_error = [](std::string_view message) { report_error("serve", message); };
  return exit_code_of(app::serve(*settings, hooks));
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SettingsFlags>();
  auto* command = app.add_subcommand("serve", "Receive webhooks, process them, fetch follow-ups");
  add_settings_flags(*command, *flags);
  command->callback([flags, &exit_code] { exit_code = run_serve(*flags); });
}

}  // namespace hh::cli
