#include "common/sha256.h"

#include <openssl/evp.h>

namespace hh {

Sha256Digest sha256(std::string_view bytes) {
  Sha256Digest digest{};
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr);
  return digest;
}

std::string sha256_hex(std::string_view bytes) {
  constexpr char kHex[] = "0123456789abcdef";
  const Sha256Digest digest = sha256(bytes);
  std::string hex;
  hex.reserve(digest.size() * 2);
  for (unsigned char byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xf]);
  }
  return hex;
}

}  // namespace hh
