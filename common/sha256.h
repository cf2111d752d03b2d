#pragma once
// SHA-256 (OpenSSL), as bytes and as lower-case hex.
#include <array>
#include <string>
#include <string_view>

namespace hh {

using Sha256Digest = std::array<unsigned char, 32>;

Sha256Digest sha256(std::string_view bytes);
std::string sha256_hex(std::string_view bytes);

}  // namespace hh
