#pragma once
// Standard base64 (RFC 4648 §4, with padding) on top of OpenSSL's EVP block coders.
#include <optional>
#include <string>
#include <string_view>

namespace hh {

std::string base64_encode(std::string_view bytes);
// Strict: rejects characters outside the alphabet, bad padding and whitespace.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace hh
