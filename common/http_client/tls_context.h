#pragma once
// The client TLS context every HTTPS connection uses (connection.h): TLS 1.2 or newer,
// the peer's certificate chain verified against the system trust store or a CA file.
// Host-name checks and SNI are per connection (connection.cpp), because they depend on
// the host.
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "common/result.h"

namespace hh::http_client {

// `ca_file` empty: the system trust store (OpenSSL's default paths, /etc/ssl/certs on
// Debian). Otherwise only the PEM certificates in that file are trusted. There is no
// option to turn verification off. An error says what failed, not which setting named
// the file: the caller adds that.
Result<std::shared_ptr<boost::asio::ssl::context>> client_tls_context(const std::string& ca_file);

}  // namespace hh::http_client
