#pragma once
// The listener's TLS context (settings [tls] cert_file / key_file): TLS 1.2 or newer, no
// TLS compression, no renegotiation, server cipher preference; the certificate chain and
// the private key loaded from PEM files and checked to belong together.
//
// Paths are resolved like secret files (config/secrets.h): a relative name is looked up in
// $CREDENTIALS_DIRECTORY first (systemd LoadCredential=, the usual home of the key), then
// next to the config file. Keys protected by a passphrase are refused (there is no one to
// type it), rather than OpenSSL prompting on a terminal.
//
// Reload (SIGHUP): build a new context with this function and hand it to
// Listener::set_tls(); connections already open keep the context they started with.
#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"

namespace hh::http {

struct ServerCertificate {
  std::shared_ptr<boost::asio::ssl::context> context;
  std::string cert_path;   // the file it was read from (resolved), for messages
  std::string subject;     // e.g. "CN=hooks.example.com", for the log
  std::string serial;      // hex
  std::string not_before;  // e.g. "Jun  1 12:00:00 2025 GMT" (of the chain: see below)
  std::string not_after;   // e.g. "Jun  1 12:00:00 2026 GMT" (of the chain: see below)
  // The period the served chain is valid in, in Unix seconds (0 when OpenSSL could not read
  // the time): the earliest notAfter and the latest notBefore over the leaf and the chain
  // certificates sent with it. A chain outside it loads, but every client refuses the handshake.
  int64_t not_before_s = 0;
  int64_t not_after_s = 0;
  // Which chain certificate ends (or starts) the period, e.g. "CN=Example Intermediate";
  // "" when it is the leaf's own.
  std::string not_after_of;
  std::string not_before_of;
};

// Errors name the file and say what is wrong: unreadable, not PEM, or key and certificate
// not matching.
Result<ServerCertificate> load_server_certificate(const std::string& cert_file, const std::string& key_file,
                                                  const std::string& base_dir);

}  // namespace hh::http
