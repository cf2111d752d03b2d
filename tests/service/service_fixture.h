#pragma once
// What the service-command tests share: a fake service over HTTPS (its CA in a file), a
// configuration whose [service] points at it, and `healthhook` run as a process with that
// configuration, the way a user runs it.
#include <string>
#include <vector>

#include "tests/fake_service/fake_service.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

namespace hh::test {

inline constexpr const char* kCommandsApiKey = "commands-test-api-key";
inline constexpr const char* kCommandsManagementKey = "commands-test-management-key";

fake::FakeOptions commands_service_options(const char* api_key = kCommandsApiKey);

class ServiceCommands {
 public:
  ServiceCommands();

  fake::FakeService service{commands_service_options()};
  TempDir dir;

  // Writes healthhook.toml in `dir`: the database, [service] on the fake with its key and
  // CA, then `extra` (more TOML); returns its path (also config()).
  std::string write_config(const std::string& extra = "");
  const std::string& config() const { return config_; }
  // `healthhook args… --config <config>`.
  ProcessResult run(std::vector<std::string> args, const std::vector<std::string>& env = {}) const;
  // The requests the fake saw, in order.
  std::vector<fake::RecordedRequest> calls() const { return service.requests(); }

 private:
  std::string config_;
};

// Number of lines in `text`.
size_t line_count(const std::string& text);
// True when `text` contains `part`.
inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace hh::test
