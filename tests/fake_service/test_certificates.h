#pragma once
// Certificates for the fake service's HTTPS, generated at test time with OpenSSL 3 (no
// key is ever committed): a CA, and a server certificate for given names signed by it.
// EC P-256 keys, SHA-256 signatures, valid from an hour ago for a week.
#include <string>
#include <vector>

namespace hh::fake {

struct CertificateAuthority {
  std::string cert_pem;  // the trust anchor: give this to the client (service.ca_file)
  std::string key_pem;
};

struct ServerCertificate {
  std::string cert_pem;
  std::string key_pem;
};

CertificateAuthority make_certificate_authority(const std::string& common_name);

// subjectAltName = the DNS names and IP addresses given; extendedKeyUsage serverAuth.
ServerCertificate make_server_certificate(const CertificateAuthority& ca, const std::vector<std::string>& dns_names,
                                          const std::vector<std::string>& ip_addresses);

}  // namespace hh::fake
