#include "cli/service_access.h"

#include "cli/command_support.h"
#include "config/secrets.h"

namespace hh::cli {

std::optional<fetcher::ServiceAccess> service_access_or_report(const config::Settings& settings,
                                                               std::string_view command) {
  if (settings.service.api_key_file.empty()) {
    report_error(command, "service.api_key_file is not set: the service needs the API key");
    return std::nullopt;
  }
  auto api_key = config::read_secret_file(settings.service.api_key_file, settings.base_dir);
  if (!api_key) {
    report_error(command, "service.api_key_file: " + api_key.error());
    return std::nullopt;
  }
  return fetcher::ServiceAccess{settings.service, std::move(*api_key), settings.base_dir};
}

}  // namespace hh::cli
