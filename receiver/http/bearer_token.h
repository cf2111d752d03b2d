#pragma once
// A bearer token check (RFC 6750: "Authorization: Bearer <token>"), for the read API
// and, when configured, /metrics.
//
// Both the configured token and the presented one are hashed with SHA-256 and the
// digests compared with CRYPTO_memcmp: the comparison takes the same time whatever the
// input, and equal-length digests hide the token's length too. A BearerToken is immutable
// after creation and safe to share between threads; a ReplaceableBearerToken is the one a
// reload (SIGHUP) swaps while requests are checked against it.
#include <array>
#include <mutex>
#include <optional>
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

// What a check does while no token is set: the read API refuses every request (its token
// was withdrawn by a reload; it is mounted only with one), /metrics admits them all (it
// needs a token only when `[metrics] token_file` is set).
enum class WithoutToken { refuse, admit };

// A bearer token a reload replaces: from the moment replace() returns, the new token is
// accepted and the old one refused (a request already checked goes on). Thread-safe.
class ReplaceableBearerToken {
 public:
  // `token` empty: none set (see WithoutToken).
  ReplaceableBearerToken(std::string_view token, WithoutToken without);
  // Returns whether the token changed (a rotation, or one set or withdrawn).
  bool replace(std::string_view token);
  bool accepts(const Request& request) const;

 private:
  const WithoutToken without_;
  mutable std::mutex mutex_;
  std::optional<BearerToken> token_;         // GUARDED_BY(mutex_)
  std::array<unsigned char, 32> digest_{};  // GUARDED_BY(mutex_): of the token set, to tell a change
};

}  // namespace hh::http
