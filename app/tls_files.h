#pragma once
// The TLS files the settings name (tls.cert_file and key_file, service.ca_file, each
// [[forward]] ca_file), loaded as serve loads them. serve checks them before it opens its
// store, so a bad file is refused with nothing created or migrated; check-config says the
// same.
#include <optional>

#include "common/result.h"
#include "config/settings.h"
#include "receiver/http/server_tls.h"

namespace hh::app {

// The first file that does not load, named by its key ("service.ca_file: …"); else the
// listener's certificate as loaded, when [tls] is set (its validity is the caller's to
// judge: app/certificate_validity.h).
Result<std::optional<http::ServerCertificate>> check_tls_files(const config::Settings& settings);

}  // namespace hh::app
