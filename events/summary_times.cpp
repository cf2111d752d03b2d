#include "events/summary_times.h"

#include "common/timestamp.h"

namespace hh::events {
namespace {

// Slots 0..6 are start candidates in priority order, 7..10 end candidates.
constexpr std::array<std::string_view, 11> kTimeFields = {
    "bedtime_start", "time_start", "session_start", "period_start", "timestamp", "date", "calendar_date",
    "bedtime_stop",  "time_end",   "session_end",   "period_end"};
constexpr int kFirstEnd = 7;

}  // namespace

int SummaryTimes::slot_of(std::string_view key) {
  for (int i = 0; i < static_cast<int>(kTimeFields.size()); ++i) {
    if (kTimeFields[i] == key) return i;
  }
  return -1;
}

bool SummaryTimes::offer(std::string_view key, std::optional<std::string_view> value) {
  const int slot = slot_of(key);
  if (slot < 0) return false;
  values_[slot] = value;
  return true;
}

std::optional<int64_t> SummaryTimes::start_ms() const {
  for (int i = 0; i < kFirstEnd; ++i) {
    if (!values_[i]) continue;
    if (auto ms = parse_iso8601_ms(*values_[i])) return ms;
  }
  return std::nullopt;
}

std::optional<int64_t> SummaryTimes::end_ms() const {
  for (int i = kFirstEnd; i < static_cast<int>(values_.size()); ++i) {
    if (!values_[i]) continue;
    if (auto ms = parse_iso8601_ms(*values_[i])) return ms;
  }
  return std::nullopt;
}

}  // namespace hh::events
