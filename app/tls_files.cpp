#include "app/tls_files.h"

#include "common/http_client/tls_context.h"
#include "common/http_url.h"
#include "config/secrets.h"
#include "receiver/http/server_tls.h"

namespace hh::app {

Result<std::optional<http::ServerCertificate>> check_tls_files(const config::Settings& settings) {
  std::optional<http::ServerCertificate> listener_certificate;
  if (!settings.tls.cert_file.empty()) {
    auto certificate = http::load_server_certificate(settings.tls.cert_file, settings.tls.key_file, settings.base_dir);
    if (!certificate) return fail(ErrorKind::data, certificate.error());
    listener_certificate = std::move(*certificate);
  }
  // The fetcher resolves its CA file from the configuration's folder (checked even while no
  // API key lets the fetcher run: a key added later must not meet a broken file); the
  // forwarder, for an https:// destination only, as a secret path ($CREDENTIALS_DIRECTORY
  // too).
  if (!settings.service.ca_file.empty()) {
    const std::string path = config::resolve_config_path(settings.service.ca_file, settings.base_dir);
    if (auto context = http_client::client_tls_context(path); !context) return fail(context, "service.ca_file");
  }
  for (size_t i = 0; i < settings.forwards.size(); ++i) {
    const std::string& ca_file = settings.forwards[i].ca_file;
    const auto url = parse_http_url(settings.forwards[i].url);
    if (ca_file.empty() || !url || !url->tls) continue;
    auto context = http_client::client_tls_context(config::resolve_secret_path(ca_file, settings.base_dir));
    if (!context) return fail(context, "forward[" + std::to_string(i) + "].ca_file");
  }
  return listener_certificate;
}

}  // namespace hh::app
