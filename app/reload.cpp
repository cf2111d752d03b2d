#include "app/reload.h"

#include <algorithm>

#include "app/certificate_validity.h"
#include "common/log.h"
#include "config/secrets.h"
#include "config/settings_reference.h"
#include "receiver/http/server_tls.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::app {

std::vector<std::string> keys_needing_restart(const config::Settings& startup, const config::Settings& settings) {
  constexpr std::string_view kReloaded[] = {"signing_secret_files", "tls.cert_file", "tls.key_file", "log_level"};
  std::vector<std::string> keys;
  const auto before = config::settings_in_effect(startup);
  const auto now = config::settings_in_effect(settings);
  for (size_t i = 0; i < before.size() && i < now.size(); ++i) {
    if (std::find(std::begin(kReloaded), std::end(kReloaded), before[i].first) != std::end(kReloaded)) continue;
    if (before[i].second != now[i].second) keys.push_back(before[i].first);
  }
  // The certificate's files reload; turning TLS on or off does not (a listener's kind).
  if (startup.tls.cert_file.empty() != settings.tls.cert_file.empty()) keys.push_back("tls");
  if (config::forward_blocks_in_effect(startup) != config::forward_blocks_in_effect(settings)) keys.push_back("forward");
  if (config::teams_in_effect(startup) != config::teams_in_effect(settings)) keys.push_back("service.teams");
  return keys;
}

Result<LoadedReload> load_reload(const config::Settings& startup, const config::Settings& settings) {
  const auto refused = [](const std::string& reason) {
    log::error("reload_failed").str("reason", reason);
    return fail(reason);
  };
  auto secrets = config::load_secrets(settings);
  if (!secrets) return refused(secrets.error());
  auto verifier = signature::Verifier::create(secrets->signing_secrets, startup.timestamp_tolerance_s);
  if (!verifier) return refused(verifier.error());
  const bool tls_at_start = !startup.tls.cert_file.empty();
  if (tls_at_start != !settings.tls.cert_file.empty()) {
    log::warn("reload_tls_unchanged").str("reason", "turning TLS on or off needs a restart");
  }
  std::optional<http::ServerCertificate> certificate;
  if (tls_at_start && !settings.tls.cert_file.empty()) {
    auto loaded = http::load_server_certificate(settings.tls.cert_file, settings.tls.key_file, settings.base_dir);
    if (!loaded) return refused(loaded.error());
    certificate = std::move(*loaded);
  }
  return LoadedReload{settings.log_level, std::move(*verifier), std::move(certificate),
                      secrets->signing_secrets.size()};
}

void apply_reload(LoadedReload loaded, http::WebhookEndpoint& webhook, http::Listener& listener,
                  std::atomic<int64_t>& tls_not_after_s) {
  log::set_level(log::parse_level(loaded.log_level).value_or(log::Level::info));
  webhook.set_verifier(std::move(loaded.verifier));
  if (loaded.certificate) {
    listener.set_tls(loaded.certificate->context);  // new connections; open ones keep theirs
    tls_not_after_s.store(loaded.certificate->not_after_s, std::memory_order_relaxed);
    log::info("tls_reloaded")
        .str("subject", loaded.certificate->subject)
        .str("serial", loaded.certificate->serial)
        .str("not_after", loaded.certificate->not_after);
    // Swapped in all the same, as at start: refusing it would keep the previous
    // certificate, which a renewal gone wrong may have left expired too.
    warn_about_certificate_validity(*loaded.certificate);
  }
  log::info("reloaded").num("signing_secrets", static_cast<int64_t>(loaded.signing_secrets));
}

}  // namespace hh::app
