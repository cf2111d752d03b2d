#include "receiver/signature/webhook_signature.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <atomic>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "common/base64.h"

namespace hh::signature {
namespace {

constexpr size_t kMacBytes = 32;  // SHA-256

struct MacFree {
  void operator()(EVP_MAC* mac) const { EVP_MAC_free(mac); }
};
struct MacCtxFree {
  void operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
};
using MacCtx = std::unique_ptr<EVP_MAC_CTX, MacCtxFree>;

// Fetched once: OpenSSL 3's one-shot HMAC() fetches the algorithm on every call, which
// costs more than the MAC of a small body; keyed contexts are re-initialised per message.
EVP_MAC* hmac_algorithm() {
  static const std::unique_ptr<EVP_MAC, MacFree> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) throw std::runtime_error("OpenSSL has no HMAC");
  return mac.get();
}

MacCtx keyed_context(std::string_view key) {
  MacCtx ctx(EVP_MAC_CTX_new(hmac_algorithm()));
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  if (!ctx || EVP_MAC_init(ctx.get(), reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) != 1) {
    throw std::runtime_error("cannot key HMAC-SHA256");
  }
  return ctx;
}

// Computes the MAC of "{id}.{timestamp}.{body}" with an already keyed context.
bool compute(EVP_MAC_CTX* ctx, std::string_view id, std::string_view timestamp, std::string_view body,
             unsigned char (&out)[kMacBytes]) {
  const auto update = [ctx](std::string_view part) {
    return EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(part.data()), part.size()) == 1;
  };
  size_t length = 0;
  return EVP_MAC_init(ctx, nullptr, 0, nullptr) == 1 && update(id) && update(".") && update(timestamp) &&
         update(".") && update(body) && EVP_MAC_final(ctx, out, &length, sizeof out) == 1 && length == kMacBytes;
}

// Per-thread keyed contexts for the verifier generation last used on this thread.
struct ThreadContexts {
  uint64_t generation = 0;
  std::vector<MacCtx> contexts;
};
thread_local ThreadContexts t_contexts;

std::atomic<uint64_t> g_next_generation{1};

}  // namespace

std::string_view verdict_reason(Verdict verdict) {
  switch (verdict) {
    case Verdict::ok: return "ok";
    case Verdict::missing_headers: return "missing signature headers (svix-id/-timestamp/-signature or webhook-*)";
    case Verdict::malformed_id: return "malformed message id";
    case Verdict::malformed_timestamp: return "malformed signature timestamp";
    case Verdict::timestamp_too_old: return "signature timestamp too old";
    case Verdict::timestamp_in_future: return "signature timestamp too far in the future";
    case Verdict::malformed_signature: return "malformed signature header";
    case Verdict::no_matching_signature: return "no matching signature";
  }
  return "invalid signature";
}

Result<std::string> decode_secret(std::string_view secret) {
  if (secret.starts_with("whsec_")) secret.remove_prefix(6);
  auto key = base64_decode(secret);
  if (!key || key->empty()) return fail("signing secret is not whsec_<base64>");
  return std::move(*key);
}

Verifier::Verifier(std::vector<std::string> keys, int64_t tolerance_seconds)
    : keys_(std::move(keys)),
      tolerance_seconds_(tolerance_seconds),
      generation_(g_next_generation.fetch_add(1)) {}

Verifier::~Verifier() = default;

Result<std::shared_ptr<const Verifier>> Verifier::create(std::span<const std::string> secrets,
                                                         int64_t tolerance_seconds) {
  if (secrets.empty()) return fail("no signing secret configured");
  std::vector<std::string> keys;
  for (size_t i = 0; i < secrets.size(); ++i) {
    auto key = decode_secret(secrets[i]);
    if (!key) return fail(key, "secret " + std::to_string(i + 1));
    keys.push_back(std::move(*key));
  }
  return std::shared_ptr<const Verifier>(new Verifier(std::move(keys), tolerance_seconds));
}

