#include "config/secrets.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace hh::config {

std::string resolve_secret_path(const std::string& path, const std::string& base_dir) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  if (p.is_absolute()) return path;
  if (const char* credentials = std::getenv("CREDENTIALS_DIRECTORY")) {
    const fs::path candidate = fs::path(credentials) / p;
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return (fs::path(base_dir) / p).string();
}

Result<std::string> read_secret_file(const std::string& path, const std::string& base_dir) {
  const std::string resolved = resolve_secret_path(path, base_dir);
  std::ifstream in(resolved, std::ios::binary);
  if (!in) return fail("cannot read secret file " + resolved);
  std::string line;
  std::getline(in, line);
  const auto first = line.find_first_not_of(" \t\r\n");
  const auto last = line.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) return fail("secret file " + resolved + " is empty");
  return line.substr(first, last - first + 1);
}

Result<Secrets> load_secrets(const Settings& settings) {
  Secrets secrets;
  for (const auto& file : settings.signing_secret_files) {
    auto secret = read_secret_file(file, settings.base_dir);
    if (!secret) return fail("signing_secret_files: " + secret.error());
    secrets.signing_secrets.push_back(std::move(*secret));
  }
  if (!settings.service.api_key_file.empty()) {
    auto key = read_secret_file(settings.service.api_key_file, settings.base_dir);
    if (!key) return fail("service.api_key_file: " + key.error());
    secrets.api_key = std::move(*key);
  }
  if (!settings.read_api.token_file.empty()) {
    auto token = read_secret_file(settings.read_api.token_file, settings.base_dir);
    if (!token) return fail("read_api.token_file: " + token.error());
    secrets.read_api_token = std::move(*token);
  }
  return secrets;
}

}  // namespace hh::config
