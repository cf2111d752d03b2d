#pragma once
// POST on the webhook path: the delivery contract of spec §2.
//   verify signature (raw bytes) -> queue for the inbox's group commit -> 2xx after commit
// 401 for a bad signature, 503 + Retry-After when the inbox cannot take or commit it.
// Parsing the event is the processor's job, after the 2xx.
#include <atomic>
#include <memory>
#include <mutex>

#include "receiver/http/http_types.h"
#include "receiver/signature/webhook_signature.h"
#include "store/inbox_writer.h"

namespace hh::http {

struct WebhookStats {
  std::atomic<uint64_t> stored{0};
  std::atomic<uint64_t> duplicates{0};
  std::atomic<uint64_t> signature_failures{0};
  std::atomic<uint64_t> unavailable{0};  // 503s
};

class WebhookEndpoint {
 public:
  WebhookEndpoint(store::InboxWriter& writer, std::shared_ptr<const signature::Verifier> verifier,
                  int64_t retry_after_seconds);

  // Swaps the secrets (SIGHUP); requests in flight finish with the old ones.
  void set_verifier(std::shared_ptr<const signature::Verifier> verifier);

  net::awaitable<Response> handle(Request& request);
  const WebhookStats& stats() const { return stats_; }

 private:
  std::shared_ptr<const signature::Verifier> verifier() const;
  Response unavailable(std::string_view reason);

  store::InboxWriter& writer_;
  const int64_t retry_after_seconds_;
  mutable std::mutex verifier_mutex_;
  std::shared_ptr<const signature::Verifier> verifier_;  // GUARDED_BY(verifier_mutex_)
  WebhookStats stats_;
};

// The request headers as a JSON object {name: value}, names as received; a repeated
// header's values are joined with ", " (RFC 9110 §5.3).
std::string headers_as_json(const Request& request);

// The signature headers: svix-* when present, else webhook-*.
signature::SignedHeaders signed_headers(const Request& request);

}  // namespace hh::http
