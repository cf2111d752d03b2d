#pragma once
// The client TLS context: TLS 1.2 or newer, the peer's certificate chain verified against
// the system trust store or service.ca_file. Host-name checks and SNI are per connection
// (https_client.cpp), because they depend on the host.
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "common/result.h"

namespace hh::fetcher {

// `ca_file` empty: the system trust store (OpenSSL's default paths, /etc/ssl/certs on
// Debian). Otherwise only the PEM certificates in that file are trusted.
Result<std::shared_ptr<boost::asio::ssl::context>> make_client_tls_context(const std::string& ca_file);

}  // namespace hh::fetcher
