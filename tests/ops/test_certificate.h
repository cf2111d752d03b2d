#pragma once
// Self-signed certificates made at test time with OpenSSL's APIs (nothing committed): an
// EC P-256 key and an X.509 v3 certificate valid from an hour ago for a day, subject
// "CN=<common_name>", SAN IP:127.0.0.1, with the given serial.
#include <string>

namespace hh::test {

struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;
};

TestCertificate make_self_signed(const std::string& common_name, long serial);

}  // namespace hh::test
