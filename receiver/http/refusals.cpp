#include "receiver/http/refusals.h"

#include "common/log.h"

namespace hh::http {

std::string_view refusal_name(Refusal reason) {
  switch (reason) {
    case Refusal::signature_missing: return "signature_missing";
    case Refusal::signature_malformed: return "signature_malformed";
    case Refusal::signature_timestamp: return "signature_timestamp";
    case Refusal::signature_mismatch: return "signature_mismatch";
    case Refusal::body_too_large: return "body_too_large";
    case Refusal::headers_too_large: return "headers_too_large";
    case Refusal::bad_request: return "bad_request";
    case Refusal::body_budget: return "body_budget";
    case Refusal::unproven_share: return "unproven_share";
    case Refusal::connection_limit: return "connection_limit";
    case Refusal::evicted_idle: return "evicted_idle";
    case Refusal::per_ip_limit: return "per_ip_limit";
    case Refusal::per_ip_waiting_limit: return "per_ip_waiting_limit";
    case Refusal::accept_failed: return "accept_failed";
    case Refusal::client_timeout: return "client_timeout";
    case Refusal::console_sign_in: return "console_sign_in";
    case Refusal::request_too_large: return "request_too_large";
    case Refusal::unauthorized: return "unauthorized";
    case Refusal::queue_full: return "queue_full";
    case Refusal::count_: break;
  }
  return "unknown";
}

Refusal refusal_for(signature::Verdict verdict) {
  using signature::Verdict;
  switch (verdict) {
    case Verdict::missing_headers: return Refusal::signature_missing;
    case Verdict::timestamp_too_old:
    case Verdict::timestamp_in_future: return Refusal::signature_timestamp;
    case Verdict::no_matching_signature: return Refusal::signature_mismatch;
    case Verdict::ok:
    case Verdict::malformed_id:
    case Verdict::malformed_timestamp:
    case Verdict::malformed_signature: break;
  }
  return Refusal::signature_malformed;
}

Refusals::Snapshot Refusals::snapshot() const {
  Snapshot out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

RefusalLog::RefusalLog(net::io_context& io, const Refusals& refusals, std::chrono::seconds interval)
    : timer_(io), refusals_(refusals), interval_(interval), logged_(refusals.snapshot()) {}

void RefusalLog::start() { net::co_spawn(timer_.get_executor(), run(), net::detached); }

void RefusalLog::stop() {
  if (stopped_) return;
  stopped_ = true;
  timer_.cancel();
  flush();
}

net::awaitable<void> RefusalLog::run() {
  while (!stopped_) {
    timer_.expires_after(interval_);
    auto [ec] = co_await timer_.async_wait(use_tuple);
    if (ec || stopped_) co_return;
    flush();
  }
}

void RefusalLog::flush() {
  const Refusals::Snapshot now = refusals_.snapshot();
  if (now == logged_) return;
  auto line = log::warn("refusals");
  line.num("interval_s", interval_.count());
  for (size_t i = 0; i < now.size(); ++i) {
    if (now[i] != logged_[i]) line.num(refusal_name(static_cast<Refusal>(i)), static_cast<int64_t>(now[i] - logged_[i]));
  }
  logged_ = now;
}

}  // namespace hh::http
