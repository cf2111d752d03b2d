#pragma once
// `[retention] body_days` in `serve` (spec §11): removes the bodies of applied deliveries
// older than the retention, as background work of the writer thread (store/
// background_work.h), between ingest commits, one small batch per call.
//
// Pace: while old bodies are left, a batch per call (the writer calls again soon); then the
// freed space goes back to the file system a slice per call; then it looks again a minute
// later. The batches walk in seq order and stop at the first body too new; deliveries
// received earlier than their seq suggests (an offline replay of an old capture, a clock
// set back) are found by the late sweep (BodyRetention::remove_late_bodies): a pass over
// the received_at index, a step per call, at the first look and then once an hour. The log gets one `bodies_removed` line for the first round after start, then at
// most one per ten minutes with what was removed since (steady traffic would otherwise
// log every minute). A failed batch (e.g. a busy database) is logged and tried again at the
// next look: nothing of it was written.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "store/background_work.h"
#include "store/body_retention.h"

namespace hh::processor {

struct BodyRetentionStats {
  std::atomic<uint64_t> bodies_removed{0};
  std::atomic<uint64_t> bytes_removed{0};
};

class BodyRetentionWork final : public store::BackgroundWork {
 public:
  using Clock = std::function<int64_t()>;  // Unix ms
  static constexpr int64_t kDeliveriesPerBatch = 256;
  static constexpr int64_t kVacuumBytesPerCall = 8 * 1024 * 1024;
  static constexpr int64_t kCheckEveryMs = 60'000;
  static constexpr int64_t kLogEveryMs = 600'000;
  static constexpr int64_t kLateRowsPerStep = 10'000;  // index entries: a few ms a step
  static constexpr int64_t kLateSweepEveryMs = 3'600'000;

  BodyRetentionWork(std::unique_ptr<store::BodyRetention> retention, int64_t body_days, Clock now_ms);

  bool run_once(int64_t durable_seq) override;
  const BodyRetentionStats& stats() const { return stats_; }

 private:
  bool remove_batch(int64_t now);
  bool sweep_late(int64_t now);
  bool end_round(int64_t now);
  bool give_space_back(int64_t now);
  void count(const store::RemovedBodies& removed);

  std::unique_ptr<store::BodyRetention> retention_;
  int64_t keep_ms_;
  Clock now_ms_;
  int64_t next_check_ms_ = 0;
  bool vacuuming_ = false;
  int64_t round_deliveries_ = 0;  // removed since the last look found nothing
  int64_t next_late_sweep_ms_ = 0;
  std::optional<store::LateCursor> late_after_;  // the late sweep's next step; none: no sweep under way
  int64_t unlogged_deliveries_ = 0, unlogged_bytes_ = 0;  // removed since the last log line
  std::optional<int64_t> logged_at_ms_;
  BodyRetentionStats stats_;
};

}  // namespace hh::processor
