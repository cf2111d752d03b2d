#include "fetcher/tls_context.h"

#include <openssl/ssl.h>

namespace hh::fetcher {

Result<std::shared_ptr<boost::asio::ssl::context>> make_client_tls_context(const std::string& ca_file) {
  namespace ssl = boost::asio::ssl;
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  if (SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
    return fail("TLS: cannot require TLS 1.2");
  }
  boost::system::error_code ec;
  if (ca_file.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) return fail("TLS: cannot load the system trust store: " + ec.message());
  } else {
    context->load_verify_file(ca_file, ec);
    if (ec) return fail("service.ca_file: cannot load " + ca_file + ": " + ec.message());
  }
  // verify_peer: a handshake with an unverifiable chain fails; there is no switch to
  // turn this off.
  context->set_verify_mode(ssl::verify_peer, ec);
  if (ec) return fail("TLS: " + ec.message());
  return context;
}

}  // namespace hh::fetcher
