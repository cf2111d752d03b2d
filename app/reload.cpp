#include "app/reload.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "app/certificate_validity.h"
#include "common/log.h"
#include "config/secrets.h"
#include "config/settings_reference.h"
#include "receiver/http/server_tls.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::app {

namespace {

// The console's admin sign-in is configured (load_secrets reads the file only then).
bool has_admin_token(const config::Settings& settings) {
  return settings.console.enabled && !settings.console.admin_token_file.empty();
}

// What a reload may apply of the tokens read now, given what runs: a read API or admin
// sign-in that `serve` did not start with stays off (keys_needing_restart names it).
ListenerTokens tokens_to_apply(const config::Settings& startup, const config::Secrets& secrets) {
  ListenerTokens tokens{.read_api = secrets.read_api_token,
                        .metrics = secrets.metrics_token,
                        .console_admin = secrets.console_admin_token};
  if (startup.read_api.token_file.empty()) tokens.read_api.clear();
  if (!has_admin_token(startup)) tokens.console_admin.clear();
  return tokens;
}

// The secret settings of `settings` whose file is read from $CREDENTIALS_DIRECTORY: systemd's
// copies, made at start, which no reload sees change.
std::vector<std::string> secrets_from_credentials(const config::Settings& settings) {
  std::vector<std::string> keys;
  const char* credentials = std::getenv("CREDENTIALS_DIRECTORY");
  if (credentials == nullptr || *credentials == '\0') return keys;
  const std::string folder = std::string(credentials) + "/";
  const auto note = [&](const std::string& key, const std::string& file) {
    if (!file.empty() && config::resolve_secret_path(file, settings.base_dir).starts_with(folder)) keys.push_back(key);
  };
  for (size_t i = 0; i < settings.signing_secret_files.size(); ++i) {
    note("signing_secret_files[" + std::to_string(i) + "]", settings.signing_secret_files[i]);
  }
  note("read_api.token_file", settings.read_api.token_file);
  note("metrics.token_file", settings.metrics.token_file);
  note("console.admin_token_file", settings.console.admin_token_file);
  note("service.api_key_file", settings.service.api_key_file);
  for (size_t i = 0; i < settings.service.teams.size(); ++i) {
    note("service.teams[" + std::to_string(i) + "].api_key_file", settings.service.teams[i].api_key_file);
  }
  for (size_t i = 0; i < settings.forwards.size(); ++i) {
    note("forward[" + std::to_string(i) + "].secret_file", settings.forwards[i].secret_file);
  }
  note("database_password_file", settings.database_password_file);
  return keys;
}

}  // namespace

std::vector<std::string> keys_needing_restart(const config::Settings& startup, const config::Settings& settings) {
  constexpr std::string_view kReloaded[] = {"signing_secret_files", "tls.cert_file",       "tls.key_file",
                                            "log_level",            "read_api.token_file", "metrics.token_file",
                                            "console.admin_token_file"};
  std::vector<std::string> keys;
  const auto before = config::settings_in_effect(startup);
  const auto now = config::settings_in_effect(settings);
  for (size_t i = 0; i < before.size() && i < now.size(); ++i) {
    if (std::find(std::begin(kReloaded), std::end(kReloaded), before[i].first) != std::end(kReloaded)) continue;
    if (before[i].second != now[i].second) keys.push_back(before[i].first);
  }
  // The certificate's files reload; turning TLS on or off does not (a listener's kind).
  if (startup.tls.cert_file.empty() != settings.tls.cert_file.empty()) keys.push_back("tls");
  // A token file reloads, and withdrawing one applies too; one that turns on what was off at
  // start does not: the read API's routes, or the console's actions, were never made.
  if (startup.read_api.token_file.empty() && !settings.read_api.token_file.empty()) {
    keys.push_back("read_api.token_file");
  }
  if (!has_admin_token(startup) && has_admin_token(settings) && startup.console.enabled) {
    keys.push_back("console.admin_token_file");
  }
  if (config::forward_blocks_in_effect(startup) != config::forward_blocks_in_effect(settings)) keys.push_back("forward");
  if (config::teams_in_effect(startup) != config::teams_in_effect(settings)) keys.push_back("service.teams");
  return keys;
}

