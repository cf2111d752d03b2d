#pragma once
// Standard Webhooks / Svix signatures (spec §2, reference notes §4):
//   signature = base64(HMAC-SHA256(key, "{id}.{timestamp}.{raw body}"))
// where key is the base64-decoded part of a "whsec_…" secret. The signature header is a
// space-separated list of "v1,<base64>" entries; any entry matching any configured secret
// passes (rotation). Headers come as svix-id/-timestamp/-signature or, when those are
// absent, webhook-id/-timestamp/-signature. Verification runs over the raw bytes before
// any parsing and compares in constant time.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hh::signature {

// The three signature headers of one request, whichever family they came from.
struct SignedHeaders {
  std::string_view id;
  std::string_view timestamp;
  std::string_view signature;
};

enum class Verdict {
  ok,
  missing_headers,        // no id, timestamp or signature header
  malformed_id,           // empty or longer than kMaxMessageIdBytes
  malformed_timestamp,    // not an integer number of seconds
  timestamp_too_old,
  timestamp_in_future,
  malformed_signature,    // no parsable "v1,<base64>" entry
  no_matching_signature,
};

// Human-readable reason (for the 401 body and the log line).
std::string_view verdict_reason(Verdict verdict);

inline constexpr size_t kMaxMessageIdBytes = 256;

// Verifies signatures against a fixed set of secrets. Immutable after creation and safe to
// share between threads: each thread keeps its own keyed OpenSSL contexts.
class Verifier {
 public:
  // Each secret is "whsec_<base64>" (a bare base64 key is accepted too).
  static Result<std::shared_ptr<const Verifier>> create(std::span<const std::string> secrets,
                                                        int64_t tolerance_seconds);
  ~Verifier();

  Verdict verify(const SignedHeaders& headers, std::string_view body, int64_t now_seconds) const;
  // What can be checked before the body arrives: the headers are present, the id is
  // well-formed and the timestamp is an integer within the tolerance. verify() checks the
  // same, then the HMAC.
  Verdict check_headers(const SignedHeaders& headers, int64_t now_seconds) const;

  size_t secret_count() const { return keys_.size(); }

 private:
  Verifier(std::vector<std::string> keys, int64_t tolerance_seconds);
  std::vector<std::string> keys_;  // decoded HMAC keys
  int64_t tolerance_seconds_;
  uint64_t generation_;            // identifies this key set in per-thread context caches
};

// The "v1,<base64>" signature for one message (used by `healthhook sign`, replay --to,
// the load generator and the tests).
Result<std::string> sign(std::string_view secret, std::string_view id, std::string_view timestamp,
                         std::string_view body);

// Decodes "whsec_<base64>" (or bare base64) into the HMAC key.
Result<std::string> decode_secret(std::string_view secret);

}  // namespace hh::signature
