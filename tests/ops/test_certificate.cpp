#include "tests/ops/test_certificate.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <stdexcept>

namespace hh::test {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Free>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificate: ") + what + " failed");
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(size));
}

Owned<X509> read_certificate(const std::string& pem) {
  Owned<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Owned<X509> cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  check(cert != nullptr, "PEM_read_bio_X509");
  return cert;
}

Owned<EVP_PKEY> read_key(const std::string& pem) {
  Owned<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Owned<EVP_PKEY> key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  check(key != nullptr, "PEM_read_bio_PrivateKey");
  return key;
}

}  // namespace

TestCertificate make_self_signed(const std::string& common_name, long serial, ValidityPeriod validity) {
  return make_signed(common_name, serial, validity, nullptr);
}

TestCertificate make_signed(const std::string& common_name, long serial, ValidityPeriod validity,
                            const TestCertificate* issuer) {
  Owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EVP_EC_gen");

  Owned<X509> cert(X509_new());
  check(cert != nullptr, "X509_new");
  check(X509_set_version(cert.get(), 2) == 1, "X509_set_version");
  check(ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial) == 1, "serial");
  check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), validity.not_before_s) != nullptr, "notBefore");
  check(X509_gmtime_adj(X509_getm_notAfter(cert.get()), validity.not_after_s) != nullptr, "notAfter");
  X509_NAME* name = X509_get_subject_name(cert.get());
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()),
                                   -1, -1, 0) == 1,
        "subject");
  Owned<X509> issuer_cert(issuer ? read_certificate(issuer->cert_pem) : nullptr);
  Owned<EVP_PKEY> issuer_key(issuer ? read_key(issuer->key_pem) : nullptr);
  X509* signer = issuer ? issuer_cert.get() : cert.get();
  EVP_PKEY* signing_key = issuer ? issuer_key.get() : key.get();
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) == 1, "issuer");
  check(X509_set_pubkey(cert.get(), key.get()) == 1, "pubkey");

  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, signer, cert.get(), nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1"},
                            std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
    Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
    check(ext != nullptr && X509_add_ext(cert.get(), ext.get(), -1) == 1, "extension");
  }
  check(X509_sign(cert.get(), signing_key, EVP_sha256()) > 0, "X509_sign");

  TestCertificate out;
  Owned<BIO> cert_bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_X509(cert_bio.get(), cert.get()) == 1, "PEM_write_bio_X509");
  out.cert_pem = bio_text(cert_bio.get());
  Owned<BIO> key_bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "PEM_write_bio_PrivateKey");
  out.key_pem = bio_text(key_bio.get());
  return out;
}

void install_listener_certificate(const TempDir& dir, const TestCertificate& certificate) {
  dir.write("cert.pem", certificate.cert_pem);
  dir.write("key.pem", certificate.key_pem);
}

}  // namespace hh::test
