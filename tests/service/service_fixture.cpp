#include "tests/service/service_fixture.h"

#include <algorithm>

namespace hh::test {

fake::FakeOptions commands_service_options(const char* api_key) {
  fake::FakeOptions options;
  options.tls = fake::TlsMode::valid;
  options.api_key = api_key;
  options.management_key = kCommandsManagementKey;
  return options;
}

ServiceCommands::ServiceCommands() {
  dir.write("api-key", std::string(kCommandsApiKey) + "\n");
  dir.write("service-ca.pem", service.ca_pem());
  dir.write("secret", random_secret() + "\n");  // the default signing_secret_files, for check-config
  write_config();
}

std::string ServiceCommands::write_config(const std::string& extra) {
  config_ = dir.write("healthhook.toml", "database = \"" + dir.file("healthhook.db") +
                                             "\"\n[service]\nbase_url = \"" + service.base_url() +
                                             "\"\napi_key_file = \"api-key\"\nca_file = \"service-ca.pem\"\n" + extra);
  return config_;
}

ProcessResult ServiceCommands::run(std::vector<std::string> args, const std::vector<std::string>& env) const {
  args.push_back("--config");
  args.push_back(config_);
  return run_healthhook(args, "", env, std::chrono::seconds(120));
}

size_t line_count(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

}  // namespace hh::test
