#include "receiver/http/webhook_endpoint.h"

#include <chrono>
#include <algorithm>

#include "common/json_writer.h"
#include "common/log.h"
#include "receiver/events/envelope_peek.h"
#include "receiver/http/async_submit.h"

namespace hh::http {
namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string_view header_value(const Request& request, std::string_view name) {
  auto it = request.find(name);
  return it == request.end() ? std::string_view() : std::string_view(it->value());
}

}  // namespace

signature::SignedHeaders signed_headers(const Request& request) {
  signature::SignedHeaders svix{header_value(request, "svix-id"), header_value(request, "svix-timestamp"),
                                header_value(request, "svix-signature")};
  if (!svix.id.empty() || !svix.timestamp.empty() || !svix.signature.empty()) return svix;
  return {header_value(request, "webhook-id"), header_value(request, "webhook-timestamp"),
          header_value(request, "webhook-signature")};
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
    std::string joined;
    for (auto same = first; same != last; ++same) {
      if (!joined.empty()) joined.append(", ");
      joined.append(same->value());
    }
    json::append_string(out, joined);
  }
  out.push_back('}');
  return out;
}

WebhookEndpoint::WebhookEndpoint(store::InboxWriter& writer, std::shared_ptr<const signature::Verifier> verifier,
                                 int64_t retry_after_seconds)
    : writer_(writer), retry_after_seconds_(retry_after_seconds), verifier_(std::move(verifier)) {}

void WebhookEndpoint::set_verifier(std::shared_ptr<const signature::Verifier> verifier) {
  std::lock_guard lock(verifier_mutex_);
  verifier_ = std::move(verifier);
}

std::shared_ptr<const signature::Verifier> WebhookEndpoint::verifier() const {
  std::lock_guard lock(verifier_mutex_);
  return verifier_;
}

Response WebhookEndpoint::unavailable(std::string_view reason) {
  stats_.unavailable.fetch_add(1, std::memory_order_relaxed);
  Response response = error_response(Status::service_unavailable, reason);
  response.set(bhttp::field::retry_after, std::to_string(retry_after_seconds_));
  return response;
}

net::awaitable<Response> WebhookEndpoint::handle(Request& request) {
  const int64_t received_at = now_ms();
  const signature::SignedHeaders headers = signed_headers(request);
  const auto verdict = verifier()->verify(headers, request.body(), received_at / 1000);
  if (verdict != signature::Verdict::ok) {
    stats_.signature_failures.fetch_add(1, std::memory_order_relaxed);
    const auto reason = signature::verdict_reason(verdict);
    log::warn("signature_rejected").str("reason", reason).str("message_id", headers.id.substr(0, 256));
    co_return error_response(Status::unauthorized, reason);
  }

  store::NewDelivery delivery;
  delivery.message_id = std::string(headers.id);
  delivery.received_at_ms = received_at;
  delivery.webhook_timestamp = std::stoll(std::string(headers.timestamp));  // verified integer
  delivery.event_type = events::peek_event_type(request.body());
  delivery.headers_json = headers_as_json(request);
  delivery.body = std::move(request.body());

  const std::string message_id = delivery.message_id;
  const SubmitResult result = co_await async_submit(writer_, std::move(delivery), net::use_awaitable);
  using Admission = store::InboxWriter::Admission;
  switch (result.admission) {
    case Admission::queued: break;
    case Admission::over_high_water: co_return unavailable("inbox queue is full; retry later");
    case Admission::disk_low: co_return unavailable("disk nearly full; retry later");
    case Admission::stopped: co_return unavailable("shutting down; retry later");
  }
  const auto& outcome = result.outcome;
  std::string body;
  switch (outcome.kind) {
    case store::AppendOutcome::Kind::stored:
      stats_.stored.fetch_add(1, std::memory_order_relaxed);
      json::ObjectWriter(body).string("status", "stored").integer("seq", outcome.seq).close();
      co_return json_response(Status::ok, std::move(body));
    case store::AppendOutcome::Kind::duplicate:
      stats_.duplicates.fetch_add(1, std::memory_order_relaxed);
      log::debug("duplicate_delivery").str("message_id", message_id).num("seq", outcome.seq);
      json::ObjectWriter(body).string("status", "duplicate").integer("seq", outcome.seq).close();
      co_return json_response(Status::ok, std::move(body));
    case store::AppendOutcome::Kind::unavailable:
      co_return unavailable("inbox cannot commit; retry later");
  }
  co_return unavailable("inbox cannot commit; retry later");
}

}  // namespace hh::http
