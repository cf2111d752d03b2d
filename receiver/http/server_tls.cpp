#include "receiver/http/server_tls.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <ctime>

#include "common/file_text.h"
#include "config/secrets.h"

namespace hh::http {
namespace {

namespace ssl = boost::asio::ssl;

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct BnFree {
  void operator()(BIGNUM* bn) const { BN_free(bn); }
};
struct OpenSslFree {
  void operator()(char* text) const { OPENSSL_free(text); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

// An encrypted key would make OpenSSL prompt on the terminal: there is no one to answer.
int refuse_passphrase(char*, int, int, void*) { return 0; }

std::string last_openssl_error() {
  const unsigned long code = ERR_peek_last_error();
  if (code == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  return text;
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return size > 0 ? std::string(data, static_cast<size_t>(size)) : std::string();
}

// An ASN1_TIME as printed ("Jun  1 12:00:00 2026 GMT") and as Unix seconds (0 when unreadable).
void read_time(const ASN1_TIME* time, std::string& text, int64_t& unix_s) {
  BioPtr printed(BIO_new(BIO_s_mem()));
  if (printed && ASN1_TIME_print(printed.get(), time) == 1) text = bio_text(printed.get());
  std::tm utc{};
  if (ASN1_TIME_to_tm(time, &utc) == 1) unix_s = static_cast<int64_t>(::timegm(&utc));
}

std::string common_name(X509* cert) {
  X509_NAME* name = X509_get_subject_name(cert);
  const int at = name ? X509_NAME_get_index_by_NID(name, NID_commonName, -1) : -1;
  if (at < 0) return "(no CN)";
  unsigned char* utf8 = nullptr;
  const int size = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, at)));
  if (size < 0) return "(no CN)";
  std::string out(reinterpret_cast<char*>(utf8), static_cast<size_t>(size));
  OPENSSL_free(utf8);
  return "CN=" + out;
}

void describe(X509* cert, ServerCertificate& out) {
  if (!cert) return;
  BioPtr subject(BIO_new(BIO_s_mem()));
  if (subject && X509_NAME_print_ex(subject.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0) {
    out.subject = bio_text(subject.get());
  }
  std::unique_ptr<BIGNUM, BnFree> serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  if (serial) {
    std::unique_ptr<char, OpenSslFree> hex(BN_bn2hex(serial.get()));
    if (hex) out.serial = hex.get();
  }
  read_time(X509_get0_notBefore(cert), out.not_before, out.not_before_s);
  read_time(X509_get0_notAfter(cert), out.not_after, out.not_after_s);
}

// Clients check every certificate the server sends: an expired intermediate fails the
// handshake as an expired leaf does. The period served is the narrowest one over the chain.
void narrow_to_chain(SSL_CTX* context, ServerCertificate& out) {
  // Boost.Asio's use_certificate_chain adds them as "extra" chain certificates; this
  // returns those, or the certificate's own chain when there are none.
  STACK_OF(X509)* chain = nullptr;
  if (SSL_CTX_get_extra_chain_certs(context, &chain) != 1 || chain == nullptr) return;
  for (int i = 0; i < sk_X509_num(chain); ++i) {
    X509* cert = sk_X509_value(chain, i);
    std::string before_text, after_text;
    int64_t before_s = 0, after_s = 0;
    read_time(X509_get0_notBefore(cert), before_text, before_s);
    read_time(X509_get0_notAfter(cert), after_text, after_s);
    if (after_s != 0 && (out.not_after_s == 0 || after_s < out.not_after_s)) {
      out.not_after_s = after_s;
      out.not_after = after_text;
      out.not_after_of = common_name(cert);
    }
    if (before_s != 0 && before_s > out.not_before_s) {
      out.not_before_s = before_s;
      out.not_before = before_text;
      out.not_before_of = common_name(cert);
    }
  }
}

}  // namespace

Result<ServerCertificate> load_server_certificate(const std::string& cert_file, const std::string& key_file,
                                                  const std::string& base_dir) {
  const std::string cert_path = config::resolve_secret_path(cert_file, base_dir);
  const std::string key_path = config::resolve_secret_path(key_file, base_dir);
  auto cert_pem = read_regular_file_text(cert_path);
  if (!cert_pem) return fail(cert_pem, "tls.cert_file");
  auto key_pem = read_regular_file_text(key_path);
  if (!key_pem) return fail(key_pem, "tls.key_file");
  struct Cleanse {
    std::string& secret;
    ~Cleanse() { OPENSSL_cleanse(secret.data(), secret.size()); }
  } cleanse{*key_pem};

  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  // TLS 1.2+: the context's protocol floor, not just the option bits (which say nothing
  // about versions added later).
  if (SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
    return fail("tls: cannot require TLS 1.2");
  }
  context->set_options(ssl::context::default_workarounds | ssl::context::no_compression |
                       ssl::context::single_dh_use);
  SSL_CTX_set_options(context->native_handle(), SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  boost::system::error_code ec;
  context->use_certificate_chain(boost::asio::buffer(*cert_pem), ec);
  if (ec) return fail("tls.cert_file: " + cert_path + " is not a usable PEM certificate chain: " + ec.message());

  // Parsed apart from SSL_CTX_use_PrivateKey, so that "not a key" and "not this
  // certificate's key" get different messages.
  ERR_clear_error();
  BioPtr key_bio(BIO_new_mem_buf(key_pem->data(), static_cast<int>(key_pem->size())));
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, refuse_passphrase, nullptr) : nullptr);
  if (!key) {
    return fail("tls.key_file: " + key_path + " is not a usable PEM private key (passphrase-protected keys are "
                "not supported): " + last_openssl_error());
  }
  if (SSL_CTX_use_PrivateKey(context->native_handle(), key.get()) != 1 ||
      SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return fail("tls.key_file: " + key_path + " does not match the certificate in " + cert_path + " (" +
                last_openssl_error() + ")");
  }

  ServerCertificate out;
  out.context = std::move(context);
  out.cert_path = cert_path;
  describe(SSL_CTX_get0_certificate(out.context->native_handle()), out);
  narrow_to_chain(out.context->native_handle(), out);
  return out;
}

}  // namespace hh::http
