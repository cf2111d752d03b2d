#include "receiver/fetcher/resource_kinds.h"

#include <array>

namespace hh::fetcher {

BackfillSource backfill_source(std::string_view resource) {
  static constexpr std::array<std::string_view, 9> kSummaries = {
      "activity", "sleep", "sleep_cycle", "workouts", "body", "meal", "menstrual_cycle", "electrocardiogram",
      "profile"};
  if (resource == "workout_stream") return BackfillSource::workouts_for_streams;
  for (const std::string_view summary : kSummaries) {
    if (resource == summary) return BackfillSource::summaries;
  }
  return BackfillSource::timeseries;
}

}  // namespace hh::fetcher
