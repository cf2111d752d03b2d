#include "receiver/http/webhook_endpoint.h"

#include <algorithm>
#include <chrono>

#include "common/json_writer.h"
#include "common/log.h"
#include "common/uuid_text.h"
#include "events/envelope_peek.h"
#include "receiver/http/commit_wait.h"
#include "common/timestamp.h"

namespace hh::http {
namespace {

}  // namespace

signature::SignatureHeaderSet signature_headers_of(const RequestHead& head) {
  signature::SignatureHeaderSet set;
  for (const auto& field : head) set.add(field.name_string(), field.value());
  return set;
}

std::string headers_as_json(const Request& request) {
  // First-seen order; a repeated header is written once, at its first position, with all
  // its values joined. Beast keeps fields of one name together in a multiset, so
  // equal_range finds the repeats without a copy of the headers.
  std::string out = "{";
  out.reserve(512);
  for (auto it = request.begin(); it != request.end(); ++it) {
    const std::string_view name = it->name_string();
    const auto [first, last] = request.equal_range(name);
    if (&*first != &*it) continue;  // a repeat, already written with the first one
    if (out.size() > 1) out.push_back(',');
    json::append_string(out, name);
    out.push_back(':');
    if (std::next(first) == last) {
      json::append_string(out, it->value());
      continue;
    }
    const std::string_view separator = signature::SignatureHeaderSet::is_signature_list(name) ? " " : ", ";
    std::string joined;
    for (auto same = first; same != last; ++same) {
      if (!joined.empty()) joined.append(separator);
      joined.append(same->value());
    }
    json::append_string(out, joined);
  }
  out.push_back('}');
  return out;
}

WebhookEndpoint::WebhookEndpoint(store::InboxWriter& writer, std::shared_ptr<const signature::Verifier> verifier,
                                 WebhookOptions options)
    : writer_(writer), options_(options), verifier_(std::move(verifier)) {
  const int64_t now_ms = unix_now_ms();
  stats_.last_verified_ms.store(now_ms, std::memory_order_relaxed);
  stats_.team_ids = options_.teams;
  stats_.team_last_verified_ms = std::make_unique<std::atomic<int64_t>[]>(options_.teams.size());
  for (size_t i = 0; i < options_.teams.size(); ++i) stats_.team_last_verified_ms[i].store(now_ms);
}

void WebhookEndpoint::note_team(const std::optional<std::string>& team_id, int64_t received_at_ms) {
  if (!team_id) return;
  for (size_t i = 0; i < stats_.team_ids.size(); ++i) {
    // Either case: the configured ids are lower case, a delivery might write capitals.
    if (same_uuid(stats_.team_ids[i], *team_id)) {
      stats_.team_last_verified_ms[i].store(received_at_ms, std::memory_order_relaxed);
    }
  }
}

void WebhookEndpoint::set_verifier(std::shared_ptr<const signature::Verifier> verifier) {
  std::lock_guard lock(verifier_mutex_);
  verifier_ = std::move(verifier);
}

std::shared_ptr<const signature::Verifier> WebhookEndpoint::verifier() const {
  std::lock_guard lock(verifier_mutex_);
  return verifier_;
}

void WebhookEndpoint::mount(Router& router, const std::string& path) {
  router.add(
      bhttp::verb::post, path, [this](Request& request) { return handle(request); },
      [this](const RequestHead& head) { return check_head(head); });
}

Response WebhookEndpoint::unauthorized(signature::Verdict verdict) {
  stats_.signature_failures.fetch_add(1, std::memory_order_relaxed);
  if (options_.refusals) options_.refusals->count(refusal_for(verdict));
  return error_response(Status::unauthorized, signature::verdict_reason(verdict));
}

Response WebhookEndpoint::unavailable(std::string_view reason) {
  stats_.unavailable.fetch_add(1, std::memory_order_relaxed);
  Response response = error_response(Status::service_unavailable, reason);
  response.set(bhttp::field::retry_after, std::to_string(options_.retry_after_seconds));
  return response;
}

std::optional<Response> WebhookEndpoint::check_head(const RequestHead& head) {
  const signature::SignatureHeaderSet headers = signature_headers_of(head);
  signature::Verdict verdict = headers.ambiguity();
  if (verdict == signature::Verdict::ok) verdict = verifier()->check_headers(headers.pick(), unix_now_ms() / 1000);
  if (verdict == signature::Verdict::ok) return std::nullopt;
  return unauthorized(verdict);
}

net::awaitable<Response> WebhookEndpoint::handle(Request& request) {
  const auto deadline = std::chrono::steady_clock::now() + options_.request_deadline;
  const int64_t received_at = unix_now_ms();
  const signature::SignatureHeaderSet signed_headers = signature_headers_of(request);
  const signature::SignedHeaders headers = signed_headers.pick();
  signature::Verdict verdict = signed_headers.ambiguity();
  if (verdict == signature::Verdict::ok) verdict = verifier()->verify(headers, request.body(), received_at / 1000);
  if (verdict != signature::Verdict::ok) co_return unauthorized(verdict);
  stats_.last_verified_ms.store(received_at, std::memory_order_relaxed);

  store::NewDelivery delivery;
  delivery.message_id = std::string(headers.id);
  delivery.received_at_ms = received_at;
  delivery.webhook_timestamp = std::stoll(std::string(headers.timestamp));  // verified integer
  events::EnvelopePeek peeked = events::peek_envelope(request.body(), !stats_.team_ids.empty());
  note_team(peeked.team_id, received_at);
  delivery.event_type = std::move(peeked.event_type);
  delivery.headers_json = headers_as_json(request);
  delivery.body = std::move(request.body());

  const SubmitResult result = co_await submit_and_wait(writer_, std::move(delivery), deadline);
  using Admission = store::InboxWriter::Admission;
  switch (result.admission) {
    case Admission::queued: break;
    case Admission::over_high_water:
      // Logged in the refusals summary, not one line each (a burst makes thousands).
      if (options_.refusals) options_.refusals->count(Refusal::queue_full);
      co_return unavailable("inbox queue is full; retry later");
    case Admission::disk_low: co_return unavailable("disk nearly full; retry later");
    case Admission::stopped: co_return unavailable("shutting down; retry later");
  }
  if (!result.outcome) co_return unavailable("inbox commit not done within request_deadline_ms; retry later");
  const auto& outcome = *result.outcome;
  std::string body;
  switch (outcome.kind) {
    case store::AppendOutcome::Kind::stored:
      stats_.stored.fetch_add(1, std::memory_order_relaxed);
      json::ObjectWriter(body).string("status", "stored").integer("seq", outcome.seq).close();
      co_return json_response(Status::ok, std::move(body));
    case store::AppendOutcome::Kind::duplicate:
      stats_.duplicates.fetch_add(1, std::memory_order_relaxed);
      // One line per duplicate at log_level = "debug" (docs/operations.md): the service
      // retrying what was stored, a replay sent twice.
      log::debug("delivery_duplicate").str("message_id", headers.id).num("seq", outcome.seq);
      json::ObjectWriter(body).string("status", "duplicate").integer("seq", outcome.seq).close();
      co_return json_response(Status::ok, std::move(body));
    case store::AppendOutcome::Kind::too_large:
      stats_.too_large.fetch_add(1, std::memory_order_relaxed);
      co_return error_response(Status::payload_too_large, "delivery too large for the store");
    case store::AppendOutcome::Kind::unavailable: break;
  }
  co_return unavailable("inbox cannot commit; retry later");
}

}  // namespace hh::http
