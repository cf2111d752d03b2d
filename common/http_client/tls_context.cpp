#include "common/http_client/tls_context.h"

#include <openssl/ssl.h>

#include "common/file_text.h"

namespace hh::http_client {

Result<std::shared_ptr<boost::asio::ssl::context>> client_tls_context(const std::string& ca_file) {
  namespace ssl = boost::asio::ssl;
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  if (SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
    return fail("cannot require TLS 1.2");
  }
  boost::system::error_code ec;
  if (ca_file.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) return fail("cannot load the system trust store: " + ec.message());
  } else {
    // A regular file only, read once: a FIFO or a device in its place would hold whatever
    // loads it (serve's start, a fetch, check-config) until something writes to it.
    auto pem = read_regular_file_text(ca_file);
    if (!pem) return fail(pem.error_kind(), "cannot load " + pem.error());
    context->add_certificate_authority(boost::asio::buffer(*pem), ec);  // every certificate of a bundle
    if (ec) return fail("cannot load " + ca_file + ": " + ec.message());
  }
  // verify_peer: a handshake with an unverifiable chain fails.
  context->set_verify_mode(ssl::verify_peer, ec);
  if (ec) return fail("cannot require peer verification: " + ec.message());
  return context;
}

}  // namespace hh::http_client
