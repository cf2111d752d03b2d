#include "api/signature_masking.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>

#include "common/json_writer.h"

namespace hh::api {
namespace {

constexpr std::string_view kMask = "\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2";  // ••••

// Any name with "signature" in it: svix-signature, webhook-signature, X-Hub-Signature-256,
// X-Signature-Ed25519 (a name ending in it let the GitHub-style ones through).
bool is_signature_header(std::string_view name) {
  constexpr std::string_view kPart = "signature";
  const auto found = std::search(name.begin(), name.end(), kPart.begin(), kPart.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == b;
  });
  return found != name.end();
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A header that carries a credential (a proxy's basic auth, a token a sender added): its
// value is of no use on the page either.
bool is_credential_header(std::string_view name) {
  const std::string n = lower(name);
  // Masking a header that held no credential costs the page a value; showing one that did
  // costs the credential: names are matched widely ("key" takes X-Functions-Key,
  // Ocp-Apim-Subscription-Key, Private-Key, an idempotency key too).
  // "jwt", "assertion", "oidc", "dpop": proxies' identity headers (Cf-Access-Jwt-Assertion,
  // X-Amzn-Oidc-Data, DPoP) carry bearer tokens under names of their own.
  for (std::string_view part : {"auth", "cookie", "session", "token", "secret", "password", "passwd", "key",
                                "credential", "jwt", "assertion", "oidc", "dpop"}) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

// An authentication scheme of the HTTP registry (and the few common ones outside it), any case.
bool is_auth_scheme(std::string_view word) {
  for (std::string_view scheme : {"basic", "bearer", "concealed", "digest", "dpop", "gnap", "hoba", "mutual",
                                  "negotiate", "ntlm", "oauth", "privatetoken", "scram-sha-1", "scram-sha-256",
                                  "vapid", "token", "aws4-hmac-sha256"}) {
    if (lower(word) == scheme) return true;
  }
  return false;
}

// "Bearer abc…" → "Bearer ••••": the scheme says what kind of credential it was. Only a
// known scheme is kept: the first word of anything else may be the credential itself
// ("key1, key2" for a header sent twice, a cookie).
std::string masked_credential(std::string_view value) {
  const size_t space = value.find(' ');
  if (space == std::string_view::npos || !is_auth_scheme(value.substr(0, space))) return std::string(kMask);
  return std::string(value.substr(0, space + 1)) + std::string(kMask);
}

std::string masked_value(std::string_view value) {
  std::string out;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t end = std::min(value.find(' ', start), value.size());
    const std::string_view part = value.substr(start, end - start);
    if (!part.empty()) {
      if (!out.empty()) out.push_back(' ');
      // "v1,<base64>": the version is kept, anything else before a comma is not.
      const size_t comma = part.find(',');
      const bool version = comma >= 2 && comma != std::string_view::npos && part[0] == 'v' &&
                           std::all_of(part.begin() + 1, part.begin() + static_cast<std::ptrdiff_t>(comma),
                                       [](char c) { return c >= '0' && c <= '9'; });
      if (version) out.append(part.substr(0, comma + 1));
      out.append(kMask);
    }
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string mask_signature_headers(std::string_view headers_json) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(headers_json);
  simdjson::dom::object object;
  if (parser.parse(padded).get_object().get(object)) return "{}";
  std::string out = "{";
  bool first = true;
  for (auto [key, value] : object) {
    std::string_view text;
    if (value.get_string().get(text)) continue;  // headers are strings; anything else is left out
    if (!first) out.push_back(',');
    first = false;
    json::append_string(out, key);
    out.push_back(':');
    if (is_signature_header(key)) {
      json::append_string(out, masked_value(text));
    } else if (is_credential_header(key)) {
      json::append_string(out, masked_credential(text));
    } else {
      json::append_string(out, text);
    }
  }
  out.push_back('}');
  return out;
}

}  // namespace hh::api
