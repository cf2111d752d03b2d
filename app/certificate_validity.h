#pragma once
// Whether the listener's certificate is within its validity period, and how long it has
// left (spec §8). A certificate past its notAfter, or before its notBefore, loads: serve
// started with an info line and every client's handshake failed (black-box finding). serve
// warns at start and at each reload and goes on serving (a renewed file and a reload mend
// it without a restart); check-config refuses it and warns about one that ends soon.
#include <cstdint>
#include <string>

#include "receiver/http/server_tls.h"

namespace hh::app {

// Below this many days left the certificate is said to expire soon: time to renew before
// clients start failing.
inline constexpr int64_t kCertificateRenewalDays = 14;

struct CertificateValidity {
  enum class Verdict { valid, expires_soon, expired, not_yet_valid };
  Verdict verdict = Verdict::valid;
  std::string event;   // serve's warning ("tls_certificate_expired", …); "" when valid
  std::string detail;  // "tls.cert_file: PATH: the certificate expired on …"; "" when valid
};

// The certificate's verdict at `now_s` (Unix seconds).
CertificateValidity certificate_validity(const http::ServerCertificate& certificate, int64_t now_s);

// serve: logs the verdict now as a warning (with the file, notBefore and notAfter) unless
// the certificate is valid for longer than kCertificateRenewalDays.
void warn_about_certificate_validity(const http::ServerCertificate& certificate);

}  // namespace hh::app
