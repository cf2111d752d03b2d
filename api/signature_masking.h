#pragma once
// Signature and credential header values masked for the console (docs/console.md,
// "Deliveries"): an operator sees which signatures a delivery carried, never the values,
// which the page has no use for and a browser should not hold.
#include <string>
#include <string_view>

namespace hh::api {

// `headers_json` (a JSON object of strings, as the inbox stores headers) with the value of
// every header whose name contains "signature" (any case) masked: each space-separated
// "vN,<base64>" becomes "vN,••••", anything else "••••"; and of every header that carries
// a credential (a name with "auth", "cookie", "session", "token", "secret", "password",
// "key", "credential", "jwt", "assertion", "oidc", "dpop": Authorization, Set-Cookie, X-Functions-Key…): "Bearer ••••" keeps the
// scheme, anything else "••••". Other headers are kept as they are. Text that is not such
// an object comes back as "{}" (nothing unmasked slips out).
std::string mask_signature_headers(std::string_view headers_json);

}  // namespace hh::api
