#include "app/certificate_validity.h"

#include "common/log.h"
#include "common/timestamp.h"

namespace hh::app {

CertificateValidity certificate_validity(const http::ServerCertificate& certificate, int64_t now_s) {
  constexpr int64_t kDay = 24 * 60 * 60;
  const std::string file = "tls.cert_file: " + certificate.cert_path + ": ";
  // The leaf keeps the wording docs/troubleshooting.md quotes; a chain certificate is named.
  const auto which = [](const std::string& of) {
    return of.empty() ? std::string("the certificate") : "the chain certificate " + of;
  };
  CertificateValidity out;
  // 0: a time OpenSSL could not read (server_tls.h); nothing is said about it.
  if (certificate.not_after_s != 0 && now_s >= certificate.not_after_s) {
    out.verdict = CertificateValidity::Verdict::expired;
    out.event = "tls_certificate_expired";
    out.detail = file + which(certificate.not_after_of) + " expired on " + certificate.not_after +
                 " (notAfter): every client's TLS handshake fails; renew it";
  } else if (certificate.not_before_s != 0 && now_s < certificate.not_before_s) {
    out.verdict = CertificateValidity::Verdict::not_yet_valid;
    out.event = "tls_certificate_not_yet_valid";
    out.detail = file + which(certificate.not_before_of) + " is not valid before " + certificate.not_before +
                 " (notBefore; notAfter " + certificate.not_after +
                 "): every client's TLS handshake fails until then; check the clock";
  } else if (certificate.not_after_s != 0 && certificate.not_after_s - now_s < kCertificateRenewalDays * kDay) {
    const int64_t days = (certificate.not_after_s - now_s) / kDay;
    out.verdict = CertificateValidity::Verdict::expires_soon;
    out.event = "tls_certificate_expires_soon";
    out.detail = file + which(certificate.not_after_of) + " expires on " + certificate.not_after + " (notAfter), " +
                 (days == 0 ? std::string("within a day") : "in " + std::to_string(days) + " days") +
                 ": renew it, then reload";
  }
  return out;
}

void warn_about_certificate_validity(const http::ServerCertificate& certificate) {
  const CertificateValidity validity = certificate_validity(certificate, unix_now_ms() / 1000);
  if (validity.verdict == CertificateValidity::Verdict::valid) return;
  log::warn(validity.event)
      .str("file", certificate.cert_path)
      .str("not_before", certificate.not_before)
      .str("not_after", certificate.not_after)
      .str("detail", validity.detail);
}

}  // namespace hh::app
