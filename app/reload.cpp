#include "app/reload.h"

#include <optional>

#include "common/log.h"
#include "config/secrets.h"
#include "receiver/http/server_tls.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::app {

std::string reload(const config::Settings& startup, const config::Settings& settings, http::WebhookEndpoint& webhook,
            http::Listener& listener) {
  auto secrets = config::load_secrets(settings);
  if (!secrets) {
    log::error("reload_failed").str("reason", secrets.error());
    return secrets.error();
  }
  auto verifier = signature::Verifier::create(secrets->signing_secrets, startup.timestamp_tolerance_s);
  if (!verifier) {
    log::error("reload_failed").str("reason", verifier.error());
    return verifier.error();
  }
  const bool tls_at_start = !startup.tls.cert_file.empty();
  if (tls_at_start != !settings.tls.cert_file.empty()) {
    log::warn("reload_tls_unchanged").str("reason", "turning TLS on or off needs a restart");
  }
  std::optional<http::ServerCertificate> certificate;
  if (tls_at_start && !settings.tls.cert_file.empty()) {
    auto loaded = http::load_server_certificate(settings.tls.cert_file, settings.tls.key_file, settings.base_dir);
    if (!loaded) {
      log::error("reload_failed").str("reason", loaded.error());
      return loaded.error();
    }
    certificate = std::move(*loaded);
  }

  webhook.set_verifier(std::move(*verifier));
  if (certificate) {
    listener.set_tls(certificate->context);  // new connections; open ones keep theirs
    log::info("tls_reloaded")
        .str("subject", certificate->subject)
        .str("serial", certificate->serial)
        .str("not_after", certificate->not_after);
  }
  log::info("reloaded").num("signing_secrets", static_cast<int64_t>(secrets->signing_secrets.size()));
  return {};
}

}  // namespace hh::app
