#pragma once
// POST on the webhook path: the delivery contract of spec §2.
//   head: signature headers present, timestamp within the tolerance (check_head: 401
//         before the body is read)
//   body: verify the HMAC over the raw bytes -> queue for the inbox's group commit ->
//         2xx after the commit
// 401 for a bad signature (at once: the session decides whether it waits, session.h),
// 413 for a delivery too large for the store, 503 + Retry-After when the inbox cannot take
// or commit it before the request's deadline. Refusals are
// counted (refusals.h), never logged one by one. Parsing the event is the processor's
// job, after the 2xx.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "receiver/http/http_types.h"
#include "receiver/http/refusals.h"
#include "receiver/http/router.h"
#include "receiver/signature/signature_headers.h"
#include "receiver/signature/webhook_signature.h"
#include "store/inbox_writer.h"

namespace hh::http {

struct WebhookStats {
  std::atomic<uint64_t> stored{0};
  std::atomic<uint64_t> duplicates{0};
  std::atomic<uint64_t> signature_failures{0};
  std::atomic<uint64_t> too_large{0};    // 413: too large for a row of the store
  std::atomic<uint64_t> unavailable{0};  // 503s
  // Unix ms of the last delivery whose signature verified (whatever was answered then);
  // the endpoint's construction until the first one. The silence alarm reads it
  // (metrics/delivery_alarms.h).
  std::atomic<int64_t> last_verified_ms{0};
  // The same per [[service.teams]] entry (WebhookOptions::teams, in that order), for
  // deliveries whose $.team_id names it.
  std::vector<std::string> team_ids;
  std::unique_ptr<std::atomic<int64_t>[]> team_last_verified_ms;
};

struct WebhookOptions {
  int64_t retry_after_seconds = 5;
  std::chrono::milliseconds request_deadline{10000};  // from the complete request to its answer
  Refusals* refusals = nullptr;                        // may be null (tests)
  std::vector<std::string> teams{};  // team ids with a silence clock of their own; none: $.team_id is not read
};

class WebhookEndpoint {
 public:
  WebhookEndpoint(store::InboxWriter& writer, std::shared_ptr<const signature::Verifier> verifier,
                  WebhookOptions options);

  // Swaps the secrets (SIGHUP); requests in flight finish with the old ones.
  void set_verifier(std::shared_ptr<const signature::Verifier> verifier);

  // Registers POST `path` with its head check.
  void mount(Router& router, const std::string& path);

  // Before the body: nullopt, or the 401 that refuses the request.
  std::optional<Response> check_head(const RequestHead& head);
  net::awaitable<Response> handle(Request& request);
  const WebhookStats& stats() const { return stats_; }

 private:
  std::shared_ptr<const signature::Verifier> verifier() const;
  Response unauthorized(signature::Verdict verdict);
  Response unavailable(std::string_view reason);
  void note_team(const std::optional<std::string>& team_id, int64_t received_at_ms);

  store::InboxWriter& writer_;
  const WebhookOptions options_;
  mutable std::mutex verifier_mutex_;
  std::shared_ptr<const signature::Verifier> verifier_;  // GUARDED_BY(verifier_mutex_)
  WebhookStats stats_;
};

// The request headers as a JSON object {name: value}, names as received. A repeated
// header's values are joined with ", " (RFC 9110 §5.3), but a repeated signature header's
// with " ": its entries are a space-separated list, so replay reads the same list.
std::string headers_as_json(const Request& request);

// The signature headers of a request head, chosen as spec §2 says (signature_headers.h).
signature::SignatureHeaderSet signature_headers_of(const RequestHead& head);

}  // namespace hh::http
