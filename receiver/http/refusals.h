#pragma once
// What the listener refused, and why: one counter per reason, shared by the accept loop,
// the sessions and the webhook endpoint. Refusals are what an attacker can make as many of
// as it likes, so they are never logged one line each: RefusalLog writes one summary
// line per interval with the counts since the last one (none when nothing was refused),
// and /metrics shows the totals as healthhook_refusals_total{reason} (metrics/ingest_metrics.h).
//
// Thread-safe (relaxed atomics: counters, not synchronisation).
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#include "receiver/http/http_types.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::http {

enum class Refusal {
  signature_missing,    // 401: no complete svix-*/webhook-* set
  signature_malformed,  // 401: id, timestamp or signature header unreadable
  signature_timestamp,  // 401: timestamp outside the tolerance
  signature_mismatch,   // 401: no entry matches any secret
  body_too_large,       // 413
  headers_too_large,    // 431
  bad_request,          // 400: malformed request, Transfer-Encoding not exactly chunked
  body_budget,          // 503: the in-flight body budget stayed full
  unproven_share,       // 503: an address not yet proven by a signed delivery held its share of the budget (connection_table.h)
  connection_limit,     // closed at accept: max_connections reached, none to make room
  evicted_idle,         // closed to make room when connections ran out (connection_table.h says which)
  per_ip_limit,         // closed at accept: max_connections_per_ip reached
  per_ip_waiting_limit, // closed at accept: slots scarce, the client's 8 connections that have sent nothing all mid-head (connection_table.h)
  accept_failed,        // accept() failed, e.g. out of file descriptors (accepting pauses)
  client_timeout,       // a client too slow to send its request head or body: closed
  console_sign_in,      // 401: a console sign-in with a wrong token (console/console_routes.h)
  request_too_large,    // 413 to a request that is no delivery (console, read API): not a delivery's
  unauthorized,         // 401: a read API, /metrics or console request without the right token or session
  queue_full,           // 503: a signed delivery while the inbox queue is above queue_high_water (or its bytes)
  count_                // number of reasons
};

std::string_view refusal_name(Refusal reason);
// The 401 reason for a signature verdict (not for Verdict::ok).
Refusal refusal_for(signature::Verdict verdict);

class Refusals {
 public:
  void count(Refusal reason) { counts_[index(reason)].fetch_add(1, std::memory_order_relaxed); }
  uint64_t total(Refusal reason) const { return counts_[index(reason)].load(std::memory_order_relaxed); }

  using Snapshot = std::array<uint64_t, static_cast<size_t>(Refusal::count_)>;
  Snapshot snapshot() const;

 private:
  static size_t index(Refusal reason) { return static_cast<size_t>(reason); }
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Refusal::count_)> counts_{};
};

// Logs {"event":"refusals","interval_s":…,"<reason>":n,…} every `interval` in which
// something was refused; flush() writes what is left (at stop).
class RefusalLog {
 public:
  RefusalLog(net::io_context& io, const Refusals& refusals, std::chrono::seconds interval);
  void start();
  void stop();   // cancels the timer and flushes; on the io thread
  void flush();  // logs what was refused since the last line, if anything

 private:
  net::awaitable<void> run();

  net::steady_timer timer_;
  const Refusals& refusals_;
  const std::chrono::seconds interval_;
  Refusals::Snapshot logged_{};
  bool stopped_ = false;
};

}  // namespace hh::http
