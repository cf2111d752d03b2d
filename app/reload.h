#pragma once
// SIGHUP in `serve`: re-read what can change safely while running: the signing secrets and
// the TLS certificate and key (the log level is applied as soon as the file parses).
// Secrets and certificate are all loaded and checked before any is swapped, so a bad file
// changes none of them. Turning TLS on or off, and every other setting, needs a restart.
#include <string>
#include <vector>

#include "config/settings.h"
#include "receiver/http/listener.h"
#include "receiver/http/webhook_endpoint.h"

namespace hh::app {

// The keys whose value in `settings` differs from `startup` and that a reload does not
// apply (all but the signing secrets, the TLS files and log_level): they need a restart.
std::vector<std::string> keys_needing_restart(const config::Settings& startup, const config::Settings& settings);

// `settings`: the file as it reads now; `startup`: the settings the server started with.
// Returns why nothing was changed ("" when reloaded): systemd's status line says it.
std::string reload(const config::Settings& startup, const config::Settings& settings, http::WebhookEndpoint& webhook,
            http::Listener& listener);

}  // namespace hh::app
