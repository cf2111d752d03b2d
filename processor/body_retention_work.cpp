#include "processor/body_retention_work.h"

#include <cstdint>

#include "common/log.h"

namespace hh::processor {

BodyRetentionWork::BodyRetentionWork(std::unique_ptr<store::BodyRetention> retention, int64_t body_days,
                                     Clock now_ms)
    : retention_(std::move(retention)), keep_ms_(body_days * 86'400'000), now_ms_(std::move(now_ms)) {}

bool BodyRetentionWork::run_once(int64_t /*durable_seq: only applied deliveries are touched*/) {
  const int64_t now = now_ms_();
  if (now < next_check_ms_) return false;
  return vacuuming_ ? give_space_back(now) : remove_batch(now);
}

bool BodyRetentionWork::remove_batch(int64_t now) {
  if (late_after_) return sweep_late(now);
  auto removed = retention_->remove_bodies(now - keep_ms_, kDeliveriesPerBatch, now);
  if (!removed) {
    log::warn("body_retention_failed").str("error", removed.error());
    next_check_ms_ = now + kCheckEveryMs;
    return false;
  }
  count(*removed);
  if (removed->more) return true;
  if (now >= next_late_sweep_ms_) {  // the walk is done for now: look for late ones behind it
    late_after_ = store::LateCursor{};
    next_late_sweep_ms_ = now + kLateSweepEveryMs;
    return true;
  }
  return end_round(now);
}

bool BodyRetentionWork::sweep_late(int64_t now) {
  auto swept = retention_->remove_late_bodies(now - keep_ms_, *late_after_, kLateRowsPerStep, now);
  if (!swept) {
    log::warn("body_retention_failed").str("error", swept.error());
    late_after_.reset();  // the next sweep starts over, in an hour
    next_check_ms_ = now + kCheckEveryMs;
    return false;
  }
  count(swept->removed);
  if (!swept->done) {
    late_after_ = swept->next;
    return true;
  }
  late_after_.reset();
  return end_round(now);
}

void BodyRetentionWork::count(const store::RemovedBodies& removed) {
  stats_.bodies_removed.fetch_add(static_cast<uint64_t>(removed.deliveries), std::memory_order_relaxed);
  stats_.bytes_removed.fetch_add(static_cast<uint64_t>(removed.bytes), std::memory_order_relaxed);
  round_deliveries_ += removed.deliveries;
  unlogged_deliveries_ += removed.deliveries;
  unlogged_bytes_ += removed.bytes;
}

// Nothing more to remove now: log what this round removed, give the space back, or, when
// it removed nothing, look again in a minute.
bool BodyRetentionWork::end_round(int64_t now) {
  if (round_deliveries_ == 0) {
    next_check_ms_ = now + kCheckEveryMs;
    return false;
  }
  round_deliveries_ = 0;
  if (!logged_at_ms_ || now - *logged_at_ms_ >= kLogEveryMs) {
    log::info("bodies_removed").num("deliveries", unlogged_deliveries_).num("bytes", unlogged_bytes_);
    unlogged_deliveries_ = unlogged_bytes_ = 0;
    logged_at_ms_ = now;
  }
  vacuuming_ = true;
  return true;
}

bool BodyRetentionWork::give_space_back(int64_t now) {
  auto left = retention_->give_space_back(kVacuumBytesPerCall);
  if (left && *left) return true;
  if (!left) log::warn("body_retention_vacuum_failed").str("error", left.error());
  vacuuming_ = false;
  next_check_ms_ = now + kCheckEveryMs;
  return false;
}

}  // namespace hh::processor
