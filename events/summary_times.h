#pragma once
// The period a summary covers, read from the resource's own time fields (spec §4:
// summaries.start_ms/end_ms). Best effort: a field that is absent or not an ISO 8601
// time gives null, never an invalid delivery.
//
//   start: bedtime_start (sleep), time_start (workouts), session_start (sleep_cycle,
//          electrocardiogram), period_start (menstrual_cycle), timestamp (meal),
//          date (activity, body: start of day), calendar_date (start of day, last resort)
//   end:   bedtime_stop, time_end, session_end, period_end
// Each summary type carries only its own fields, so one priority list serves all, and a
// resource added later gets its times without a code change when it reuses these names.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hh::events {

class SummaryTimes {
 public:
  // Remembers `value` when `key` is one of the time fields; false when it is not.
  bool offer(std::string_view key, std::optional<std::string_view> value);
  // True when `key` is one of the time fields.
  static bool is_time_field(std::string_view key) { return slot_of(key) >= 0; }

  std::optional<int64_t> start_ms() const;
  std::optional<int64_t> end_ms() const;

 private:
  static int slot_of(std::string_view key);
  std::array<std::optional<std::string_view>, 11> values_;
};

}  // namespace hh::events
