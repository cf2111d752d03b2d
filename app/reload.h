#pragma once
// SIGHUP in `serve`: re-read what can change safely while running: the signing secrets,
// the TLS certificate and key, and the log level. All are loaded and checked before any is
// swapped in, so a bad file changes none of them. Turning TLS on or off, and every other setting, needs a restart.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/settings.h"
#include "receiver/http/listener.h"
#include "receiver/http/server_tls.h"
#include "receiver/http/webhook_endpoint.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::app {

// The keys whose value in `settings` differs from `startup` and that a reload does not
// apply (all but the signing secrets, the TLS files and log_level): they need a restart.
std::vector<std::string> keys_needing_restart(const config::Settings& startup, const config::Settings& settings);

// What a reload swaps in, every file read and checked. Its parts are only loaded: nothing
// running has changed yet.
struct LoadedReload {
  std::string log_level;
  std::shared_ptr<const signature::Verifier> verifier;
  std::optional<http::ServerCertificate> certificate;  // set when TLS ran at start and still does
  size_t signing_secrets = 0;
};

// `settings`: the file as it reads now; `startup`: the settings the server started with.
// Reads the secrets and the certificate `settings` names; the error (logged as
// reload_failed) says why nothing will change: systemd's status line says it.
Result<LoadedReload> load_reload(const config::Settings& startup, const config::Settings& settings);

// Swaps what `loaded` holds in: the log level, the verifier, the certificate for new
// connections (open ones keep theirs) and its notAfter into `tls_not_after_s` (/metrics);
// warns when the new certificate is expired, not yet valid or expires soon.
void apply_reload(LoadedReload loaded, http::WebhookEndpoint& webhook, http::Listener& listener,
                  std::atomic<int64_t>& tls_not_after_s);

}  // namespace hh::app
