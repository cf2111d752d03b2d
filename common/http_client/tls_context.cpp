#include "common/http_client/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>

#include "common/file_text.h"

namespace hh::http_client {

namespace {

// Every certificate and CRL of a PEM text into the context's store, as load_verify_file
// reads a file (PEM_X509_INFO_read_bio): plain and TRUSTED certificates (`openssl x509
// -trustout`, some distributions' bundles) and CRLs alike; add_certificate_authority takes
// plain certificates only.
Result<void> add_trust_anchors(boost::asio::ssl::context& context, const std::string& pem) {
  using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
  const Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) return fail("out of memory");
  const auto free_infos = [](STACK_OF(X509_INFO) * infos) { sk_X509_INFO_pop_free(infos, X509_INFO_free); };
  const std::unique_ptr<STACK_OF(X509_INFO), decltype(free_infos)> infos(
      PEM_X509_INFO_read_bio(bio.get(), nullptr, nullptr, nullptr), free_infos);
  if (!infos) {
    const unsigned long error = ERR_get_error();
    ERR_clear_error();
    return fail(error ? ERR_reason_error_string(error) : "not PEM");
  }
  X509_STORE* store = SSL_CTX_get_cert_store(context.native_handle());
  int added = 0;
  for (int i = 0; i < sk_X509_INFO_num(infos.get()); ++i) {
    const X509_INFO* info = sk_X509_INFO_value(infos.get(), i);
    // A certificate already there (a bundle listing one twice) is no error.
    if (info->x509 && X509_STORE_add_cert(store, info->x509) == 1) ++added;
    if (info->crl && X509_STORE_add_crl(store, info->crl) == 1) ++added;
  }
  ERR_clear_error();
  if (added == 0) return fail("no certificate in it");
  return {};
}

}  // namespace

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
    if (auto added = add_trust_anchors(*context, *pem); !added) return fail(added, "cannot load " + ca_file);
  }
  // verify_peer: a handshake with an unverifiable chain fails.
  context->set_verify_mode(ssl::verify_peer, ec);
  if (ec) return fail("cannot require peer verification: " + ec.message());
  return context;
}

}  // namespace hh::http_client
