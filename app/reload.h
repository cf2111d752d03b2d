#pragma once
// SIGHUP in `serve`: re-read what can change safely while running: the signing secrets,
// the tokens requests are checked against (the read API's, /metrics', the console's admin
// token), the TLS certificate and key, and the log level. All are loaded and checked before
// any is swapped in, so a bad file changes none of them. Turning TLS on or off, the read API
// or the console's admin sign-in on, and every other setting, need a restart; so do the
// other secret files (API keys, forward secrets, the database password), which a reload
// reads and names when their contents changed.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/http_front.h"
#include "common/result.h"
#include "config/secrets.h"
#include "config/settings.h"
#include "receiver/http/listener.h"
#include "receiver/http/server_tls.h"
#include "receiver/http/webhook_endpoint.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::app {

// The keys whose value in `settings` differs from `startup` and that a reload does not
// apply (all but the signing secrets, the token files, the TLS files and log_level): they
// need a restart. A token file set where none was at start is one: the read API, or the
// console's actions, are not there to take it.
std::vector<std::string> keys_needing_restart(const config::Settings& startup, const config::Settings& settings);

// The secret files a reload does not apply whose contents changed since `startup_secrets`
// were read: the service's and the teams' API keys, each [[forward]] block's secret, the
// database password. Named as load_secrets' errors name them ("forward[0].secret_file"); a
// changed path, or a block or team added, removed or reordered, is keys_needing_restart's
// (the key, "forward", "service.teams"), not repeated here.
std::vector<std::string> secrets_needing_restart(const config::Settings& startup, const config::Secrets& startup_secrets,
                                                 const config::Settings& settings, const config::Secrets& secrets);

// The tokens requests are checked against, as their files read now ("": none).
struct ListenerTokens {
  std::string read_api;       // read_api.token_file: the read API's, and the console's read-only sign-in
  std::string metrics;        // metrics.token_file
  std::string console_admin;  // console.admin_token_file (with console.enabled)
};

// What a reload swaps in, every file read and checked. Its parts are only loaded: nothing
// running has changed yet.
struct LoadedReload {
  std::string log_level;
  ListenerTokens tokens;
  // The secret settings read from $CREDENTIALS_DIRECTORY: systemd's copies, made at start,
  // which a reload cannot see change (config/secrets.h).
  std::vector<std::string> secrets_from_credentials;
  std::shared_ptr<const signature::Verifier> verifier;
  std::optional<http::ServerCertificate> certificate;  // set when TLS ran at start and still does
  size_t signing_secrets = 0;
  std::vector<std::string> secrets_needing_restart;  // secrets_needing_restart(), for reload_needs_restart
};

// `settings`: the file as it reads now; `startup`: the settings the server started with.
// Reads the secrets and the certificate `settings` names; the error (logged as
// reload_failed) says why nothing will change: systemd's status line says it.
Result<LoadedReload> load_reload(const config::Settings& startup, const config::Secrets& startup_secrets,
                                 const config::Settings& settings);

// Swaps what `loaded` holds in: the log level, the verifier, the tokens (a token replaced
// or withdrawn is refused from then on, and the console sessions signed in with it end),
// the certificate for new connections (open ones keep theirs) and its notAfter into
// `front.tls_not_after_s` (/metrics); warns when the new certificate is expired, not yet
// valid or expires soon.
void apply_reload(LoadedReload loaded, HttpFront& front);

}  // namespace hh::app