std::vector<std::string> secrets_needing_restart(const config::Settings& startup, const config::Secrets& startup_secrets,
                                                 const config::Settings& settings, const config::Secrets& secrets) {
  // A changed path is keys_needing_restart's already; blocks and teams added, removed or
  // reordered are its "forward" and "service.teams", and then their secrets are not compared.
  std::vector<std::string> keys;
  if (startup.service.api_key_file == settings.service.api_key_file && startup_secrets.api_key != secrets.api_key) {
    keys.emplace_back("service.api_key_file");
  }
  if (config::teams_in_effect(startup) == config::teams_in_effect(settings)) {
    for (size_t i = 0; i < secrets.team_api_keys.size() && i < startup_secrets.team_api_keys.size(); ++i) {
      if (startup_secrets.team_api_keys[i] != secrets.team_api_keys[i]) {
        keys.push_back("service.teams[" + std::to_string(i) + "].api_key_file");
      }
    }
  }
  if (config::forward_blocks_in_effect(startup) == config::forward_blocks_in_effect(settings)) {
    for (size_t i = 0; i < secrets.forward_secrets.size() && i < startup_secrets.forward_secrets.size(); ++i) {
      if (startup_secrets.forward_secrets[i] != secrets.forward_secrets[i]) {
        keys.push_back("forward[" + std::to_string(i) + "].secret_file");
      }
    }
  }
  if (startup.database_password_file == settings.database_password_file &&
      startup_secrets.database_password != secrets.database_password) {
    keys.emplace_back("database_password_file");
  }
  return keys;
}

Result<LoadedReload> load_reload(const config::Settings& startup, const config::Secrets& startup_secrets,
                                 const config::Settings& settings) {
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
  return LoadedReload{settings.log_level,
                      tokens_to_apply(startup, *secrets),
                      secrets_from_credentials(settings),
                      std::move(*verifier),
                      std::move(certificate),
                      secrets->signing_secrets.size(),
                      secrets_needing_restart(startup, startup_secrets, settings, *secrets)};
}

namespace {

// Swaps the tokens in; returns the settings whose token changed, for the `reloaded` line.
std::string apply_tokens(const ListenerTokens& tokens, HttpFront& front, int64_t& console_sessions_ended) {
  std::string replaced;
  const auto note = [&replaced](bool changed, std::string_view setting) {
    if (changed) replaced += (replaced.empty() ? "" : ", ") + std::string(setting);
  };
  if (front.read_api) note(front.read_api->replace_token(tokens.read_api), "read_api.token_file");
  note(front.metrics_endpoint.replace_token(tokens.metrics), "metrics.token_file");
  if (front.console) {
    const auto sessions = front.console->sessions().replace_tokens(tokens.read_api, tokens.console_admin);
    note(sessions.admin_changed, "console.admin_token_file");
    console_sessions_ended = static_cast<int64_t>(sessions.sessions_ended);
  }
  return replaced;
}

}  // namespace

void apply_reload(LoadedReload loaded, HttpFront& front) {
  log::set_level(log::parse_level(loaded.log_level).value_or(log::Level::info));
  front.webhook->set_verifier(std::move(loaded.verifier));
  int64_t console_sessions_ended = 0;
  const std::string tokens_replaced = apply_tokens(loaded.tokens, front, console_sessions_ended);
  if (loaded.certificate) {
    front.listener->set_tls(loaded.certificate->context);  // new connections; open ones keep theirs
    front.tls_not_after_s.store(loaded.certificate->not_after_s, std::memory_order_relaxed);
    log::info("tls_reloaded")
        .str("subject", loaded.certificate->subject)
        .str("serial", loaded.certificate->serial)
        .str("not_after", loaded.certificate->not_after);
    // Swapped in all the same, as at start: refusing it would keep the previous
    // certificate, which a renewal gone wrong may have left expired too.
    warn_about_certificate_validity(*loaded.certificate);
  }
  // A token or key rotated in /etc/credstore is not in the copy read here: said, since the
  // `reloaded` line alone would let an operator believe the old one revoked.
  if (!loaded.secrets_from_credentials.empty()) {
    std::string keys;
    for (const std::string& key : loaded.secrets_from_credentials) keys += (keys.empty() ? "" : ", ") + key;
    log::info("reload_credential_copies")
        .str("keys", keys)
        .str("reason", "read from $CREDENTIALS_DIRECTORY, which systemd fills at start: a file changed in "
                       "/etc/credstore applies at the next restart");
  }
  log::info("reloaded")
      .num("signing_secrets", static_cast<int64_t>(loaded.signing_secrets))
      .str("tokens_replaced", tokens_replaced)
      .num("console_sessions_ended", console_sessions_ended);
}

}  // namespace hh::app
