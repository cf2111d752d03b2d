#include "receiver/http/bearer_token.h"

#include <boost/beast/core/string.hpp>  // iequals: ASCII case-insensitive

#include <openssl/crypto.h>

#include "common/sha256.h"

namespace hh::http {

Response bearer_refusal() {
  Response response = error_response(Status::unauthorized, "missing or wrong bearer token");
  response.set(bhttp::field::www_authenticate, "Bearer realm=\"healthhook\"");
  return response;
}

BearerToken::BearerToken(std::string_view token) : digest_(sha256(token)) {}

bool BearerToken::accepts(const Request& request) const {
  if (request.count(bhttp::field::authorization) > 1) return false;
  const auto authorization = request.find(bhttp::field::authorization);
  return accepts(authorization == request.end() ? std::string_view() : std::string_view(authorization->value()));
}

bool BearerToken::accepts(std::string_view authorization) const {
  constexpr std::string_view kScheme = "bearer ";  // the scheme is case-insensitive (RFC 9110 §11.1)
  if (authorization.size() <= kScheme.size() ||
      !boost::beast::iequals(authorization.substr(0, kScheme.size()), kScheme)) {
    return false;
  }
  std::string_view presented = authorization.substr(kScheme.size());
  while (!presented.empty() && presented.front() == ' ') presented.remove_prefix(1);
  while (!presented.empty() && presented.back() == ' ') presented.remove_suffix(1);
  if (presented.empty()) return false;
  const auto digest = sha256(presented);
  return CRYPTO_memcmp(digest.data(), digest_.data(), digest.size()) == 0;
}

ReplaceableBearerToken::ReplaceableBearerToken(std::string_view token, WithoutToken without) : without_(without) {
  replace(token);
}

bool ReplaceableBearerToken::replace(std::string_view token) {
  const auto digest = sha256(token);
  std::lock_guard lock(mutex_);
  const bool was_set = token_.has_value();
  const bool changed = was_set != !token.empty() ||
                       (was_set && CRYPTO_memcmp(digest.data(), digest_.data(), digest.size()) != 0);
  if (token.empty()) {
    token_.reset();
  } else {
    token_.emplace(token);
  }
  digest_ = digest;
  return changed;
}

bool ReplaceableBearerToken::accepts(const Request& request) const {
  std::optional<BearerToken> token;
  {
    std::lock_guard lock(mutex_);  // a copy (a digest): requests are hashed outside the lock
    token = token_;
  }
  if (!token) return without_ == WithoutToken::admit;
  return token->accepts(request);
}

}  // namespace hh::http
