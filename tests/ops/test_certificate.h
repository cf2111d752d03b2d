#pragma once
// Self-signed certificates made at test time with OpenSSL's APIs (nothing committed): an
// EC P-256 key and an X.509 v3 certificate valid from an hour ago for a day (or the period
// given), subject "CN=<common_name>", SAN IP:127.0.0.1, with the given serial.
#include <string>

#include "tests/support/temp_dir.h"

namespace hh::test {

struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;
};

// notBefore and notAfter in seconds from now (negative: in the past).
struct ValidityPeriod {
  long not_before_s = -3600;
  long not_after_s = 86400;
};

TestCertificate make_self_signed(const std::string& common_name, long serial, ValidityPeriod validity = {});

// The same, signed by `issuer` (its key; issuer name from its subject) instead of itself:
// a leaf under an intermediate, an intermediate under a root.
TestCertificate make_signed(const std::string& common_name, long serial, ValidityPeriod validity,
                            const TestCertificate* issuer);

// The listener's certificate and key as cert.pem and key.pem in `dir`, which
// kListenerTlsToml names.
void install_listener_certificate(const TempDir& dir, const TestCertificate& certificate);
inline const std::string kListenerTlsToml = "[tls]\ncert_file = \"cert.pem\"\nkey_file = \"key.pem\"\n";

}  // namespace hh::test
