#include "tests/fake_service/test_certificates.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <functional>
#include <memory>
#include <stdexcept>

namespace hh::fake {
namespace {

// RAII owners for the OpenSSL objects (style.md: unique_ptr with deleters).
struct KeyFree { void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); } };
struct CertFree { void operator()(X509* p) const { X509_free(p); } };
struct BioFree { void operator()(BIO* p) const { BIO_free(p); } };
struct ExtFree { void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); } };
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;
using Bio = std::unique_ptr<BIO, BioFree>;
using Ext = std::unique_ptr<X509_EXTENSION, ExtFree>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificate: ") + what + " failed");
}

Key new_key() {
  Key key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EVP_EC_gen");
  return key;
}

std::string pem_of(const std::function<int(BIO*)>& write) {
  Bio bio(BIO_new(BIO_s_mem()));
  check(bio && write(bio.get()) == 1, "PEM write");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

Key read_key(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  check(key != nullptr, "reading the CA key");
  return key;
}

Cert read_cert(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  check(cert != nullptr, "reading the CA certificate");
  return cert;
}

Cert new_cert(EVP_PKEY* key, const std::string& common_name) {
  Cert cert(X509_new());
  check(cert != nullptr, "X509_new");
  check(X509_set_version(cert.get(), 2) == 1, "X509_set_version");
  unsigned char serial[16];
  check(RAND_bytes(serial, sizeof serial) == 1, "RAND_bytes");
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  check(bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get())) != nullptr, "serial");
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7 * 24 * 3600);
  check(X509_set_pubkey(cert.get(), key) == 1, "X509_set_pubkey");
  X509_NAME* name = X509_get_subject_name(cert.get());
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0) == 1,
        "subject");
  return cert;
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Ext ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  check(ext != nullptr, "extension");
  check(X509_add_ext(cert, ext.get(), -1) == 1, "X509_add_ext");
}

}  // namespace

CertificateAuthority make_certificate_authority(const std::string& common_name) {
  Key key = new_key();
  Cert cert = new_cert(key.get(), common_name);
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) == 1, "issuer");
  add_extension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_extension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  add_extension(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
  check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "X509_sign");
  CertificateAuthority ca;
  ca.cert_pem = pem_of([&](BIO* bio) { return PEM_write_bio_X509(bio, cert.get()); });
  ca.key_pem = pem_of([&](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  return ca;
}

ServerCertificate make_server_certificate(const CertificateAuthority& ca, const std::vector<std::string>& dns_names,
                                          const std::vector<std::string>& ip_addresses) {
  Key ca_key = read_key(ca.key_pem);
  Cert ca_cert = read_cert(ca.cert_pem);
  Key key = new_key();
  const std::string common_name = dns_names.empty() ? ip_addresses.at(0) : dns_names.front();
  Cert cert = new_cert(key.get(), common_name);
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get())) == 1, "issuer");
  std::string alt_names;
  for (const auto& dns : dns_names) alt_names += (alt_names.empty() ? "" : ",") + std::string("DNS:") + dns;
  for (const auto& ip : ip_addresses) alt_names += (alt_names.empty() ? "" : ",") + std::string("IP:") + ip;
  add_extension(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature");
  add_extension(cert.get(), ca_cert.get(), NID_ext_key_usage, "serverAuth");
  add_extension(cert.get(), ca_cert.get(), NID_subject_alt_name, alt_names);
  add_extension(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid:always");
  check(X509_sign(cert.get(), ca_key.get(), EVP_sha256()) > 0, "X509_sign");
  ServerCertificate server;
  server.cert_pem = pem_of([&](BIO* bio) { return PEM_write_bio_X509(bio, cert.get()); });
  server.key_pem = pem_of([&](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  return server;
}

}  // namespace hh::fake
