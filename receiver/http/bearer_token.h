#pragma once
// A bearer token check (RFC 6750: "Authorization: Bearer <token>"), for the read API
// and, when configured, /metrics.
//
// Both the configured token and the presented one are hashed with SHA-256 and the
// digests compared with CRYPTO_memcmp: the comparison takes the same time whatever the
// input, and equal-length digests hide the token's length too. Immutable after creation;
// safe to share between threads.
#include <array>
#include <string_view>

#include "receiver/http/http_types.h"

namespace hh::http {

// 401 with WWW-Authenticate, for a missing or wrong token.
Response bearer_refusal();

class BearerToken {
 public:
  explicit BearerToken(std::string_view token);
  // `authorization`: the header's value ("" when absent).
  bool accepts(std::string_view authorization) const;
  // The request's one Authorization header. Two are refused whatever they hold (RFC 9110
  // allows one): the first was checked, so a proxy that adds its own after the client's
  // let the client's through, or not, by their order.
  bool accepts(const Request& request) const;

 private:
  std::array<unsigned char, 32> digest_{};
};

}  // namespace hh::http
