#include "fetcher/resource_kinds.h"

#include <array>

namespace hh::fetcher {

BackfillSource backfill_source(std::string_view resource) {
  static constexpr std::array<std::string_view, 9> kSummaries = {
      "activity", "sleep", "sleep_cycle", "workouts", "body", "meal", "menstrual_cycle", "electrocardiogram",
      "profile"};
  if (resource == "workout_stream") return BackfillSource::workouts_for_streams;
  if (resource == "profile") return BackfillSource::single_summary;
  for (const std::string_view summary : kSummaries) {
    if (resource == summary) return BackfillSource::summaries;
  }
  return BackfillSource::timeseries;
}

std::string_view summary_items_key(std::string_view resource) { return resource == "meal" ? "meals" : resource; }

}  // namespace hh::fetcher
