// healthhook check-config: loads settings and secrets exactly as `serve` would, checks
// the signing secrets decode, and prints the effective settings (never a secret).
#include <filesystem>
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/json_writer.h"
#include "config/secrets.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::cli {
namespace {

struct CheckConfigFlags {
  SettingsFlags settings;
};

int run_check_config(const CheckConfigFlags& flags) {
  auto settings = load_settings_or_report(flags.settings, "check-config");
  if (!settings) return kExitBadConfig;
  auto secrets = config::load_secrets(*settings);
  if (!secrets) {
    report_error("check-config", secrets.error());
    return kExitBadConfig;
  }
  auto verifier = signature::Verifier::create(secrets->signing_secrets, settings->timestamp_tolerance_s);
  if (!verifier) {
    report_error("check-config", "signing_secret_files: " + verifier.error());
    return kExitBadConfig;
  }
  const auto db_dir = std::filesystem::absolute(settings->database).parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(db_dir, ec)) {
    report_error("check-config", "database: folder " + db_dir.string() + " does not exist");
    return kExitBadConfig;
  }
  std::string out;
  json::ObjectWriter(out)
      .string("status", "ok")
      .string("listen", settings->listen)
      .string("database", settings->database)
      .string("webhook_path", settings->webhook_path)
      .integer("max_body_bytes", settings->max_body_bytes)
      .integer("signing_secrets", static_cast<int64_t>(secrets->signing_secrets.size()))
      .integer("timestamp_tolerance_s", settings->timestamp_tolerance_s)
      .string("synchronous", settings->synchronous)
      .string("service_base_url", settings->service.base_url)
      .boolean("follow_ups", !secrets->api_key.empty())
      .boolean("read_api", !secrets->read_api_token.empty())
      .boolean("tls", !settings->tls.cert_file.empty())
      .close();
  std::cout << out << "\n";
  return kExitOk;
}

}  // namespace

void add_check_config_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<CheckConfigFlags>();
  auto* command = app.add_subcommand("check-config", "Check the configuration and secrets, print the effective settings");
  add_settings_flags(*command, flags->settings);
  command->callback([flags, &exit_code] { exit_code = run_check_config(*flags); });
}

}  // namespace hh::cli
