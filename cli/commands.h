#pragma once
// Each subcommand registers itself on the top-level app; `exit_code` receives its result.
#include <CLI/CLI.hpp>

namespace hh::cli {

void add_serve_command(CLI::App& app, int& exit_code);
void add_check_config_command(CLI::App& app, int& exit_code);
void add_rebuild_command(CLI::App& app, int& exit_code);
void add_jobs_command(CLI::App& app, int& exit_code);
void add_forward_command(CLI::App& app, int& exit_code);
void add_purge_user_command(CLI::App& app, int& exit_code);
void add_capture_command(CLI::App& app, int& exit_code);
void add_replay_command(CLI::App& app, int& exit_code);
void add_query_command(CLI::App& app, int& exit_code);
void add_sign_command(CLI::App& app, int& exit_code);
void add_backfill_command(CLI::App& app, int& exit_code);
void add_refresh_command(CLI::App& app, int& exit_code);
void add_migrate_command(CLI::App& app, int& exit_code);
void add_config_command(CLI::App& app, int& exit_code);  // config reference
void add_man_command(CLI::App& app, int& exit_code);     // the manual pages, from the help text
// The rest of the service's interface (issue 47).
void add_user_command(CLI::App& app, int& exit_code);
void add_link_code_command(CLI::App& app, int& exit_code);
void add_teams_command(CLI::App& app, int& exit_code);
void add_connections_command(CLI::App& app, int& exit_code);
void add_lab_report_command(CLI::App& app, int& exit_code);
void add_lab_lookup_commands(CLI::App& app, int& exit_code);  // labs, lab-accounts, markers, area

}  // namespace hh::cli
