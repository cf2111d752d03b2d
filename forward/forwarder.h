#pragma once
// Push forwarding in `serve` (spec §10): one thread of its own with an io_context, running
// a DestinationSender per [[forward]] block, and every few seconds a look at the outbox's
// figures (the metrics' gauges) and the disk budget (max_outbox_mib).
//
// Why a thread of its own: a down or slow backend must never slow ingest or processing.
// The writer thread only adds outbox rows inside its own commits; everything else here
// (reads of the outbox and the rows, the HTTP requests, the outbox updates on a
// connection of its own) runs on this thread, at nice 19 and, while ingest is busy on a
// machine without a core to spare, within a share of one core (cpu_share.h).
//
// The disk budget, max_outbox_mib, bounds everything the outbox keeps of a destination
// (outbox_budget.h): entries, pending or dead, and the ranges that record what was
// dropped. Past the budget the oldest entries (dead or pending, never those of a POST in
// flight) are dropped: deleted, and recorded as seq ranges with a count (store/outbox.h
// drop_oldest()), counted and logged; the oldest ranges are merged before they take more
// than their share. A backend gone for good must not fill the disk that ingest needs, and
// ingest (acks to the service) comes first; the change feed and the inbox still hold what
// was dropped, and `forward requeue --dropped` makes the entries again from them. A large
// drop goes a step (one short transaction) at a time, a step every kBudgetStepInterval.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "config/secrets.h"
#include "config/settings.h"
#include "forward/forward_metrics.h"

namespace hh::forward {

class DestinationSender;

class Forwarder {
 public:
  using Clock = std::function<int64_t()>;  // Unix ms

  // A count that grows while deliveries are being stored (the writer's commits).
  using IngestProgress = std::function<uint64_t()>;

  // One sender per settings.forwards entry (with secrets.forward_secrets in the same
  // order). Opens its own store handles (the database must exist: `serve` created it).
  // With `ingest`: while it has grown within kIngestQuiet and the rest of the machine
  // leaves fewer than kSpareCores idle, the thread takes at most kShareWhileIngesting of a
  // core (cpu_share.h).
  // Error kind `data`: a destination's settings cannot be used (URL, CA file, secret).
  static Result<std::unique_ptr<Forwarder>> create(const config::Settings& settings, const config::Secrets& secrets,
                                                   Clock now_ms, IngestProgress ingest = {});
  // Sockets the destinations of `settings` may hold open at once: each its `concurrency`
  // and up to DestinationSender::kMaxBesideSlow more beside POSTs gone unanswered.
  static uint64_t sockets_at_most(const config::Settings& settings);
  static constexpr double kShareWhileIngesting = 0.15;
  static constexpr std::chrono::milliseconds kIngestQuiet{250};
  static constexpr double kSpareCores = 1.0;
  ~Forwarder();
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  void start();
  // Cancels what is in flight (those entries go out again after a restart) and joins.
  void stop();

  // How long the thread has slept leaving the CPU to ingest (cpu_share.h); any thread.
  double yielded_seconds() const;
  // One per destination, in settings order; read by /metrics from any thread.
  const std::vector<std::unique_ptr<DestinationMetrics>>& metrics() const { return metrics_; }

 private:
  struct Parts;
  explicit Forwarder(std::unique_ptr<Parts> parts);
  // Updates the gauges and keeps each destination within its budget; true when one is
  // still over it (check again soon).
  bool check_outbox();

  std::unique_ptr<Parts> parts_;
  std::vector<std::unique_ptr<DestinationMetrics>> metrics_;
  std::thread thread_;
  bool started_ = false;
};

}  // namespace hh::forward