namespace {

// Decode every "v1," entry once; other versions (v1a = ed25519) are skipped. A sender has a
// few entries during a rotation; past kMaxCandidates the rest are ignored (a bound on the
// work a forged header buys; each entry costs a base64 decode and a comparison per key).
constexpr size_t kMaxCandidates = 64;
using Candidates = unsigned char[kMaxCandidates][kMacBytes];

size_t read_candidates(std::string_view signature, Candidates& candidates) {
  size_t candidate_count = 0;
  std::string_view rest = signature;
  while (!rest.empty() && candidate_count < kMaxCandidates) {
    const size_t space = rest.find(' ');
    std::string_view entry = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    // A repeated signature header joined as one field (RFC 9110 §5.3: ", ") leaves a comma
    // at the end of all but the last entry.
    if (entry.ends_with(',')) entry.remove_suffix(1);
    if (!entry.starts_with("v1,") || entry.size() != 3 + 44) continue;  // base64 of 32 bytes is 44 chars
    auto decoded = base64_decode(entry.substr(3));
    if (!decoded || decoded->size() != kMacBytes) continue;
    std::memcpy(candidates[candidate_count++], decoded->data(), kMacBytes);
  }
  return candidate_count;
}

// The checks of everything but the signature itself: headers present, id length, timestamp
// an integer within the tolerance.
Verdict check_id_and_timestamp(const SignedHeaders& headers, int64_t now_seconds, int64_t tolerance_seconds) {
  if (headers.id.empty() || headers.timestamp.empty() || headers.signature.empty()) return Verdict::missing_headers;
  if (headers.id.size() > kMaxMessageIdBytes) return Verdict::malformed_id;
  int64_t timestamp = 0;
  const auto* ts_end = headers.timestamp.data() + headers.timestamp.size();
  auto [ptr, ec] = std::from_chars(headers.timestamp.data(), ts_end, timestamp);
  if (ec != std::errc{} || ptr != ts_end) return Verdict::malformed_timestamp;
  if (timestamp < now_seconds - tolerance_seconds) return Verdict::timestamp_too_old;
  if (timestamp > now_seconds + tolerance_seconds) return Verdict::timestamp_in_future;
  return Verdict::ok;
}

}  // namespace

Verdict Verifier::check_headers(const SignedHeaders& headers, int64_t now_seconds) const {
  if (const Verdict early = check_id_and_timestamp(headers, now_seconds, tolerance_seconds_); early != Verdict::ok) {
    return early;
  }
  // A header with no entry that could match is refused with the head, before a body is read.
  Candidates candidates;
  if (read_candidates(headers.signature, candidates) == 0) return Verdict::malformed_signature;
  return Verdict::ok;
}

Verdict Verifier::verify(const SignedHeaders& headers, std::string_view body, int64_t now_seconds) const {
  if (const Verdict early = check_id_and_timestamp(headers, now_seconds, tolerance_seconds_); early != Verdict::ok) {
    return early;
  }
  Candidates candidates;
  const size_t candidate_count = read_candidates(headers.signature, candidates);
  if (candidate_count == 0) return Verdict::malformed_signature;

  ThreadContexts& cache = t_contexts;
  if (cache.generation != generation_) {
    cache.contexts.clear();
    for (const auto& key : keys_) cache.contexts.push_back(keyed_context(key));
    cache.generation = generation_;
  }
  for (const auto& ctx : cache.contexts) {
    unsigned char mac[kMacBytes];
    if (!compute(ctx.get(), headers.id, headers.timestamp, body, mac)) continue;
    for (size_t i = 0; i < candidate_count; ++i) {
      if (CRYPTO_memcmp(mac, candidates[i], kMacBytes) == 0) return Verdict::ok;
    }
  }
  return Verdict::no_matching_signature;
}

Result<std::string> sign(std::string_view secret, std::string_view id, std::string_view timestamp,
                         std::string_view body) {
  auto key = decode_secret(secret);
  if (!key) return fail(key);
  MacCtx ctx = keyed_context(*key);
  unsigned char mac[kMacBytes];
  if (!compute(ctx.get(), id, timestamp, body, mac)) return fail("HMAC failed");
  return "v1," + base64_encode(std::string_view(reinterpret_cast<const char*>(mac), kMacBytes));
}

}  // namespace hh::signature
